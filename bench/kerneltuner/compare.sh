#!/bin/sh
# Kernel Tuner (its C backend) against aotc on templates/matmul_host.cpp: the
# same 30 configurations and shapes, answers checked in both against the naive
# reference (normwise relative error at most 1e-5), a cold compile cache for
# both; wall time, its parts, the ratio, and whether the winners agree.
#
#   bench/kerneltuner/compare.sh [AOTC [EVERY]]   (from the repository root;
#                                                 about 20 minutes on this CPU)
#
# EVERY: every EVERY-th of the kernel's 48 shapes (default 1: all). Pinned:
# kernel_tuner==1.5.0, installed into a virtual environment in a temp dir
# (pip needs the network; the install is not timed).
#
# Five tunes:
#   aligned   both tools 7 timed runs per cell (Kernel Tuner's default
#             `iterations`), no untimed warm-up run (Kernel Tuner's C backend
#             has none; its check runs first, as aotc's does), one checked run
#             per cell (Kernel Tuner's verify; aotc --checks 1), the buffers'
#             cache lines evicted (clflush) before every timed run: aotc's
#             default, done in harness.cpp for Kernel Tuner, whose C backend
#             leaves timing, and so any flush, to the function it calls;
#             aotc --samples 7 --warmup 0 --screen 0 --alternate 0 --cell-time 60s --checks 1.
#   aligned-checks  aotc as aligned but with its own checks (up to 20 a cell).
#   defaults  aotc as it comes (up to 25 samples, screening, alternation,
#             eviction); Kernel Tuner as it comes (7 iterations) with a harness
#             that only times (no eviction).
# AOTC_KT_FLUSH=1 adds aotc aligned with AOTC_COLD_CACHE=flush (600 MB written
# before every timed call here: several minutes more); AOTC_KT_DEFAULTS=0 leaves
# out the two tunes at the defaults (about 8 minutes less).
set -eu
aotc=${1:-build/aotc}
every=${2:-1}
here=bench/kerneltuner
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
since() { python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }

python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q kernel_tuner==1.5.0 >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; exit 1; }
echo "Kernel Tuner $("$tmp/venv/bin/python" -c 'import kernel_tuner; print(kernel_tuner.__version__)'), $(c++ --version | head -1)"

# The kernel's AOTC_SHAPES, in its order (M = pow2(32, 256), N, K), one file for both tools.
python3 - "$every" >"$tmp/shapes.json" <<'PY'
import json, sys
shapes = [{"M": m, "N": n, "K": k} for m in (32, 64, 128, 256) for n in (32, 100, 128, 256) for k in (32, 100, 256)]
json.dump(shapes[::int(sys.argv[1])], sys.stdout)
PY
echo "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/shapes.json") shapes x 30 configurations (fewer where N % UNROLL != 0)"

# aotc NAME [ENV=VALUE] [OPTIONS...]: a tune from a cold compile cache; its wall time and summary.
run_aotc() {
	name=$1
	shift
	t=$(now)
	env AOTC_CACHE_DIR="$tmp/cache-$name" "$@" --db "$tmp/$name" >"$tmp/$name.log" 2>&1
	echo "aotc $name: $(since "$t") s wall; $(sed -n 's/^\([0-9]*\) measurements taken, .* in \([0-9.]*\) s (\(.*\)); \([0-9]*\) compiled (.*) in \([0-9.]*\) s on.*/\1 cells measured in \2 s (\3), \4 compiled in \5 s/p' "$tmp/$name.log")"
}
# kt NAME ITERATIONS EVICT
run_kt() {
	t=$(now)
	"$tmp/venv/bin/python" -W ignore "$here/kt.py" "$tmp/shapes.json" "$2" "$3" "$tmp/kt-$1.json" >"$tmp/kt-$1.log" 2>&1 || { cat "$tmp/kt-$1.log"; exit 1; }
	echo "Kernel Tuner $1: $(since "$t") s wall; $(tail -1 "$tmp/kt-$1.log")"
}
aligned="--samples 7 --warmup 0 --screen 0 --alternate 0 --cell-time 60s --checks 1"
tune="$aotc tune templates/matmul_host.cpp --arch host --shapes $tmp/shapes.json"

echo "== aligned: 7 timed runs per cell, no warm-up run, one checked run, buffers evicted before each"
run_aotc aligned $tune $aligned
run_aotc aligned-checks $tune ${aligned% --checks 1}
run_kt aligned 7 1
[ "${AOTC_KT_FLUSH:-0}" = 1 ] && run_aotc aligned-flush AOTC_COLD_CACHE=flush $tune $aligned
pairs=aligned:aligned
if [ "${AOTC_KT_DEFAULTS:-1}" != 0 ]; then
	echo "== defaults: aotc as it comes; Kernel Tuner's 7 iterations, no eviction"
	run_aotc defaults $tune
	run_kt defaults 7 0
	pairs="$pairs defaults:defaults"
fi

for pair in $pairs; do
	a=${pair%:*} k=${pair#*:}
	echo "== aotc $a against Kernel Tuner $k"
	python3 "$here/agree.py" "$tmp/$a"/matmul_host.*.json "$tmp/kt-$k.json"
done
