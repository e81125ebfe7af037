#!/usr/bin/env bash
# Fetches the pinned corpora of the clone-injection quality benchmark
# (examples/quality.rs) into .corpora/ at the repository root.
#
# Positive corpora (indexed by the server, functions sampled from them):
#   lodash  npm lodash@4.17.21                 JavaScript
#   rxjs    npm rxjs@7.8.1, its src/ only      TypeScript
#   django  PyPI django==5.1.4 (the wheel)     Python
#   tokio   crates.io tokio 1.40.0             Rust
# Negative corpora (never indexed; none of their functions should match),
# each a folder of packages, together big enough for 200 sampled functions:
#   neg-js  npm underscore@1.13.7
#   neg-ts  npm @trpc/server@10.45.2, @trpc/client@10.45.2 and
#           @tanstack/query-core@5.59.0, their src/ only
#   neg-py  PyPI requests==2.32.3 and urllib3==2.2.3
#   neg-rs  crates.io serde_json 1.0.128
# .corpora/all/ holds copies of the four positive corpora side by side: it is
# the folder the benchmark serves.
#
# Idempotent: a corpus folder that exists is kept as it is. Each corpus is
# unpacked beside its final place and renamed when complete, so an
# interrupted run leaves nothing half-made. Needs npm, python3 -m pip, curl,
# tar and unzip; reaches only the npm registry, PyPI and crates.io.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.corpora"
mkdir -p "$dest/all"
work="$(mktemp -d "$dest/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# install NAME SOURCE_DIR: moves SOURCE_DIR to .corpora/NAME.
install() {
    mkdir -p "$(dirname "$dest/$1")"
    rm -rf "$dest/$1.partial"
    mv "$2" "$dest/$1.partial"
    mv "$dest/$1.partial" "$dest/$1"
    echo "fetched $1"
}

# npm_corpus NAME SPEC [SUBDIR]: the npm package SPEC, or only its SUBDIR.
npm_corpus() {
    local name=$1 spec=$2 subdir=${3:-}
    [[ -d "$dest/$name" ]] && return
    local dir="$work/${name//\//-}"
    mkdir -p "$dir"
    local tarball
    tarball="$(cd "$dir" && npm pack --silent "$spec" 2>/dev/null | tail -n 1)"
    if [[ ! -f "$dir/$tarball" ]]; then
        echo "fetch-corpora: npm pack $spec failed" >&2
        exit 1
    fi
    tar -xzf "$dir/$tarball" -C "$dir"
    install "$name" "$dir/package${subdir:+/$subdir}"
}

# pypi_corpus NAME SPEC: the unpacked wheel of the PyPI package SPEC.
pypi_corpus() {
    local name=$1 spec=$2
    [[ -d "$dest/$name" ]] && return
    local dir="$work/${name//\//-}"
    mkdir -p "$dir/wheel" "$dir/tree"
    python3 -m pip download --quiet --no-deps --only-binary=:all: "$spec" -d "$dir/wheel"
    unzip -q "$dir"/wheel/*.whl -d "$dir/tree"
    install "$name" "$dir/tree"
}

# crate_corpus NAME CRATE VERSION: the crate's source, from cargo's cache
# when it is there, from crates.io otherwise.
crate_corpus() {
    local name=$1 crate=$2 version=$3
    [[ -d "$dest/$name" ]] && return
    local dir="$work/${name//\//-}" file="$crate-$version.crate"
    mkdir -p "$dir"
    local cached
    cached="$(find "${CARGO_HOME:-$HOME/.cargo}/registry/cache" -name "$file" 2>/dev/null | head -n 1 || true)"
    if [[ -n "$cached" ]]; then
        cp "$cached" "$dir/$file"
    else
        curl -sSfL -o "$dir/$file" "https://static.crates.io/crates/$crate/$file"
    fi
    tar -xzf "$dir/$file" -C "$dir"
    install "$name" "$dir/$crate-$version"
}

npm_corpus lodash lodash@4.17.21
npm_corpus rxjs rxjs@7.8.1 src
pypi_corpus django django==5.1.4
crate_corpus tokio tokio 1.40.0

npm_corpus neg-js/underscore underscore@1.13.7
npm_corpus neg-ts/trpc-server @trpc/server@10.45.2 src
npm_corpus neg-ts/trpc-client @trpc/client@10.45.2 src
npm_corpus neg-ts/query-core @tanstack/query-core@5.59.0 src
pypi_corpus neg-py/requests requests==2.32.3
pypi_corpus neg-py/urllib3 urllib3==2.2.3
crate_corpus neg-rs/serde_json serde_json 1.0.128

for name in lodash rxjs django tokio; do
    if [[ ! -d "$dest/all/$name" ]]; then
        cp -R "$dest/$name" "$work/all-$name"
        mv "$work/all-$name" "$dest/all/$name"
    fi
done
echo "corpora ready in $dest"
