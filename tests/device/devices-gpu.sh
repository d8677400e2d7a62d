#!/bin/bash
# On a GPU machine (one GPU or several): aotc tune --devices on real devices
# (docs/cli.md), the path tests/scale/devices.sh (host stand-ins) and
# tests/runtime/hip-devices.sh (the ROCm stand-in) cannot reach.
#  - templates/softmax.cu on 8 of its shapes with no --devices: every device
#    of device 0's model (the summary says "on N devices" when N > 1;
#    search.devices lists them);
#  - --devices 1: device 0 alone; its cells and statuses equal the default
#    tune's (times differ);
#  - with 2 devices or more: --devices 2 and --devices 1,0 the same cells
#    and statuses, both devices measuring; with one: --devices 2 refused
#    ("there is 1 of the model of device 0"), --devices 0,1 refused
#    ("device 1, but there is only 1 device"), exit 3 and nothing written.
# Run from the repository root with build/aotc carried:
#   tests/device/devices-gpu.sh [ARCH]     (default sm90; output: $OUT/devices-gpu.txt)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tools/device-libs.sh >/dev/null
arch=${1:-sm90}
out=${OUT:-out}
mkdir -p "$out"
log=$out/devices-gpu.txt
exec > >(tee "$log") 2>&1
tmp=$(mktemp -d)
export AOTC_CACHE_DIR=$tmp/cache
aotc=$(pwd)/build/aotc
src=templates/softmax.cu
. tests/lib.sh
cells() { python3 tests/scale/cells.py "$@"; }
nvidia-smi -L
python3 - "$tmp/shapes.json" <<'END'
import json, sys
json.dump([{"rows": r, "cols": c} for r in (1024, 16384) for c in (256, 1024, 4096, 16384)], open(sys.argv[1], "w"))
END
tune() {
	name=$1
	shift
	echo "== tune $*"
	"$aotc" tune "$src" --arch "$arch" --shapes "$tmp/shapes.json" --db "$tmp/$name" -j 16 --verbose "$@" \
		>"$tmp/$name.log" 2>&1
	st=$?
	grep -v "^aotc: device [0-9]*: \(rows\|.*alternated\)\|^aotc: rows=" "$tmp/$name.log" | tail -14
}
db() { ls "$tmp"/$1/softmax.*.json 2>/dev/null | head -1; }

tune default
n=$(nvidia-smi -L | grep -c "^GPU ")
devs=$(json "$(db default)" 'd["search"]["devices"]')
[ $st = 0 ] && ok "no --devices: exit 0, devices $devs of $n" || bad "no --devices: exit $st" "$tmp/default.log"

tune one --devices 1
diff=$(cells same "$(db default)" "$(db one)")
[ $st = 0 ] && [ "$(json "$(db one)" 'd["search"]["devices"]')" = "[0]" ] && [ -z "$diff" ] &&
	ok "--devices 1: device 0 alone, the default tune's cells and statuses" || bad "--devices 1: exit $st" "$diff"

if [ "$n" -ge 2 ]; then
	for d in 2 1,0; do
		tune "two$d" --devices $d
		diff=$(cells same "$(db one)" "$(db two$d)")
		d0=$(grep -c "^aotc: device 0: rows=" "$tmp/two$d.log")
		d1=$(grep -c "^aotc: device 1: rows=" "$tmp/two$d.log")
		[ $st = 0 ] && [ -z "$diff" ] && [ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] &&
			ok "--devices $d: both measured ($d0 and $d1 cells), one device's cells and statuses" ||
			bad "--devices $d: exit $st, $d0 and $d1 cells" "$diff"
	done
else
	tune two --devices 2
	[ $st = 3 ] && grep -q "on 2 devices here: there is 1 of the model of device 0" "$tmp/two.log" && [ -z "$(ls -A "$tmp/two" 2>/dev/null)" ] &&
		ok "--devices 2 on one GPU: refused (exit 3), nothing written" || bad "--devices 2: exit $st" "$tmp/two.log"
	tune list --devices 0,1
	[ $st = 3 ] && grep -q "device 1, but there is only 1 device" "$tmp/list.log" && [ -z "$(ls -A "$tmp/list" 2>/dev/null)" ] &&
		ok "--devices 0,1 on one GPU: refused (exit 3), nothing written" || bad "--devices 0,1: exit $st" "$tmp/list.log"
fi
finish
