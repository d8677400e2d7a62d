#!/bin/bash
# Issue 28 on the H200, in one device call from the repository root with a
# Debian build carried along (build/aotc; build/aotc-old, the aotc before,
# when it is there): the planted faults of tests/tuner/faulty.cu keep their
# statuses with per-buffer guard patterns (scanned by the CUDA pattern
# kernel), input checks and more checked launches, and softmax retuned from
# scratch by both shows what the checks cost. Not a meson test (no GPU in CI).
# Run on 2026-12-05: bench/device-guards2-h200.log, docs/PERFORMANCE.md
set -u
out=${OUT:-device-out}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
. tools/device-libs.sh
export AOTC_CACHE_DIR=/tmp/aotc-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build/aotc --version || exit 1

echo "== planted faults"
rm -rf /tmp/f
AOTC_MEASURE_TIMEOUT=5 build/aotc tune tests/tuner/faulty.cu --arch sm90 --db /tmp/f -j 16 --verbose 2>&1 |
	grep -v '^aotc: compiled'
cp /tmp/f/twice.*.json "$out/faulty.json"
python3 - /tmp/f/twice.*.json <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
want = {0: "ok", 1: "wrong", 2: "fault", 3: "fault", 4: "timeout", 5: "wrong", 6: "resources",
        7: "out_of_bounds", 8: "out_of_bounds", 9: "out_of_bounds", 10: "wrong", 11: "wrong"}
names = [c["name"] for c in db["configs"]]
fails = ["%s n=%d: %s (%s), expected %s" % (names[m["config"]], db["shapes"][m["shape"]][0], m["status"],
                                            m.get("note", ""), want[int(names[m["config"]][6:-1])])
         for m in db["measurements"] if m["status"] != want[int(names[m["config"]][6:-1])]]
if len(db["measurements"]) != 24:
    fails.append("%d measurements, expected 24" % len(db["measurements"]))
print("\n".join("FAIL faulty: " + f for f in fails) or "PASS faulty: every planted fault keeps its status")
PY

echo "== softmax from scratch (compile cache warm)"
build/aotc tune templates/softmax.cu --arch sm90 --compile-only -j 16 2>&1 | tail -1
for b in aotc-old aotc; do
	[ -x "build/$b" ] || continue
	rm -rf /tmp/s
	echo "-- $b"
	/usr/bin/time -f "wall %e s" "build/$b" tune templates/softmax.cu --arch sm90 --db /tmp/s -j 16 2>&1 |
		grep -E 'measurements taken|wall|failed'
	cp /tmp/s/softmax.*.json "$out/softmax.$b.json"
done
