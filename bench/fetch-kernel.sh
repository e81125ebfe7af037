#!/usr/bin/env bash
# Fetches the Linux kernel 6.12 source tree that `make bench-scale`
# (bench/src/scale/) serves at growing sizes, into .corpora/linux-6.12/
# (git-ignored), with the package's version in .corpora/linux-6.12.version.
#
# The tree is Debian's linux-source-6.12 (bookworm-security; the version is
# whatever apt's candidate is, about 150 MB to download, 1.5 GB unpacked):
# the binary package is unpacked with dpkg-deb -x and its tarball untarred.
# Debian appends two lines to the tree's top .gitignore, `/*` and
# `!/debian/`, which ignore everything but debian/ (its packaging keeps the
# tree in a repository of its own): they are deleted, since dupcheck honours
# .gitignore and would otherwise scan nothing.
#
# Uses the system's apt lists (apt-get update first when they do not know
# the package: needs root). Idempotent: an existing .corpora/linux-6.12 is
# kept as it is; the tree is unpacked beside it and renamed when complete,
# so an interrupted run leaves nothing half-made. Reaches only the Debian
# archive apt is configured with.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.corpora/linux-6.12"
package=linux-source-6.12
if [[ -d "$dest" ]]; then
    exit 0
fi
mkdir -p "$root/.corpora"
work="$(mktemp -d "$root/.corpora/.fetch-kernel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if ! apt-cache show "$package" >/dev/null 2>&1; then
    echo "fetch-kernel: apt does not know $package yet: apt-get update" >&2
    apt-get update -qq
fi
# As root, apt warns that the download is unsandboxed (user _apt cannot
# write the temporary folder): harmless.
(cd "$work" && apt-get download -qq "$package")
deb=("$work"/"$package"_*.deb)
version="$(dpkg-deb -f "${deb[0]}" Version)"
echo "fetch-kernel: unpacking $package $version" >&2
dpkg-deb -x "${deb[0]}" "$work/deb"
rm -f "${deb[0]}"
tar -xJf "$work/deb/usr/src/$package.tar.xz" -C "$work"
rm -rf "$work/deb"
tree="$work/$package"
if [[ ! -f "$tree/Makefile" ]]; then
    echo "fetch-kernel: $package.tar.xz holds no $package/ tree" >&2
    exit 1
fi
# Exactly Debian's two lines, wherever they are: the kernel's own patterns
# stay.
sed -i -e '/^\/\*$/d' -e '/^!\/debian\/$/d' "$tree/.gitignore"
echo "$package $version" >"$dest.version"
mv "$tree" "$dest"
echo "fetch-kernel: $dest ready ($package $version)" >&2
