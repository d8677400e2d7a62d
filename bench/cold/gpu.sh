#!/bin/bash
# GPU timing on rotated copies of the buffers (method "cold_cache":
# "rotate", the default) against the full L2 flush before every timed
# launch (AOTC_COLD_CACHE=flush, every GPU tune before): measuring time, a
# cell's cost, and whether times and winners agree.
#
#   OUT=... bench/cold/gpu.sh [ARCH]     (from the repository root on the GPU
#                                         machine, build/aotc carried; ARCH sm90)
#
# templates/sgemm.cu (with cuBLAS) on 17 of its committed H200 database's
# shapes and templates/softmax.cu on 9 of its (bench/cold/*.shapes.json),
# compiled first (so the tunes time measuring only), then per kernel three
# tunes: flush, rotate, flush again (the baseline: how far two tunes of one
# method differ). Prints each tune's summary figures and the pairs
# (bench/cold/pairs.py). Output: $OUT/cold-gpu.txt and the databases.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -f build/aotc ] && . tools/device-libs.sh >/dev/null
arch=${1:-sm90}
OUT=${OUT:-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/cold-gpu.txt") 2>&1
export AOTC_CACHE_DIR=/tmp/aotc-cache
nvidia-smi -L
for k in sgemm softmax; do
	case $k in sgemm) shapes=bench/cold/sgemm.17.shapes.json ;; *) shapes=bench/cold/softmax.9.shapes.json ;; esac
	build/aotc tune "templates/$k.cu" --arch "$arch" --db /tmp/compile-only --compile-only -j 16 --quiet
	for run in flush1 rotate flush2; do
		mode=${run%[0-9]}
		SECONDS=0
		AOTC_COLD_CACHE=$mode build/aotc tune "templates/$k.cu" --arch "$arch" --shapes "$shapes" \
			--db "$OUT/$k/$run" -j 16 --search exhaustive >"$OUT/$k-$run.log" 2>&1
		st=$?
		line=$(sed -n 's/^\([0-9]*\) measurements taken, .* in \([0-9.]*\) s (\(.*\)); .*/\1 \2 \3/p' "$OUT/$k-$run.log")
		set -- $line
		echo "$k $run: exit $st, wall $SECONDS s, ${1:-?} cells measured in ${2:-?} s" \
			"($(awk -v n="${1:-0}" -v t="${2:-0}" 'BEGIN { if (n > 0) printf "%.2f ms a cell", 1000 * t / n }'))"
		grep "measurements taken" "$OUT/$k-$run.log" | sed 's/^/    /'
	done
	python3 bench/cold/pairs.py "$OUT/$k" "$k" flush1:flush2 flush1:rotate flush2:rotate
done
