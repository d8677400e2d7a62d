#!/bin/sh
# Emitted files must not depend on where the repository lives or on its
# being a git checkout (codegen/text.h, source_name). Unpacks `git archive
# HEAD` (committed files only, as a release tarball has them) into a
# temporary directory, builds aotc there, runs the suites that would catch a
# path or a repository root leaking into output, and checks that softmax
# emitted from the tarball is byte for byte what the checkout emits, with
# the same aotc and the same command. The tarball's build is unoptimised
# (buildtype debug: it compiles in half the time, and its emits must still
# be the goldens' bytes, made by the optimised build). About a minute on 2
# cores.
# Skipped, with a message, when this tree is not a git checkout (run from a
# tarball already). Run from anywhere; tools/test.sh runs it.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd -P)
top=$(git rev-parse --show-toplevel 2>/dev/null || true)
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$root" ]; then
	echo "tarball-check: $root is not a git checkout (a tarball already?): skipped"
	exit 0
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "tarball-check: note: uncommitted changes are not in the tarball (git archive HEAD)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/aotc"
git archive --format=tar HEAD | tar -x -C "$tmp/aotc"
echo "tarball-check: HEAD ($(git rev-parse --short HEAD)) unpacked in $tmp/aotc"
cd "$tmp/aotc"
meson setup build-tarball -Dbuildtype=debug >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
meson compile -C build-tarball aotc
# emit-golden: the goldens' bytes; emit-standalone: the same bytes from
# other working directories and paths; docs-demo: README's demo.
meson test -C build-tarball --no-rebuild --print-errorlogs --timeout-multiplier 3 emit-golden emit-standalone docs-demo

# The same command from each tree's root, with the tarball's aotc.
aotc=$tmp/aotc/build-tarball/aotc
(cd "$root" && "$aotc" emit templates/softmax.cu --arch sm90 --db templates -o "$tmp/from-checkout" >/dev/null)
(cd "$tmp/aotc" && "$aotc" emit templates/softmax.cu --arch sm90 --db templates -o "$tmp/from-tarball" >/dev/null)
fail=0
for f in "$tmp/from-checkout"/*; do
	name=$(basename "$f")
	if cmp "$f" "$tmp/from-tarball/$name"; then
		echo "PASS softmax $name: the tarball emits the checkout's bytes"
	else
		echo "FAIL softmax $name: the tarball emits other bytes than the checkout"
		diff "$f" "$tmp/from-tarball/$name" | head -10
		fail=1
	fi
done
[ "$(ls "$tmp/from-checkout" | wc -l)" -gt 0 ] && [ "$(ls "$tmp/from-checkout")" = "$(ls "$tmp/from-tarball")" ] ||
	{ echo "FAIL softmax: the two emits wrote different files"; fail=1; }
exit "$fail"
