# Targets mirror CI: `make ci` = lint + test.
.PHONY: build run test lint fmt bench quality corpora peers ci

CARGO ?= cargo
DIR ?= .

build:
	$(CARGO) build --release

run:
	$(CARGO) run --release -- $(DIR)

test:
	$(CARGO) test

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

corpora:
	bash bench/fetch-corpora.sh

peers:
	bash bench/fetch-peers.sh

bench: corpora peers
	$(CARGO) build --release --bins --examples
	$(CARGO) run --release --example bench

quality: corpora
	$(CARGO) build --release --bins --examples
	$(CARGO) run --release --example quality

ci: lint test
