#!/bin/sh
# The emitted files (docs/spec.md §8) against reviewed golden copies, and their
# determinism: the same database always gives byte-identical files.
# Usage: emit-golden.sh AOTC REPO_ROOT
# AOTC_UPDATE=1 rewrites the goldens from what aotc emits now (review the
# diff before committing it).
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
golden=$root/tests/codegen/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../lib.sh"

# The provenance comment names the source relative to the repository root
# and the launcher includes it by file name, so the goldens hold no path of
# this machine wherever this runs from (emit-standalone.sh checks other
# working directories).
cd "$root" || exit 1

# emit DIR SOURCE ARCH DB: emits into DIR (created); output in DIR.log.
emit() {
	mkdir -p "$1"
	"$aotc" emit "$2" --arch "$3" --db "$4" -o "$1" >"$1.log" 2>&1
}

# kernel NAME SOURCE ARCH DB TAG EXT: emits twice and checks the three files
# and the manifest (_aot_K_TAG.json, which aotc link reads).
kernel() {
	name=$1 src=$2 arch=$3 db=$4 tag=$5 ext=$6
	base=_aot_${name}_$tag
	for d in a b; do
		if ! emit "$tmp/$d/$name" "$src" "$arch" "$db"; then
			bad "$name: aotc emit into $d exits 0" "$(tail -5 "$tmp/$d/$name.log")"
			return
		fi
	done
	ok "$name: aotc emit exits 0"
	for e in c h "$ext" json; do
		f=$base.$e
		if [ ! -f "$tmp/a/$name/$f" ]; then
			bad "$name: $f emitted"
			continue
		fi
		# Two emissions into sibling dirs: same relative include, so
		# every byte must match.
		if cmp -s "$tmp/a/$name/$f" "$tmp/b/$name/$f"; then
			ok "$f: deterministic"
		else
			bad "$f: deterministic" "$(diff "$tmp/a/$name/$f" "$tmp/b/$name/$f" | head -10)"
		fi
		cp "$tmp/a/$name/$f" "$tmp/$f"
		if [ "${AOTC_UPDATE:-0}" = 1 ]; then
			mkdir -p "$golden"
			cp "$tmp/$f" "$golden/$f"
			ok "$f: golden updated"
		elif [ ! -f "$golden/$f" ]; then
			bad "$f: golden exists" "no $golden/$f (run with AOTC_UPDATE=1 to create it)"
		elif diff -u "$golden/$f" "$tmp/$f" >"$tmp/diff"; then
			ok "$f: matches golden"
		else
			bad "$f: matches golden" "$(head -40 "$tmp/diff")"
		fi
	done
	# The kernel source by its file name, found through the include path.
	if grep -q "^#include \"$(basename "$src")\"\$" "$tmp/$base.$ext"; then
		ok "$base.$ext: includes the kernel source"
	else
		bad "$base.$ext: includes the kernel source" "$(grep '^#include' "$tmp/a/$name/$base.$ext")"
	fi
}

kernel sgemm templates/sgemm.cu sm90 templates cuda_sm90 cu
kernel softmax templates/softmax.cu sm90 templates cuda_sm90 cu
kernel matmul_host templates/matmul_host.cpp host tests/codegen host cpp

finish
