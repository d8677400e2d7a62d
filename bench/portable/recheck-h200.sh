#!/bin/bash
# On the GPU machine: do the committed H200 databases still describe the
# templates after they were made portable to AMD GPUs (commit 08728a0, which
# updated the databases' source hashes without measuring again)? Measures
# every configuration of sgemm and softmax again on every 10th training
# shape of their databases, from scratch, with this build, and compares
# (bench/portable/compare.py): per-shape winners and the time of every
# configuration against the committed measurement. Run from the repository
# root with build/ carried: bench/portable/recheck-h200.sh (output in $OUT;
# committed: recheck-h200.log and the databases as sgemm/softmax.recheck.json).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tools/device-libs.sh >/dev/null
out=${OUT:-out}
mkdir -p "$out"
exec > >(tee "$out/recheck-h200.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
build/aotc --version
for t in sgemm softmax; do
	python3 - "templates/$t.cuda_NVIDIA_H200_13.0.json" "$out/$t.shapes.json" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
json.dump([dict(zip(db["shape_args"], s)) for s in db["shapes"][::10]], open(sys.argv[2], "w"))
PY
	start=$EPOCHREALTIME
	build/aotc tune "templates/$t.cu" --arch sm90 --db "$out/db" --shapes "$out/$t.shapes.json" \
		--search exhaustive
	python3 -c "import sys; print('$t: tuned in %.1f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$EPOCHREALTIME"
	python3 bench/portable/compare.py "templates/$t.cuda_NVIDIA_H200_13.0.json" "$out/db/$t.cuda_NVIDIA_H200_13.0.json"
done
