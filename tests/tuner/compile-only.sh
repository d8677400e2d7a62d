#!/bin/sh
# aotc tune --compile-only (docs/spec.md §3) on this machine, which needs no GPU:
# per-variant failures and the "N of M" line; exit 0 / 1 (reference) / 4
# (no variant); the compile cache a later tune reuses. And `aotc compile`'s
# failure path: only "no device of that architecture" re-emits from the
# database; another environment error exits 3 and is told once.
# Usage: compile-only.sh AOTC REPO_ROOT
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

"$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
check "compile-only: exit 0 with one variant failing" $? 0
has "compile-only: the count line" "^scale: 3 of 4 configurations compiled for sm90 with nvrtc"
has "compile-only: the failing variant named" "scale<128, 3>: compile_error"
has "compile-only: its log shown" "TILE 128 cannot unroll 3"
has "compile-only: the reference compiled" "reference compiled"

"$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
has "compile-only: a rerun takes the cache, the failure too" "(4 from cache)"
has "compile-only: the remembered failure is still told, with its log" "TILE 128 cannot unroll 3"

# --shard I/N: the split tune --shard measures; the parts add up to the whole.
AOTC_CACHE_DIR="$tmp/shards" "$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only --shard 1/2 >"$tmp/log" 2>&1
has "compile-only --shard 1/2: says which part" "; shard 1/2 of 4 configurations$"
a=$(sed -n 's/^scale: [0-9]* of \([0-9]*\) configurations.*shard 1\/2.*/\1/p' "$tmp/log")
AOTC_CACHE_DIR="$tmp/shards" "$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only --shard 2/2 >"$tmp/log" 2>&1
b=$(sed -n 's/^scale: [0-9]* of \([0-9]*\) configurations.*shard 2\/2.*/\1/p' "$tmp/log")
# each shard also takes the 2 anchors every shard measures (tuner/schedule.h)
if [ -n "$a" ] && [ -n "$b" ] && [ $((a + b)) -eq 6 ] && [ "$a" -gt 2 ] && [ "$b" -gt 2 ]; then
	ok "compile-only --shard: 1/2 and 2/2 take $a and $b of the 4 (2 anchors in each)"
else
	bad "compile-only --shard: the parts" "1/2: '$a', 2/2: '$b'" "$(cat "$tmp/log")"
fi
AOTC_CACHE_DIR="$tmp/shards" "$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only >"$tmp/log" 2>&1
has "compile-only --shard: the whole run then finds every part in the cache" "(4 from cache)"

# Batches (nvcc, one thread): the four variants in one compiler run; the run
# holding the failing one is split until it is alone, and the others compile.
# The same run is the nvcc path's exit status and count line (a variant
# failing is not an error: exit 0).
AOTC_CUDA_COMPILER=nvcc AOTC_CACHE_DIR="$tmp/nvcc" "$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only -j 1 \
	>"$tmp/log" 2>&1
check "compile-only with nvcc: exit 0" $? 0
has "compile-only with nvcc: the count line" "^scale: 3 of 4 configurations compiled for sm90 with nvcc"
has "nvcc, batched: 3 of 4 compile, the failing one found" "^scale: 3 of 4 configurations compiled for sm90 with nvcc"
has "nvcc, batched: the failing variant's own log" "TILE 128 cannot unroll 3"
has "nvcc, batched: runs of several variants, split to find the failing one" "compiler runs\{0,1\} of several variants (up to 16 a run; [1-9][0-9]* split"

# ptxas refusing a tile of static shared memory: resources, remembered
AOTC_CACHE_DIR="$tmp/smem" "$aotc" tune "$here/static_smem.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
has "static shared memory beyond the limit: resources" "stage<256>: resources"
has "static shared memory: the amount and the limit" "65536 bytes of static shared memory, the limit is 49152"
AOTC_CACHE_DIR="$tmp/smem" "$aotc" tune "$here/static_smem.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
has "static shared memory: a rerun takes the failure from the cache" "(3 from cache)"
has "static shared memory: still resources" "stage<256>: resources"

"$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only -DBREAK_REFERENCE -j 2 >"$tmp/log" 2>&1
check "compile-only: a reference that does not compile exits 1" $? 1
has "compile-only: the reference's error at AOTC_REFERENCE" "compile_only.cu:[0-9]*:[0-9]*: error: the reference 'scale_ref' does not compile"
if ! grep -q "configurations compiled" "$tmp/log"; then
	ok "compile-only: with the reference failing, nothing else is compiled"
else
	bad "compile-only: work after the reference failed" "$(tail -4 "$tmp/log")"
fi

# Without a reference, a file nvcc cannot compile at all (a header only
# nvcc looks for): one diagnostic from the file alone, no variant compiled.
{ printf '#ifdef __NVCC__\n#include "no_such_header.h"\n#endif\n'
  sed '/^AOTC_REFERENCE/d; /^AOTC_GRID(cdiv(n, 256))$/d; /^AOTC_BLOCK(256)$/d' "$here/compile_only.cu"; } >"$tmp/broken.cu"
AOTC_CUDA_COMPILER=nvcc AOTC_CACHE_DIR="$tmp/broken" "$aotc" tune "$tmp/broken.cu" --arch sm90 --compile-only -j 2 \
	>"$tmp/log" 2>&1
check "a file that does not compile, no reference: exit 1" $? 1
has "a file that does not compile: told once, with the compiler's error" "broken.cu does not compile (no variant was compiled)"
n=$(ls "$tmp/broken" 2>/dev/null | wc -l)
if [ "$n" -eq 0 ] && [ "$(grep -c ': error: ' "$tmp/log")" -eq 1 ]; then
	ok "a file that does not compile: nothing else compiled (empty cache)"
else
	bad "a file that does not compile: work after the error" "$n cache files" "$(tail -4 "$tmp/log")"
fi

"$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only -DBREAK_ALL -j 2 >"$tmp/log" 2>&1
check "compile-only: no variant compiles: exit 4" $? 4
has "compile-only: 0 of 4" "^scale: 0 of 4 configurations compiled"

AOTC_CUDA_COMPILER=clang "$aotc" tune "$here/compile_only.cu" --arch sm90 --compile-only >"$tmp/log" 2>&1
check "a bad AOTC_CUDA_COMPILER is an environment error" $? 3

"$aotc" emit "$here/compile_only.cu" --arch sm90 --compile-only >"$tmp/log" 2>&1
check "--compile-only outside tune is a usage error" $? 2

# CCCL (include/cccl): the parser, NVRTC and nvcc all find it, as nvcc does.
# (Each compile of CCCL's headers takes seconds: cccl.cu has two variants,
# one on cooperative groups, one on CUB.) The parser is tune's own: a tune
# that compiles every variant has parsed the file (the one parse of it).
"$aotc" tune "$here/cccl.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
st=$?
if [ $st -eq 0 ] && ! grep -q ': error: ' "$tmp/log"; then ok "cccl: parses"; else bad "cccl: parses" "exit $st" "$(tail -8 "$tmp/log")"; fi
has "cccl: NVRTC compiles every variant" "^warp_sums: 2 of 2 configurations compiled for sm90 with nvrtc"
AOTC_CUDA_COMPILER=nvcc "$aotc" tune "$here/cccl.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
has "cccl: nvcc compiles every variant" "^warp_sums: 2 of 2 configurations compiled for sm90 with nvcc"

# compile: the host backend always has its device, so an unwritable
# database is another environment error: exit 3, said once, no emission.
mkdir -p "$tmp/ro" "$tmp/out"
touch "$tmp/ro/db"   # a file where the database directory should be
"$aotc" compile "$root/templates/matmul_host.cpp" --arch host --db "$tmp/ro/db" -o "$tmp/out" \
	--shapes "$here/small_shapes.json" >"$tmp/log" 2>&1
check "compile: an unwritable database exits 3" $? 3
n=$(grep -c "error:" "$tmp/log")
if [ "$n" -eq 1 ]; then ok "compile: the error is told once"; else bad "compile: the error is told once" "$n error lines" "$(cat "$tmp/log")"; fi
if [ -z "$(ls "$tmp/out")" ]; then ok "compile: nothing emitted"; else bad "compile: nothing emitted" "$(ls "$tmp/out")"; fi

# compile for a GPU this machine does not have: re-emit, saying so.
if ! ldconfig -p 2>/dev/null | grep -q libcuda.so.1; then
	"$aotc" compile "$root/templates/softmax.cu" --arch sm90 --db "$root/templates" -o "$tmp/out" >"$tmp/log" 2>&1
	check "compile without a GPU: re-emits from the database" $? 0
	has "compile without a GPU: says so" "no sm90 device here: emitting from the tuning database"
	n=$(grep -c "error" "$tmp/log")
	if [ "$n" -eq 0 ]; then ok "compile without a GPU: no error shown"; else bad "compile without a GPU: no error shown" "$(cat "$tmp/log")"; fi
fi

finish
