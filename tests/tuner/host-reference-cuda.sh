#!/bin/sh
# A host AOTC_REFERENCE for a CUDA kernel without a GPU (docs/annotations.md, "A host
# reference"): `aotc tune --compile-only` builds the variants and, with nvcc, the host
# function into a shared object in the compile cache; that shared object, called through
# its entry point exactly as the worker calls it (one 8-byte slot per parameter, pointers
# as host addresses), computes the truth on this machine. What the worker then does with
# it on a GPU is tests/device/host-reference-h200.sh.
# Usage: host-reference-cuda.sh AOTC REPO_ROOT
aotc=$1
root=$2
src=$root/tests/tuner/host_reference.cu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"
has() { # NAME PATTERN: the log has a line matching PATTERN
	if grep -q -- "$2" "$tmp/log"; then ok "$1"; else bad "$1" "no line matching '$2'" "$(tail -8 "$tmp/log")"; fi
}

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
	echo "no CUDA toolkit: skipping"
	exit 77
fi

"$aotc" parse "$src" >"$tmp/ir.json" 2>"$tmp/log" &&
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["kernels"][0]["reference"]; sys.exit(0 if r["host"] is True and r["grid"] is None else 1)' "$tmp/ir.json" &&
	ok "parse: the IR marks the reference as a host function" ||
	bad "parse: reference.host" "$(cat "$tmp/log")"

"$aotc" tune "$src" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
st=$?
[ $st = 0 ] && ok "compile-only: exit 0" || bad "compile-only: exit $st" "$(tail -8 "$tmp/log")"
has "compile-only: the variants and the reference" "^matmul: 6 of 6 configurations compiled for sm90 .*; reference compiled$"
so=
for sym in "$tmp"/cache/*.sym; do
	if [ "$(cat "$sym")" = aotc_entry ]; then so=${sym%.sym}.bin; fi
done
if [ -n "$so" ] && od -An -c -N4 "$so" | grep -q 'E   L   F'; then
	ok "cache: the host reference is a shared object with entry aotc_entry"
else
	bad "cache: no shared object with aotc_entry" "$(ls "$tmp/cache")"
fi
if command -v readelf >/dev/null && [ -n "$so" ]; then
	readelf --dyn-syms "$so" >"$tmp/log" 2>&1
	has "the shared object exports its entry point" "FUNC.*GLOBAL.*aotc_entry"
fi

# Called as the worker calls it: M, N, K in slots, then A, B, C by address; C is inout.
if [ -n "$so" ] && command -v python3 >/dev/null; then
	if python3 - "$so" >"$tmp/log" 2>&1 <<'END'
import ctypes, random, sys
lib = ctypes.CDLL(sys.argv[1])
M, N, K = 5, 7, 3
rnd = random.Random(1)
A = (ctypes.c_float * (M * K))(*[rnd.uniform(-1, 1) for _ in range(M * K)])
B = (ctypes.c_float * (K * N))(*[rnd.uniform(-1, 1) for _ in range(K * N)])
C = (ctypes.c_float * (M * N))(*[0.5] * (M * N))
slots = (ctypes.c_uint64 * 6)(M, N, K, ctypes.addressof(A), ctypes.addressof(B), ctypes.addressof(C))
args = (ctypes.c_void_p * 6)(*[ctypes.addressof(slots) + 8 * i for i in range(6)])
lib.aotc_entry(args)
want = [0.5 + sum(A[i * K + k] * B[k * N + j] for k in range(K)) for i in range(M) for j in range(N)]
err = max(abs(C[i] - want[i]) for i in range(M * N))
print("max error", err)
sys.exit(0 if err < 1e-5 else 1)
END
	then
		ok "the host reference computes C += A * B when called through aotc_entry"
	else
		bad "calling the host reference" "$(cat "$tmp/log")"
	fi
fi

before=$(ls -i "$so" 2>/dev/null)
"$aotc" tune "$src" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
has "rerun: the variants from the cache" "(6 from cache)"
# A compile would have replaced the file (a new inode).
[ -n "$so" ] && [ "$(ls -i "$so")" = "$before" ] && [ "$(ls "$tmp"/cache/*.bin | wc -l)" -eq 7 ] &&
	ok "rerun: the reference from the cache too" || bad "rerun: the reference was compiled again" "$(ls -i "$tmp/cache")"

finish
