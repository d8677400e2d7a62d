#!/bin/sh
# The Debian package, built and used as a user would: `git archive HEAD`
# (committed files only, as a release tarball has them) unpacked in a
# temporary directory, built with dpkg-buildpackage (debian/: a release
# build, assertions off), its contents listed, installed into this machine
# (apt-get, root), then tests/integration/install.sh run against the
# installed /usr instead of a staged `meson install`: the files, the man
# page's SEE ALSO, pkg-config, and the downstream CMake and meson projects
# built against the package. Needs root and debhelper (tools/setup.sh).
# Usage: tools/deb-check.sh   (from anywhere; tools/test.sh runs it)
set -eu
cd "$(dirname "$0")/.."
root=$(pwd -P)
if ! git -C "$root" rev-parse --show-toplevel >/dev/null 2>&1; then
	echo "deb-check: $root is not a git checkout: skipped"
	exit 0
fi
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n "s/^  version: '\(.*\)',$/\1/p" meson.build)
src=$tmp/aotc-$version
mkdir "$src"
git archive --format=tar HEAD | tar -x -C "$src"
echo "deb-check: HEAD ($(git rev-parse --short HEAD)) unpacked in $src"
if ! (cd "$src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=$(nproc)" dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log"
	echo "FAIL deb: dpkg-buildpackage"
	exit 1
fi
deb=$(ls "$tmp"/aotc_"$version"_*.deb)
echo "PASS deb: built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/contents"
fail=0
for f in ./usr/bin/aotc ./usr/include/aotc.h ./usr/share/man/man1/aotc.1.gz ./usr/share/doc/aotc/copyright \
	./usr/share/doc/aotc/LICENSE ./usr/share/doc/aotc/cli.md; do
	grep -qx "$f" "$tmp/contents" || { echo "FAIL deb: no $f in the package"; fail=1; }
done
grep -q '/aotc\.pc$' "$tmp/contents" && grep -q '/cmake/aotc/aotcConfig\.cmake$' "$tmp/contents" ||
	{ echo "FAIL deb: no pkg-config file or CMake package"; fail=1; }
[ $fail = 0 ] && echo "PASS deb: the program, header, pkg-config file, CMake package, man page and docs"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "FAIL deb: apt-get install"; exit 1; }
echo "PASS deb: installed ($(/usr/bin/aotc --version | head -1))"
# The same checks as a staged install, on the package's /usr.
AOTC_INSTALLED=/usr sh tests/integration/install.sh "$root/build/aotc" "$root" || fail=1
exit $fail
