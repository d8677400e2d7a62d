#!/bin/sh
# AOTC_EXTERN for CUDA without a GPU: `aotc tune --compile-only` builds a
# cuBLAS routine's caller with nvcc into a shared object linked with
# -lcublas and the CUDA runtime (docs/annotations.md), beside the variants,
# into the compile cache a tune on the GPU reuses.
# Usage: extern-cuda.sh AOTC REPO_ROOT
aotc=$1
root=$2
here=$root/tests/tuner
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"
check() {
	if [ "$2" -eq "$3" ]; then ok "$1"; else bad "$1" "exit $2, expected $3" "$(tail -8 "$tmp/log")"; fi
}
has() { # NAME PATTERN: the log has a line matching PATTERN
	if grep -q -- "$2" "$tmp/log"; then ok "$1"; else bad "$1" "no line matching '$2'" "$(tail -8 "$tmp/log")"; fi
}

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
	echo "no CUDA toolkit: skipping"
	exit 77
fi

"$aotc" tune "$here/extern_cublas.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
check "compile-only: exit 0" $? 0
has "compile-only: the variants" "^saxpy: 3 of 3 configurations compiled for sm90"
has "compile-only: the extern" "; externs: 1 of 1 compiled$"
so=
for sym in "$tmp"/cache/*.sym; do
	if [ "$(cat "$sym")" = aotc_extern_entry ]; then so=${sym%.sym}.bin; fi
done
if [ -n "$so" ] && od -An -c -N4 "$so" | grep -q 'E   L   F'; then
	ok "cache: the extern's caller is a shared object"
else
	bad "cache: no shared object with aotc_extern_entry" "$(ls "$tmp/cache")"
fi
if command -v readelf >/dev/null && [ -n "$so" ]; then
	readelf -d "$so" >"$tmp/log" 2>&1
	has "the caller links cuBLAS" "NEEDED.*libcublas"
	has "the caller links the CUDA runtime" "NEEDED.*libcudart"
	readelf --dyn-syms "$so" >"$tmp/log" 2>&1
	has "the caller exports its entry point" "FUNC.*GLOBAL.*aotc_extern_entry"
fi

"$aotc" tune "$here/extern_cublas.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
has "rerun: all from the cache" "(4 from cache)"

finish
