#!/usr/bin/env bash
# Installs the peers that `make bench` times beside dupcheck, pinned, into
# .bench-tools/ (git-ignored): jscpd 5.3.3 (its Rust engine binary is run
# directly), jscpd 4.3.0 (node), and jscpd-rs (cargo), which also ships a
# `jscpd-server` binary. Idempotent. Reaches only npm and crates.io.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.bench-tools"
mkdir -p "$tools"

npm_tool() {
    local dir="$tools/$1" spec=$2
    [[ -d "$dir/node_modules" ]] && return
    mkdir -p "$dir"
    (cd "$dir" && npm install --silent --no-audit --no-fund "$spec" >/dev/null)
    echo "installed $spec"
}

npm_tool jscpd5 jscpd@5.3.3
npm_tool jscpd4 jscpd@4.3.0
if [[ ! -x "$tools/jscpd-rs/bin/jscpd-server" ]]; then
    cargo install --quiet --locked --root "$tools/jscpd-rs" jscpd-rs
    echo "installed jscpd-rs"
fi
