#!/bin/bash
# The downstream example on the GPU machine, in one command from the repository
# root, with the build of aotc made here carried along (carry: ["build"]):
#
#   examples/run-on-h200.sh
#
# Regenerates gen/ with `aotc compile` (the committed databases are complete for
# the H200, so it should report "0 measurements to take"; --budget caps it in
# case they are not), builds the demo, runs it, and appends compare.py's table.
# Everything lands in $OUT/demo.txt (OUT defaults to ./out).  Expected run time:
# well under two minutes.  Exit status: the demo's (0 = every check passed).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log=$OUT/demo.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }

say "== environment"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee -a "$log"
nvcc --version 2>&1 | tail -1 | tee -a "$log"

if [ ! -x build/aotc ]; then
	say "run-on-h200: build/aotc is missing: carry the build/ folder made on the build machine"
	exit 2
fi
. tools/device-libs.sh >>"$log" 2>&1  # sourced, not piped: it exports LD_LIBRARY_PATH
build/aotc --version 2>&1 | tee -a "$log" || exit 2

cd examples
say "== gen + build"
# Without make (not listed in the device image), the same steps as the Makefile.
build_without_make() {
	set -e
	mkdir -p gen
	for k in sgemm softmax; do
		../build/aotc compile ../templates/$k.cu --arch sm90 --db ../templates \
			-o gen --budget 60s
		cc -std=c99 -O2 -Wall -Wextra -I gen -c gen/_aot_${k}_cuda_sm90.c -o gen/_aot_${k}_cuda_sm90.c.o
		nvcc -arch=sm_90 -O2 -std=c++17 -I ../templates -I gen -c gen/_aot_${k}_cuda_sm90.cu \
			-o gen/_aot_${k}_cuda_sm90.cu.o
	done
	nvcc -arch=sm_90 -O2 -std=c++17 -I gen -c demo.cu -o demo.o
	nvcc -arch=sm_90 demo.o gen/*.o -lcublas -o demo
}
if [ -z "${NO_MAKE:-}" ] && command -v make >/dev/null; then
	build() { make AOTC=../build/aotc AOTC_FLAGS="--budget 60s" gen demo; }
else
	say "run-on-h200: no make here: building with the Makefile's commands"
	build() { (build_without_make); }
fi
if ! build 2>&1 | tee -a "$log"; then
	say "run-on-h200: the build failed"
	exit 2
fi
head -6 gen/_aot_sgemm_cuda_sm90.h gen/_aot_softmax_cuda_sm90.h 2>&1 | tee -a "$log"

say "== demo"
timeout 300 ./demo 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
say "demo exit status: $status"

say "== compare with the per-shape best (held-out database)"
python3 compare.py "$log" 2>&1 | tee -a "$log"
exit "$status"
