#!/bin/sh
# Host timing with the buffers' lines evicted (the default, method
# "cold_cache": "evict") against a full cache flush before every timed call
# (AOTC_COLD_CACHE=flush, what every host tune did before): tune time, and
# whether the times and winners agree.
#
#   bench/cold/compare.sh [AOTC]      (from the repository root; about 4 minutes)
#
# templates/matmul_host.cpp on 6 of its shapes (bench/matmul_host.6.shapes.json,
# as bench/devices/host.sh), from
# a warm compile cache: two tunes with the full flush, one with eviction.
# Prints each tune's measuring time, then per pair the per-cell time ratio
# over the cells both measured ok (median and the 10th-90th percentiles)
# and the winners' agreement (tests/tuner/noise_agree.py). The two flushed
# tunes are the baseline: how far two tunes of one method differ here.
set -eu
aotc=${1:-build/aotc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
src=templates/matmul_host.cpp
"$aotc" tune "$src" --arch host --db "$tmp/compile" --compile-only --quiet
for run in flush1 evict flush2; do
	mode=${run%[0-9]}
	AOTC_COLD_CACHE=$mode "$aotc" tune "$src" --arch host --shapes bench/matmul_host.6.shapes.json --db "$tmp/$run" >"$tmp/log" 2>&1
	echo "$run: $(sed -n 's/^\([0-9]*\) measurements taken, .* in \([0-9.]*\) s (\(.*\)); .*/\1 cells in \2 s (\3)/p' "$tmp/log")"
done
python3 bench/cold/pairs.py "$tmp" matmul_host flush1:flush2 flush1:evict flush2:evict
