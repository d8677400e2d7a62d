#!/bin/bash
# Rehearses run-on-h200.sh on a machine without a GPU, from the repository
# root after `meson compile -C build` (a few minutes on 2 cores; not a
# meson test: building five drivers with nvcc takes a minute or more). It
# runs the script itself with AOTC_H200_REHEARSAL (the script's header says
# what that changes): the tune command lines read their options and shape
# files and stop at the device, aotc emits from made-up databases, every
# driver is built with nvcc against the emitted files, and the summary
# reads made-up driver output, printed by driver.h's own result() so that
# it is the drivers' format. One made-up shape fails its check and one is
# missing: the script must say so and exit 1. Then the summary alone on
# the same output without those two exits 0.
# Usage: tests/public/h200/rehearse.sh   (KEEP=1 keeps the temporary folder)
set -uo pipefail
here=tests/public/h200
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
export PATH=/usr/local/cuda/bin:$PATH
fails=0
ok() { echo "ok - $1"; }
bad() {
	echo "not ok - $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/  /'
	fails=$((fails + 1))
}

# Made-up driver output through driver.h's result(): for each shape line
# ("k=v ..."), times from a formula and the kernel's fixed labels.
cat >"$tmp/fake.cu" <<'END'
#include "driver.h"
#include <cstring>
int main(int argc, char **argv)
{
    const char *kernel = argv[1];
    char line[256];
    for (int i = 0; fgets(line, sizeof line, stdin); i++) {
        line[strcspn(line, "\n")] = 0;
        Fixed fixed;
        double aot = 0.01 * (i + 1);
        for (int l = 2; l < argc; l++)
            fixed.add(argv[l], aot * (1 + 0.1 * l) * (0.9 + 0.1 * ((i + l) % 5)), 0);
        bool fail = !strcmp(kernel, "gelu_forward_kernel2") && i == 3;
        result(kernel, line, "variant<64, 2>[BLOCK=8]", cudaSuccess, aot, fixed, fail ? 1.0 : 0.0, 1e-5);
    }
    return 0;
}
END
if nvcc -std=c++17 -I $here -o "$tmp/fake" "$tmp/fake.cu" >"$tmp/log" 2>&1; then
	ok "made-up RESULT lines through driver.h"
else
	bad "made-up RESULT lines through driver.h" "$(tail -5 "$tmp/log")"
fi
mkdir -p "$tmp/fake-out"
for k in gelu_forward_kernel2:bs32,bs64,bs128,bs256,bs512,bs1024 \
	layernorm_forward_kernel3:bs32,bs64,bs128,bs256,bs512,bs1024 rmsnorm_cub:t256 \
	MatrixMulCUDA:b32,b16 rowmax_kernel:bs32,bs64,bs128,bs256,bs512,bs1024; do
	kernel=${k%%:*}
	python3 -c 'import json,sys; [print(" ".join("%s=%s" % kv for kv in s.items())) for s in json.load(open(sys.argv[1]))]' \
		$here/shapes/$kernel.heldout.json >"$tmp/$kernel.shapes"
	# rowmax_kernel: the last shape missing, as if its driver had stopped
	[ $kernel = rowmax_kernel ] && sed -i '$d' "$tmp/$kernel.shapes"
	"$tmp/fake" $kernel $(echo "${k##*:}" | tr , ' ') <"$tmp/$kernel.shapes" >"$tmp/fake-out/$kernel.heldout.txt"
done

OUT=$tmp/out WORK=$tmp/work JOBS=2 AOTC_CACHE_DIR=$tmp/cache AOTC_H200_REHEARSAL=$tmp/fake-out \
	$here/run-on-h200.sh >"$tmp/run.txt" 2>&1
st=$?
log=$tmp/out/public-h200.txt
[ $st -eq 1 ] && ok "run-on-h200.sh exits 1 (a planted failure)" || bad "run-on-h200.sh exit status $st, expected 1" "$(tail -20 "$tmp/run.txt")"
cmp -s "$tmp/run.txt" "$log" && ok "everything it printed is in public-h200.txt" || bad "public-h200.txt differs from what it printed"
for k in gelu_forward_kernel2 layernorm_forward_kernel3 rmsnorm_cub MatrixMulCUDA rowmax_kernel; do
	grep -q "^aotc: emitted .*_aot_${k}_cuda_sm90" "$log" && ok "$k: emitted" || bad "$k: not emitted"
	grep -q "^$k: driver built" "$log" && ok "$k: driver built" || bad "$k: driver not built" "$(cat "$tmp/work/build-$k.log" 2>/dev/null | tail -20)"
	[ -f "$tmp/out/$k.cuda_made_up_sm90.json" ] && [ -f "$tmp/out/_aot_${k}_cuda_sm90.c" ] &&
		ok "$k: database and dispatch copied" || bad "$k: database or dispatch not in \$OUT"
	grep -q "^$k: tune exit status" "$log" && bad "$k: tune failed" "$(grep -B5 "^$k: tune exit status" "$log")" || ok "$k: tune stopped at the device"
done
grep -q "warning" "$tmp"/work/build-*.log && bad "nvcc warnings" "$(grep -h warning "$tmp"/work/build-*.log | head)" || ok "no nvcc warnings"
grep -q "^gelu_forward_kernel2: 10 of 10 held-out shapes run, 1 failed checks (launcher 1, fixed configurations 0), 0 shapes missing" "$log" &&
	ok "summary: the failed check" || bad "summary: the failed check" "$(grep -A3 '^gelu_forward_kernel2:' "$log")"
grep -q "^rowmax_kernel: 9 of 10 held-out shapes run, 0 failed checks .*, 1 shapes missing" "$log" &&
	ok "summary: the missing shape" || bad "summary: the missing shape" "$(grep -A3 '^rowmax_kernel:' "$log")"
grep -q "^all kernels: 50 held-out shapes, 2 failed or missing" "$log" && ok "summary: the total" || bad "summary: the total" "$(tail -3 "$log")"
grep -q "best single: bs32 " "$log" && ok "summary: the best single fixed configuration" || bad "summary: best single" "$(grep -A10 '^gelu_forward_kernel2:' "$log")"
python3 - "$tmp/out/summary.json" <<'END' && ok "summary.json: figures as computed by hand" || bad "summary.json"
import json, math, sys
s = {k["kernel"]: k for k in json.load(open(sys.argv[1]))}
m = s["MatrixMulCUDA"]
# b32 (label 2 of argv): 1.2 * (0.9 + 0.1 * ((i + 2) % 5)) times aot, shapes i = 0..9
r = [1.2 * (0.9 + 0.1 * ((i + 2) % 5)) for i in range(10)]
assert m["best_fixed"] == "b32", m["best_fixed"]
assert abs(m["fixed"]["b32"]["geomean_speedup"] - math.exp(sum(map(math.log, r)) / 10)) < 1e-3, m
assert abs(m["fixed"]["b32"]["worst_speedup"] - 1.08) < 1e-3, m
assert m["variants"] == {"variant<64, 2>[BLOCK=8]": 10}, m["variants"]
b = [min(1.2 * (0.9 + 0.1 * ((i + 2) % 5)), 1.3 * (0.9 + 0.1 * ((i + 3) % 5))) for i in range(10)]
assert abs(m["per_shape_best_fixed"]["geomean_speedup"] - math.exp(sum(map(math.log, b)) / 10)) < 1e-3, m
assert abs(m["per_shape_best_fixed"]["worst_speedup"] - min(b)) < 1e-3, m
END

# The summary alone, without the planted failure and the missing shape.
sed -i 's/aot_err=1.00e+00 fixed_err=0.00e+00 launch=cudaSuccess ok=0/aot_err=0.00e+00 fixed_err=0.00e+00 launch=cudaSuccess ok=1/' \
	"$tmp/out/gelu_forward_kernel2.heldout.txt"
python3 -c 'import json,sys; [print(" ".join("%s=%s" % kv for kv in s.items())) for s in json.load(open(sys.argv[1]))]' \
	$here/shapes/rowmax_kernel.heldout.json | tail -1 | "$tmp/fake" rowmax_kernel bs32 bs64 bs128 bs256 bs512 bs1024 \
	>>"$tmp/out/rowmax_kernel.heldout.txt"
args=
for k in gelu_forward_kernel2 layernorm_forward_kernel3 rmsnorm_cub MatrixMulCUDA rowmax_kernel; do
	args="$args $tmp/out/$k.heldout.txt $here/shapes/$k.heldout.json"
done
python3 $here/summary.py "$tmp/s.json" $args >"$tmp/log" 2>&1 && grep -q "^all kernels: 50 held-out shapes, 0 failed or missing" "$tmp/log" &&
	ok "summary.py exits 0 when every check passed" || bad "summary.py on passing results" "$(tail -5 "$tmp/log")"

# The shape lists are what make-shapes.py writes.
cp -r $here/shapes "$tmp/shapes-before"
python3 $here/make-shapes.py && diff -r "$tmp/shapes-before" $here/shapes >/dev/null &&
	ok "make-shapes.py writes the committed shape lists" || bad "make-shapes.py and shapes/ differ"
bash -n $here/run-on-h200.sh && ok "bash -n run-on-h200.sh" || bad "bash -n run-on-h200.sh"
echo "$fails failed"
[ $fails -eq 0 ]
