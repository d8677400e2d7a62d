#!/bin/bash
# The public-style kernel files on the GPU machine (an H200, sm90), from the
# repository root, with the build of aotc made on Debian carried along
# (carry: ["build"]), in one call of at most 9 minutes:
#
#   tests/public/h200/run-on-h200.sh
#
# For each of tests/public/{gelu_forward,layernorm_forward,rmsnorm_cub}.cu and
# tests/frontend/{matrixmul_sample,llmc_block_size}.cu:
# 1. aotc tune on the training shapes (shapes/K.train.json);
# 2. aotc emit;
# then 3. build each driver (K's file .driver.cu, driver.h) with nvcc
# against the emitted files, all at once; 4. run each on the held-out
# shapes (shapes/K.heldout.json, never in the training set): the emitted
# launcher against every fixed launch configuration of the kernel file,
# every result checked against the file's reference kernel; 5. summarise
# (summary.py). Everything lands in $OUT (default ./out): public-h200.txt
# (this output), the databases, the emitted dispatches, the held-out
# results and summary.json. Exit status: 0 when every step ran and every
# check passed, 1 otherwise, 2 when aotc cannot run here.
#
# Each step runs under `timeout`, within a deadline for the whole run
# (AOTC_H200_SECONDS, default 480 s), and the tunes leave 150 s of it to the
# rest, so that no hang eats the call. README.md has the expected times.
#
# AOTC_H200_REHEARSAL=DIR rehearses it on a machine without a GPU
# (rehearse.sh): each tune is run as here and must stop at "no device"
# (exit 3), a database made up by fake-db.py stands in for its
# measurements, and the drivers are built but not run: DIR/K.heldout.txt
# stands in for their output. Everything else is what the GPU run does.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/public-h200.txt") 2>&1
tee_pid=$!
here=tests/public/h200
work=${WORK:-/tmp/public-h200}
jobs=${JOBS:-16}
rehearsal=${AOTC_H200_REHEARSAL:-}
rm -rf "$work"
mkdir -p "$work/db"
export AOTC_CACHE_DIR=${AOTC_CACHE_DIR:-/tmp/public-h200-cache}
end=$((SECONDS + ${AOTC_H200_SECONDS:-480}))
status=0

# step CAP CMD...: CMD under a limit of CAP seconds, or of what is left
# before $until (default: the end); exit 124 when it ran out of time.
until=$end
step() {
	local cap=$1 left=$((until - SECONDS))
	shift
	[ "$left" -lt "$cap" ] && cap=$left
	if [ "$cap" -lt 10 ]; then
		echo "out of time, not run: $*"
		return 124
	fi
	timeout -k 10 "$cap" "$@"
}
finish() {
	echo "exit status $1 after ${SECONDS} s"
	exec >&- 2>&-
	wait "$tee_pid"
	exit "$1"
}

# The kernels: file, tuned kernel. The driver is the file's name .driver.cu.
kernels="tests/public/gelu_forward.cu:gelu_forward_kernel2
tests/public/layernorm_forward.cu:layernorm_forward_kernel3
tests/public/rmsnorm_cub.cu:rmsnorm_cub
tests/frontend/matrixmul_sample.cu:MatrixMulCUDA
tests/frontend/llmc_block_size.cu:rowmax_kernel"

echo "== environment"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
nvcc --version | tail -1
nproc
. tools/device-libs.sh
build/aotc --version || finish 2
git log -1 --format='%H %s' 2>/dev/null

echo "== 1, 2. tune on the training shapes, emit"
until=$((end - 150))
for entry in $kernels; do
	file=${entry%%:*}
	kernel=${entry##*:}
	gen=$work/gen/$kernel
	echo "-- $kernel ($file): $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' \
		$here/shapes/$kernel.train.json) training shapes"
	step 150 /usr/bin/time -f "tune: wall %e s, max RSS %M KiB" \
		build/aotc tune "$file" --arch sm90 --kernel "$kernel" --db "$work/db" \
		--shapes $here/shapes/$kernel.train.json -j "$jobs" --budget 120s
	st=$?
	if [ -n "$rehearsal" ] && [ $st -eq 3 ]; then
		# No GPU: the tune stopped at the device (exit 3) after reading
		# the options and the shapes; a made-up database instead.
		python3 $here/fake-db.py build/aotc "$file" "$kernel" $here/shapes/$kernel.train.json "$work/db"
		st=$?
	fi
	if [ $st -ne 0 ]; then
		echo "$kernel: tune exit status $st; emitting from what it measured"
		status=1
	fi
	cp "$work/db/$kernel".*.json "$OUT/" 2>/dev/null
	if ! step 60 build/aotc emit "$file" --arch sm90 --kernel "$kernel" --db "$work/db" -o "$gen"; then
		echo "$kernel: emit failed"
		status=1
		continue
	fi
	cp "$gen/_aot_${kernel}_cuda_sm90.c" "$OUT/"
done
until=$end

echo "== 3. build the drivers against the emitted files (nvcc -arch=sm_90, all at once)"
built=
for entry in $kernels; do
	file=${entry%%:*}
	kernel=${entry##*:}
	gen=$work/gen/$kernel
	[ -f "$gen/_aot_${kernel}_cuda_sm90.cu" ] || continue
	name=$(basename "$file" .cu)
	# The LLM-training project's files call omp_get_max_threads() in their
	# main() (renamed by the launcher, still compiled): OpenMP, as they say.
	omp=
	case $file in tests/public/gelu_forward.cu | tests/public/layernorm_forward.cu) omp="-Xcompiler -fopenmp" ;; esac
	step 240 nvcc -std=c++17 -arch=sm_90 -O3 $omp -I "$(dirname "$file")" -I "$gen" -I $here \
		-o "$work/drv-$kernel" $here/$name.driver.cu "$gen/_aot_${kernel}_cuda_sm90.c" \
		>"$work/build-$kernel.log" 2>&1 &
	built="$built $kernel:$!"
done
ran=
for b in $built; do
	kernel=${b%%:*}
	if wait "${b##*:}"; then
		ran="$ran $kernel"
		echo "$kernel: driver built"
	else
		echo "$kernel: driver build failed"
		status=1
	fi
	cat "$work/build-$kernel.log"
done

echo "== 4. the held-out shapes: the emitted launcher against the file's fixed configurations"
for kernel in $ran; do
	echo "-- $kernel"
	python3 -c 'import json,sys; [print(*s.values()) for s in json.load(open(sys.argv[1]))]' \
		$here/shapes/$kernel.heldout.json >"$work/$kernel.shapes"
	if [ -n "$rehearsal" ]; then
		cp "$rehearsal/$kernel.heldout.txt" "$OUT/$kernel.heldout.txt"
		cat "$OUT/$kernel.heldout.txt"
		continue
	fi
	step 120 "$work/drv-$kernel" <"$work/$kernel.shapes" 2>&1 | tee "$OUT/$kernel.heldout.txt"
	st=${PIPESTATUS[0]}
	echo "$kernel: driver exit status $st"
	[ "$st" -eq 0 ] || status=1
done

echo "== 5. summary"
args=
for entry in $kernels; do
	kernel=${entry##*:}
	args="$args $OUT/$kernel.heldout.txt $here/shapes/$kernel.heldout.json"
done
python3 $here/summary.py "$OUT/summary.json" $args || status=1
finish $status
