#!/bin/sh
# The tutorial-style kernel file (tests/tutorial/README.md) without a GPU:
# it parses (constants, compatible reference, host headers), enumerates,
# compiles every variant with --compile-only (nvcc: NVRTC cannot take it),
# and the files emitted from its committed H200 database build with nvcc from
# a moved copy, with only -I <kernel dir> -I <output dir>.
# Usage: tutorial.sh AOTC REPO_ROOT
aotc=$1
root=$2
here=$root/tests/tutorial
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"
check() {
	if [ "$2" -eq "$3" ]; then ok "$1"; else bad "$1" "exit $2, expected $3" "$(tail -8 "$tmp/log")"; fi
}
nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "no nvcc: skipping"; exit 77; }

"$aotc" parse "$here/sgemm_tutorial.cu" >"$tmp/ir.json" 2>"$tmp/log"
check "parse" $? 0
why=$(python3 - "$tmp/ir.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
ks = {k["name"]: k for k in m["kernels"]}
errs = []
if list(ks) != ["sgemm_2d"]:
    errs.append(f"kernels {list(ks)}, expected only sgemm_2d (the reference is not tuned)")
else:
    k = ks["sgemm_2d"]
    if (k.get("reference") or {}).get("name") != "sgemm_naive":
        errs.append(f"reference {k.get('reference')}")
    text = json.dumps(m)
    if "NUM_THREADS" not in text or "256" not in text:
        errs.append("the constant NUM_THREADS = 256 is not recorded")
print("; ".join(errs))
PY
)
[ -z "$why" ] && ok "parse: the kernel, its reference and NUM_THREADS" || bad "parse: the kernel, its reference and NUM_THREADS" "$why"

# configs from the IR just parsed (as from the file, without a second parse)
"$aotc" configs "$tmp/ir.json" >"$tmp/configs" 2>"$tmp/log"
check "configs" $? 0
# BM, BN in {32, 64, 128}, TM, TN in {4, 8}, (BM/TM)(BN/TN) = 256, BK in {8, 16, 32}.
want=$(python3 -c '
n = sum(1 for bm in (32, 64, 128) for bn in (32, 64, 128) for bk in (8, 16, 32)
        for tm in (4, 8) for tn in (4, 8)
        if (bm // tm) * (bn // tn) == 256 and bk * (bm + bn) * 4 <= 48 * 1024)
print(n)')
got=$(grep -c '^sgemm_2d<' "$tmp/configs")
[ "$got" = "$want" ] && ok "configs: $want configurations" || bad "configs: $want configurations" "got $got"

"$aotc" tune "$here/sgemm_tutorial.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
check "compile-only" $? 0
grep -q "^sgemm_2d: $want of $want configurations compiled for sm90 with nvcc .*reference compiled" "$tmp/log" \
	&& ok "compile-only: every variant and the reference, with nvcc" \
	|| bad "compile-only: every variant and the reference, with nvcc" "$(tail -5 "$tmp/log")"
grep -q "cannot compile .*sgemm_tutorial.cu (error: cannot open source file" "$tmp/log" \
	&& ok "compile-only: says why NVRTC cannot take the file" \
	|| bad "compile-only: says why NVRTC cannot take the file" "$(head -5 "$tmp/log")"

# Emit from the committed database, move the output and the kernel, build.
"$aotc" emit "$here/sgemm_tutorial.cu" --arch sm90 --db "$here" -o "$tmp/gen" >"$tmp/log" 2>&1
check "emit from the committed H200 database" $? 0
mkdir -p "$tmp/elsewhere/kernels" "$tmp/elsewhere/out"
cp "$here/sgemm_tutorial.cu" "$tmp/elsewhere/kernels/"
cp "$tmp"/gen/* "$tmp/elsewhere/out/"
(cd "$tmp/elsewhere" && "$nvcc" -std=c++17 -arch=sm_90 -Ikernels -Iout -c out/_aot_sgemm_2d_cuda_sm90.cu \
	-o cu.o) >"$tmp/log" 2>&1
check "the emitted .cu builds from a moved copy" $? 0
(cd "$tmp/elsewhere" && cc -std=c99 -Wall -Wextra -Werror -pedantic -Iout -c out/_aot_sgemm_2d_cuda_sm90.c \
	-o c.o) >"$tmp/log" 2>&1
check "the emitted .c builds" $? 0

finish
