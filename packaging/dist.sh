#!/usr/bin/env bash
# Packages one dupcheck binary for the ways it is installed (docs/install.md):
#
#   packaging/dist.sh [--maturin-profile PROFILE] BINARY OUT_DIR
#
# writes into OUT_DIR
#   dupcheck-VERSION-py3-none-manylinux_2_N_x86_64.whl   pip, pipx, uvx
#   dupcheck-VERSION.tgz                                  npm: the launcher
#   dupcheck-linux-x64-gnu-VERSION.tgz                    npm: @dupcheck/linux-x64-gnu
#   dupcheck-VERSION-x86_64-unknown-linux-gnu.tar.gz      the binary, README.md, LICENSE
#
# VERSION is Cargo.toml's; the npm packages (npm/) are staged with it. The
# wheel's manylinux tag is the newest glibc symbol version BINARY needs
# (objdump -T): the oldest glibc it runs on. With --maturin-profile, maturin
# builds the wheel (`maturin build --profile PROFILE`), reusing cargo's build
# of that profile, which the caller has just made (`make dist`); without
# it the wheel is BINARY with the metadata maturin writes
# (packaging/wheel.py), as the tests do with a stripped debug build.
#
# maturin comes from $MATURIN, or else from target/dist-venv, made here
# from packaging/requirements.txt.
set -euo pipefail

profile=""
if [ "${1:-}" = "--maturin-profile" ]; then
  profile=$2
  shift 2
fi
if [ $# -ne 2 ]; then
  echo "usage: packaging/dist.sh [--maturin-profile PROFILE] BINARY OUT_DIR" >&2
  exit 2
fi
binary=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
cd "$(dirname "$0")/.."
root=$PWD

if ! objdump -f "$binary" | grep -q 'elf64-x86-64'; then
  echo "dist.sh: $binary is not an x86-64 ELF binary: only x86_64 Linux (glibc) is packaged" >&2
  exit 1
fi

version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["package"]["version"])')
glibc=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -1)
tag="manylinux_${glibc//./_}_x86_64"
echo "dist.sh: dupcheck $version, needs glibc $glibc: $tag" >&2

if [ -z "${MATURIN:-}" ]; then
  venv=target/dist-venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  if ! cmp -s packaging/requirements.txt "$venv/.requirements.txt"; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r packaging/requirements.txt
    cp packaging/requirements.txt "$venv/.requirements.txt"
  fi
  MATURIN=$root/$venv/bin/maturin
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# The wheel.
rm -f "$out"/dupcheck-*.whl
if [ -n "$profile" ]; then
  "$MATURIN" build --profile "$profile" --compatibility "${tag%_x86_64}" --out "$out" >&2
  # The wheel must ship the very binary the other packages ship.
  python3 - "$out/dupcheck-$version-py3-none-$tag.whl" "dupcheck-$version.data/scripts/dupcheck" "$binary" <<'PY'
import sys, zipfile
wheel, member, binary = sys.argv[1:]
packed = zipfile.ZipFile(wheel).read(member)
if packed != open(binary, "rb").read():
    sys.exit(f"dist.sh: the wheel's binary is not {binary}: maturin built another")
PY
else
  "$MATURIN" pep517 write-dist-info --metadata-directory "$stage/meta" >/dev/null
  python3 packaging/wheel.py "$binary" "$stage/meta/dupcheck-$version.dist-info" "$tag" "$out" >/dev/null
fi

# The npm packages, versions set to Cargo.toml's.
cp -r npm/dupcheck npm/linux-x64-gnu "$stage/"
cp README.md LICENSE "$stage/dupcheck/"
cp LICENSE "$stage/linux-x64-gnu/"
mkdir -p "$stage/linux-x64-gnu/bin"
install -m 755 "$binary" "$stage/linux-x64-gnu/bin/dupcheck"
node - "$stage" "$version" "$glibc" <<'JS'
const fs = require("node:fs");
const [stage, version, glibc] = process.argv.slice(2);
const edit = (file, change) => {
  const manifest = JSON.parse(fs.readFileSync(file, "utf8"));
  change(manifest);
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2) + "\n");
};
edit(`${stage}/dupcheck/package.json`, (m) => {
  m.version = version;
  for (const name of Object.keys(m.optionalDependencies)) m.optionalDependencies[name] = version;
});
edit(`${stage}/linux-x64-gnu/package.json`, (m) => {
  m.version = version;
  m.description = m.description.replace(/glibc [0-9.]+ or later/, `glibc ${glibc} or later`);
});
JS
rm -f "$out"/dupcheck-"$version".tgz "$out"/dupcheck-linux-x64-gnu-"$version".tgz
for package in dupcheck linux-x64-gnu; do
  (cd "$stage/$package" && npm pack --silent --pack-destination "$out" >/dev/null)
done

# The tarball.
name=dupcheck-$version-x86_64-unknown-linux-gnu
mkdir "$stage/$name"
install -m 755 "$binary" "$stage/$name/dupcheck"
cp README.md LICENSE "$stage/$name/"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"

ls -l "$out"/dupcheck-*.whl "$out"/dupcheck-"$version".tgz \
  "$out"/dupcheck-linux-x64-gnu-"$version".tgz "$out/$name.tar.gz" >&2
