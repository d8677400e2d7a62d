#!/bin/bash
# sgemm_splitk against the template's variants and cuBLAS on deep, thin
# products (bench/splitk/deep-thin.shapes.json: 128..1024 square by 8192..32768
# deep, and three ordinary shapes), on whichever sm90 GPU the device call
# gives, in one call from the repository root with the Debian build carried
# along (carry: ["build/aotc"]): a fresh tune of every configuration of
# templates/sgemm.cu (340 + 8 split-K + cuBLAS) on those 8 shapes, then the
# report. Output: $OUT/splitk-sm90.txt and the database.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/splitk-sm90.txt") 2>&1
. tools/device-libs.sh
export AOTC_CACHE_DIR=/tmp/aotc-cache
db=/tmp/splitk-db
rm -rf "$db"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build/aotc --version | head -1 || exit 2
echo "== tune"
time build/aotc tune templates/sgemm.cu --arch sm90 --db "$db" --shapes bench/splitk/deep-thin.shapes.json -j 16 2>&1 |
	grep -v '^aotc: compiled' | tail -30
cp "$db"/sgemm.*.json "$OUT/"
echo "== per shape: the best of each function"
python3 bench/splitk/functions.py "$db"/sgemm.cuda_*.json
