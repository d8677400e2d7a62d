#!/bin/bash
# sgemm_splitk (templates/sgemm.cu's split-K host launcher) measured on the
# H200 beside the committed database, in one device call from the repository
# root with the Debian build carried along (carry: ["build/aotc"]): the
# committed database is copied and tuned again on its own 100 shapes
# (AOTC_SHAPES; templates/sgemm.shapes.json's 48 are not among them and
# would have the 349 configurations measured afresh: 5 minutes on the H100,
# splitk-train-h100.txt), so only the split-K cells are new (8 variants,
# those with K >= 64 * SPLIT: about 500 cells; the 34,100 others are
# reused). The committed database was tuned before alternation: the rerun
# also times each shape's close contenders again in alternation (split-K
# among them where it is close), as any tune now does. Then the best of each
# function per shape and the report. The committed database is not changed.
# Output: $OUT/splitk-h200.txt and the database with the split-K cells.
# Expected: about 1.5 minutes (100 shapes' setup 27 s as in the full tune).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/splitk-h200.txt") 2>&1
. tools/device-libs.sh
export AOTC_CACHE_DIR=/tmp/aotc-cache
db=/tmp/splitk-db
rm -rf "$db"
mkdir -p "$db"
cp templates/sgemm.cuda_NVIDIA_H200_13.0.json "$db/"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Beside the H200 database only: another GPU would tune everything afresh
# (as one call did on an H100: bench/splitk/splitk-train-h100.txt).
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing done"; exit 3; }
build/aotc --version | head -1 || exit 2
echo "== tune (only the split-K cells are new)"
time build/aotc tune templates/sgemm.cu --arch sm90 --db "$db" -j 16 2>&1 |
	grep -v '^aotc: compiled' | tail -12
cp "$db"/sgemm.cuda_NVIDIA_H200_13.0.json "$OUT/"
echo "== per shape: the best of each function"
python3 bench/splitk/functions.py "$db"/sgemm.cuda_NVIDIA_H200_13.0.json
echo "== report"
build/aotc report "$db"/sgemm.cuda_NVIDIA_H200_13.0.json --max-variants 16 2>&1 | head -60
