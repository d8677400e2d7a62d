#!/bin/bash
# The tutorial-style kernel file on the GPU machine, from the repository root,
# with the build of aotc made on Debian carried along (carry: ["build"]):
#
#   tests/tutorial/run-on-h200.sh
#
# 1. the file as its author builds it: nvcc + cuBLAS, its own main();
# 2. compile throughput of NVRTC against nvcc (softmax, --compile-only);
# 3. aotc tune on the training shapes (NVRTC cannot take the file: nvcc);
# 4. aotc eval on the held-out shapes (never in the training set);
# 5. emit, build tests/tutorial/h200-driver.cu against the emitted files, run
#    it on the held-out shapes: launcher vs the author's fixed configuration
#    vs cuBLAS, every result checked; then the launch-limit case.
# Everything lands in $OUT (default ./out): tutorial.txt, the databases.
# The shape files were made by the Python in tests/tutorial/README.md.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/tutorial.txt") 2>&1
here=tests/tutorial
k=$here/sgemm_tutorial.cu
db=/tmp/tut-db
gen=/tmp/tut-gen
rm -rf "$db" "$gen"
mkdir -p "$db"
export AOTC_CACHE_DIR=/tmp/aotc-cache

echo "== environment"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
nvcc --version | tail -1
nproc
. tools/device-libs.sh
build/aotc --version || exit 2

echo "== 1. the file as its author builds it"
nvcc -std=c++17 -arch=sm_90 -O2 -I runtime/include -o /tmp/tutorial "$k" -lcublas && /tmp/tutorial 1024

echo "== 2. compile throughput: softmax, 81 configurations, 16 threads, cold cache"
for c in nvrtc nvcc; do
	AOTC_CACHE_DIR=/tmp/cc-$c AOTC_CUDA_COMPILER=$c build/aotc tune templates/softmax.cu --arch sm90 --compile-only -j 16
done

echo "== 3. tune"
/usr/bin/time -f "wall %e s, max RSS %M KiB" \
	build/aotc tune "$k" --arch sm90 --db "$db" --shapes $here/sgemm_tutorial.shapes.json -j 16
cp "$db"/sgemm_2d.*.json "$OUT/"

echo "== 4. eval on held-out shapes"
build/aotc eval "$k" --arch sm90 --db "$db" --shapes $here/sgemm_tutorial.heldout.json -j 16
cp "$db"/eval/sgemm_2d.*.json "$OUT/sgemm_2d.heldout.json"

echo "== 5. emit, build the driver, run it"
build/aotc emit "$k" --arch sm90 --db "$db" -o "$gen" || exit 1
head -12 "$gen"/_aot_sgemm_2d_cuda_sm90.h
nvcc -std=c++17 -arch=sm_90 -O2 -DSGEMM_TUTORIAL_NO_MAIN -I $here -I "$gen" -o /tmp/driver \
	$here/h200-driver.cu "$gen"/_aot_sgemm_2d_cuda_sm90.c -lcublas || exit 1
python3 -c 'import json,sys; [print(s["M"], s["N"], s["K"]) for s in json.load(open(sys.argv[1]))]' \
	$here/sgemm_tutorial.heldout.json | /tmp/driver | tee /tmp/driver.txt
rc=${PIPESTATUS[1]}
python3 - /tmp/driver.txt <<'PY'
import math, re, sys
rows = [dict(re.findall(r'(\w+)=("[^"]*"|\S+)', l)) for l in open(sys.argv[1]) if l.startswith("RESULT")]
def gm(xs): return math.exp(sum(map(math.log, xs)) / len(xs))
a = [float(r["aot_ms"]) for r in rows]; f = [float(r["fixed_ms"]) for r in rows]; c = [float(r["cublas_ms"]) for r in rows]
print(f"{len(rows)} held-out shapes: fixed / aot geomean {gm([x / y for x, y in zip(f, a)]):.3f} "
      f"(min {min(x / y for x, y in zip(f, a)):.3f}, max {max(x / y for x, y in zip(f, a)):.3f}); "
      f"aot / cublas geomean {gm([x / y for x, y in zip(a, c)]):.3f}")
PY
echo "driver exit status $rc"
exit $rc
