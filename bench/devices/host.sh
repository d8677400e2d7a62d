#!/bin/sh
# Host tuning on 1 and 2 workers (aotc tune --devices N on the host backend,
# where the workers stand in for devices and share the CPU): wall time of
# the measuring and agreement of the per-shape winners.
#
#   bench/devices/host.sh [AOTC] [RUNS]     (from the repository root)
#
# RUNS (default 2) tunes of templates/matmul_host.cpp on 6 of its shapes
# (bench/matmul_host.6.shapes.json),
# from a warm compile cache, each on 1 worker and on 2, alternately. Prints
# per tune its measuring wall time (the summary's "in X s": from the first
# measurement to the last, compiling excluded), then for each pair of tunes
# how many shapes' winners agree (the same, or within the recorded noise:
# tests/tuner/noise_agree.py) and the cost of one tune's winners by the
# other's times. Two 1-worker tunes are the baseline: how often a machine
# this noisy agrees with itself.
set -eu
aotc=${1:-build/aotc}
runs=${2:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
src=templates/matmul_host.cpp
"$aotc" tune "$src" --arch host --db "$tmp/compile" --compile-only --quiet
for r in $(seq 1 "$runs"); do
	for n in 1 2; do
		"$aotc" tune "$src" --arch host --shapes bench/matmul_host.6.shapes.json --db "$tmp/d$n.$r" --devices $n \
			>"$tmp/log" 2>&1
		secs=$(sed -n 's/^[0-9]* measurements taken, .* in \([0-9.]*\) s.*/\1/p' "$tmp/log")
		cells=$(sed -n 's/^\([0-9]*\) measurements taken.*/\1/p' "$tmp/log")
		echo "run $r, $n worker(s): $cells cells measured in $secs s"
	done
done
python3 - "$tmp" "$runs" <<'PY'
import glob, json, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
sys.path[:0] = ["bench", "bench/noise"]
from compare import pair  # noise_agree.py's verdict and the cost of the other's winners

def db(n, r):
    return glob.glob("%s/d%d.%d/matmul_host.*.json" % (tmp, n, r))[0]

pairs = [("1 worker vs 1 worker", db(1, 1), db(1, r)) for r in range(2, runs + 1)]
pairs += [("1 worker vs 2 workers", db(1, r), db(2, r)) for r in range(1, runs + 1)]
pairs += [("2 workers vs 2 workers", db(2, 1), db(2, r)) for r in range(2, runs + 1)]
for what, a, b in pairs:
    v = pair(a, b, json.load(open(a)), json.load(open(b)))
    print("%s: %d of %d shapes agree within noise, %d the same winner; the other's winner costs %.1f %% (geomean), %.1f %% at most"
          % (what, v["agree"], v["shapes"], v["same_winner"], 100 * (v["cost_geomean"] - 1), 100 * (v["cost_worst"] - 1)))
PY
