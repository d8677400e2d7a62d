#!/bin/bash
# Timing noise on a GPU (docs/PERFORMANCE.md, "Timing noise"), in one device
# call from the repository root with the Debian build carried along (carry:
# ["build/aotc"]): two back-to-back tunes of templates/softmax.cu on its 32
# training shapes and of templates/sgemm.cu on 8 of its shapes, each into a
# fresh database, then per shape whether the two agree on the winner within
# the recorded noise (tests/tuner/noise_agree.py), the clocks and warm-up the
# method recorded, and how many shapes' contenders were alternated.
# Output: $OUT/gpu-agree.txt and the four databases.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/gpu-agree.txt") 2>&1
. tools/device-libs.sh
export AOTC_CACHE_DIR=/tmp/aotc-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics,power.limit --format=csv
build/aotc --version | head -1 || exit 2
python3 -c 'import json; s = json.load(open("templates/sgemm.shapes.json")); json.dump(s[::max(1, len(s) // 8)][:8], open("/tmp/sgemm8.json", "w"))'
for k in softmax sgemm; do
	shapes=templates/softmax.shapes.json
	[ $k = sgemm ] && shapes=/tmp/sgemm8.json
	for run in 1 2; do
		db=/tmp/db-$k-$run
		rm -rf "$db"
		echo "== $k, tune $run"
		/usr/bin/time -f "%e s" build/aotc tune templates/$k.cu --arch sm90 --db "$db" --shapes "$shapes" -j 16 2>&1 |
			grep -v '^aotc: compiled' | tail -14
		cp "$db"/$k.cuda_*.json "$OUT/$k.run$run.json"
	done
	echo "== $k: the two tunes"
	python3 tests/tuner/noise_agree.py "$OUT/$k.run1.json" "$OUT/$k.run2.json"
	python3 - "$OUT/$k.run1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["method"]
print("method:", json.dumps({k: m[k] for k in ("warmup_ms", "alternation", "warmed", "clocks") if k in m}))
alt = {x["shape"] for x in d["measurements"] if x.get("alternated")}
print("shapes with alternated contenders: %d of %d" % (len(alt), len(d["shapes"])))
PY
done
build/aotc report "$OUT/softmax.run1.json" 2>&1 | head -50
