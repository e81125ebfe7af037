# Targets mirror CI: `make ci` = lint + test + fuzz-ci.
.PHONY: build dist run test test-slim lint fmt bench bench-scale bench-store quality corpora peers ci fuzz fuzz-smoke fuzz-ci fuzz-tool stress

CARGO ?= cargo
DIR ?= .

build:
	$(CARGO) build --release

# What is shipped (docs/install.md), in target/dist/: the `dist` profile's
# binary (Cargo.toml), built once, as a wheel (maturin, reusing that build),
# the npm launcher and its linux-x64-gnu package, and a tarball
# (packaging/dist.sh; tests/it/dist.rs runs it on the debug binary).
dist:
	$(CARGO) build --profile dist
	bash packaging/dist.sh --maturin-profile dist target/dist/dupcheck target/dist

run:
	$(CARGO) run --release -- $(DIR)

# tests/setup installs Neovim, Chromium and playwright-core when missing.
# The last step runs the quality harness's own unit tests (its variants'
# edits), outside the workspace's default member: about 5 s more.
test:
	bash tests/setup
	$(CARGO) test
	$(CARGO) test -p dupcheck-bench --bin quality

# The last step lints a five-language build (grammar features, ARCHITECTURE.md):
# about 20 s once the first has built the dependencies. Its tests run with
# `make test-slim` (not in CI).
SLIM_FEATURES = lang-c,lang-python,lang-javascript,lang-typescript,lang-go

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --all-targets --no-default-features --features $(SLIM_FEATURES) -- -D warnings

# The tests of the five-language build: what is not compiled in is skipped.
test-slim:
	bash tests/setup
	$(CARGO) test --no-default-features --features $(SLIM_FEATURES)

fmt:
	$(CARGO) fmt --all

corpora:
	bash bench/fetch-corpora.sh

peers:
	bash bench/fetch-peers.sh

# Speed and memory beside the peers (bench/src/bench/, one module per part):
# cold scans against the parse floor, warm start, checks, update, RSS
# (target/bench.json).
bench: corpora peers
	$(CARGO) build --release --workspace --bins
	$(CARGO) run --release -p dupcheck-bench --bin bench

# Growth with the codebase's size (bench/src/scale/): the Linux kernel at
# 1/8, 1/4, 1/2 and all of its tree (hard-linked into
# .corpora/linux-6.12-scale/): scan, clone detection, memory, checks, the
# other endpoints, a warm restart and jscpd 5 per fraction
# (target/bench-scale.json). SCALE_FLAGS passes options, e.g.
# `make bench-scale SCALE_FLAGS="--fractions 8,4 --quick --no-peer"`.
SCALE_FLAGS ?=
bench-scale:
	bash bench/fetch-kernel.sh
	$(CARGO) build --release --workspace --bins
	$(CARGO) run --release -p dupcheck-bench --bin scale -- $(SCALE_FLAGS)

# The store (issue 30, bench/src/store/): a PostgreSQL 15 of its own
# (/usr/lib/postgresql/15/bin, as nobody when root, fsync=off), the 14
# quality corpora published (lines/s after the scan), republishes, bytes
# per indexed line, and checks through the store against a local server
# over the same files: identical answers, latency, 16 connections, SQL
# statements a check (target/bench-store.json). STORE_FLAGS passes
# options, e.g. `make bench-store STORE_FLAGS="--quick"` or "--kernel".
STORE_FLAGS ?=
bench-store: corpora
	$(CARGO) build --release --bin dupcheck
	$(CARGO) build --release -p dupcheck-bench --bin store_bench
	target/release/store_bench $(STORE_FLAGS)

# Clone-injection quality of every language against its pinned corpora
# (bench/src/quality/): recall, exactness, false positives, scan / parse floor.
quality: corpora
	$(CARGO) build --release --workspace --bins
	$(CARGO) run --release -p dupcheck-bench --bin quality

ci: lint test fuzz-ci

# Fuzzing (cargo-fuzz, libFuzzer): `make fuzz-smoke` runs every target for
# FUZZ_SECONDS (30) each; `make fuzz FUZZ_SECONDS=3600` is the long run.
# cargo-fuzz needs nightly flags: RUSTC_BOOTSTRAP lets the stable
# toolchain take them.
FUZZ_TARGETS = snippet request cache
FUZZ_SECONDS ?= 30
FUZZ = RUSTC_BOOTSTRAP=1 cargo fuzz

fuzz-tool:
	command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked

fuzz: FUZZ_SECONDS = 3600
fuzz-smoke fuzz: fuzz-tool
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		mkdir -p corpus/$$t && \
		$(FUZZ) run -O $$t corpus/$$t $$(ls -d seeds/$$t 2>/dev/null) -- -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 || exit 1; \
	done

# CI's run: every target builds against today's engine and runs a fixed
# number of inputs from a fixed seed (the same inputs on every run; about
# 8 minutes on 2 cores, the build most of it), after the inputs of
# fuzz/seeds/TARGET (what fuzzing found once, kept so that every run
# tries it).
FUZZ_RUNS ?= 50000
fuzz-ci: fuzz-tool
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		mkdir -p corpus/$$t && \
		$(FUZZ) run -O $$t corpus/$$t $$(ls -d seeds/$$t 2>/dev/null) -- -seed=1 -runs=$(FUZZ_RUNS) -timeout=10 -print_final_stats=1 || exit 1; \
	done

# The stress run of issue 8 against a release build: load, slow clients,
# bad inputs, pathological snippets, disk churn; prints a table, fails on
# any crash, hang, non-JSON error, leak or difference.
stress:
	$(CARGO) build --release --workspace --bins
	$(CARGO) run --release -p dupcheck-bench --bin stress
