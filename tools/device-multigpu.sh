#!/bin/bash
# Every GPU of a host at once (aotc tune --devices), measured: the shipped
# SGEMM template (templates/sgemm.cu, with its cuBLAS routine) tuned on 1
# GPU and on 2, exhaustive, from empty databases and a compile cache filled
# beforehand (so that both time measuring only), on the 48 shapes of
# templates/sgemm.shapes.json. Prints each tune's summary and wall time and
# the agreement of the two tunes' per-shape winners (tests/tuner/noise_agree.py).
# For a host with two GPUs or more (nvidia-h200-x2), in one device call of
# about 6 minutes, from the repository root with build/aotc carried:
#   OUT=... tools/device-multigpu.sh          (output: $OUT/multigpu.txt, $OUT/d1, $OUT/d2)
set -uo pipefail
cd "$(dirname "$0")/.."
. tools/device-libs.sh >/dev/null
OUT=${OUT:-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/multigpu.txt") 2>&1
export AOTC_CACHE_DIR=/tmp/aotc-cache
nvidia-smi -L
n=$(nvidia-smi -L | grep -c "^GPU ")
[ "$n" -ge 2 ] || { echo "multigpu: $n GPU here, 2 needed"; exit 1; }
src=templates/sgemm.cu
shapes=templates/sgemm.shapes.json
build/aotc tune "$src" --arch sm90 --db /tmp/compile-only --compile-only -j 16 --quiet
for d in 1 2; do
	echo "== --devices $d"
	SECONDS=0
	build/aotc tune "$src" --arch sm90 --shapes "$shapes" --db "$OUT/d$d" --devices $d -j 16 --search exhaustive \
		>"$OUT/tune$d.log" 2>&1
	echo "exit $?, wall $SECONDS s"
	grep -E "measurements taken|timing noise|database:" "$OUT/tune$d.log"
done
echo "== winners"
python3 tests/tuner/noise_agree.py "$OUT"/d1/sgemm.*.json "$OUT"/d2/sgemm.*.json
