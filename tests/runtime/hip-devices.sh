#!/bin/sh
# tune --devices on the HIP device side without an AMD GPU: the STAND-IN
# runtime (fake_amdhip64.c, a plumbing test, NOT a measurement) offers four
# devices, AOTC_FAKE_HIP_DEVICES="gfx90a,gfx90a,gfx90a:other,gfx908" (0
# and 1 one model, 2 another model of gfx90a, 3 another architecture), and
# tests/codegen/rocm/axpy.cu is tuned for gfx90a on three small shapes:
# 1. Without --devices: devices 0 and 1 measure (`on 2 devices`,
#    search.devices [0, 1]); 2 and 3 are left out, each with its note.
# 2. --devices 0,2: two models, refused (exit 3, naming both); no database.
#    --devices 0,4: a device that is not there (exit 3, "device 4, but
#    there are only 4 devices"); --devices 5 with four of one model and
#    --devices 3 with two: too few of the model (exit 3, naming them).
#    --devices 2 where device 0 is a gfx908: devices 1 and 2.
# 3. --devices 1,0 and --devices 2: two workers at once (`device 0:` and
#    `device 1:` lines with --verbose) fill the same cells with the same
#    statuses as one device (--devices 1): wrong, out_of_bounds and fault
#    where the stand-in misbehaves, ok elsewhere. Times are made up and
#    not compared.
# 4. AOTC_DEVICE=1 without --devices: device 1 alone.
# 5. An AOTC_FAKE_HIP_DEVICES that does not read fails the stand-in's
#    hipInit, saying why (not one device by default).
# The databases go to a temporary directory: never commit one as data.
# Usage: hip-devices.sh AOTC REPO_ROOT FAKE_LIBAMDHIP64
aotc=$1
root=$2
fake=$3
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
case $fake in /*) ;; *) fake=$(pwd)/$fake ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

cd "$root" || exit 1
if ! command -v hipcc >/dev/null 2>&1; then
	skip "no hipcc: the variants cannot be compiled; the stand-in is not run"
fi
export AOTC_CACHE_DIR="$tmp/cache"
export AOTC_HIP_LIBRARY="$fake"
export AOTC_FAKE_HIP_DEVICES="gfx90a,gfx90a,gfx90a:other,gfx908"
unset AOTC_DEVICE
base="aotc test stand-in (not a GPU)"
file=axpy.rocm_aotc_test_stand-in_not_a_GPU_5.2.json
# Small shapes: the stand-in runs every thread of every launch on the CPU.
echo '[{"n": 1024}, {"n": 4096}, {"n": 65536}]' >"$tmp/shapes.json"

# tune NAME [OPTIONS...]: tunes axpy into $tmp/NAME, its output in
# $tmp/NAME.log, its exit status in st.
tune() {
	name=$1
	shift
	"$aotc" tune tests/codegen/rocm/axpy.cu --arch gfx90a --db "$tmp/$name" --shapes "$tmp/shapes.json" -j 2 \
		"$@" >"$tmp/$name.log" 2>&1
	st=$?
}

# cells DB [BASE]: the (configuration, shape) cells of DB and their
# statuses: wrong, out_of_bounds and fault for the stand-in's three broken
# variants, ok elsewhere, on every shape, measured on the base model; with
# BASE, also the same cells with the same statuses as BASE's. No output and
# exit 0 when so.
cells() {
	python3 - "$base" "$@" <<'END'
import json, sys
def load(path):
    d = json.load(open(path))
    names = [c["name"] for c in d["configs"]]
    cells = {}
    for m in d["measurements"]:
        key = (names[m["config"]], tuple(d["shapes"][m["shape"]]))
        if key in cells:
            raise SystemExit("%s: cell %s twice" % (path, key))
        cells[key] = m["status"]
    return d, names, cells
d, names, got = load(sys.argv[2])
problems = []
if d["hardware"].get("name") != sys.argv[1]:
    problems.append("measured on %r, expected %r" % (d["hardware"].get("name"), sys.argv[1]))
broken = {"axpy<64, 2>": "wrong", "axpy<128, 2>": "out_of_bounds", "axpy<512, 2>": "fault"}
if not set(broken) <= set(names) or len(names) < 4:
    problems.append("configurations: %s" % names)
for shape in [(1024,), (4096,), (65536,)]:
    for name in names:
        status = got.get((name, shape))
        if status != broken.get(name, "ok"):
            problems.append("%s at n=%d: %s, expected %s" % (name, shape[0], status, broken.get(name, "ok")))
if len(got) != 3 * len(names):
    problems.append("%d cells, expected %d" % (len(got), 3 * len(names)))
if len(sys.argv) > 3:
    want = load(sys.argv[3])[2]
    for key in sorted(set(got) | set(want)):
        if got.get(key) != want.get(key):
            problems.append("%s at n=%d: %s, one device: %s" % (key[0], key[1][0], got.get(key), want.get(key)))
print("\n".join(problems))
sys.exit(1 if problems else 0)
END
}

# 1. Every device of device 0's model, the others left out by name.
tune default
notes=$(grep "^aotc: note: device" "$tmp/default.log")
want_notes="aotc: note: device 2 ($base other) left out: not the model of device 0 ($base)
aotc: note: device 3 left out: no gfx90a among the AMD GPUs here (3: $base (gfx908))"
if [ $st = 0 ] && grep -q "in [0-9.]* s on 2 devices (their checking" "$tmp/default.log" &&
	[ "$(json "$tmp/default/$file" 'd["search"]["devices"]')" = "[0, 1]" ] && [ "$notes" = "$want_notes" ]; then
	ok "no --devices: devices 0 and 1 (on 2 devices, search.devices [0, 1]); 2 (another model) and 3 (gfx908) left out with a note each"
else
	bad "no --devices: exit $st" "notes: $notes" "$tmp/default.log"
fi

# The one-device tune that the others are compared with.
tune one --devices 1
if [ $st = 0 ] && [ "$(json "$tmp/one/$file" 'd["search"]["devices"]')" = "[0]" ] &&
	! grep -q "on [0-9]* devices\|^aotc: note: device" "$tmp/one.log" && cells "$tmp/one/$file" >"$tmp/check" 2>&1; then
	ok "--devices 1: device 0 alone; wrong, out_of_bounds and fault where the stand-in misbehaves, ok elsewhere"
else
	bad "--devices 1: exit $st" "$tmp/one.log" "$tmp/check"
fi
cells "$tmp/default/$file" "$tmp/one/$file" >"$tmp/check" 2>&1 &&
	ok "no --devices: the cells and statuses of one device" || bad "no --devices: the cells" "$tmp/check"

# 2. Devices that cannot be measured on together: nothing is written.
tune models --devices 0,2
if [ $st = 3 ] && grep -q "error: devices 0 ($base) and 2 ($base other) are different models" "$tmp/models.log" &&
	[ -z "$(ls -A "$tmp/models" 2>/dev/null)" ]; then
	ok "--devices 0,2: two models refused, naming both (exit 3); nothing written"
else
	bad "--devices 0,2: exit $st" "$(ls -A "$tmp/models" 2>&1)" "$tmp/models.log"
fi
tune absent --devices 0,4
if [ $st = 3 ] && grep -q "cannot tune for gfx90a here: device 4, but there are only 4 devices" "$tmp/absent.log" &&
	[ -z "$(ls -A "$tmp/absent" 2>/dev/null)" ]; then
	ok "--devices 0,4 of four devices: device 4 and the count named (exit 3); nothing written"
else
	bad "--devices 0,4: exit $st" "$tmp/absent.log"
fi
AOTC_FAKE_HIP_DEVICES=gfx90a,gfx90a,gfx90a,gfx90a tune five --devices 5
if [ $st = 3 ] && grep -q "cannot tune for gfx90a on 5 devices here: there are only 4 of the model of device 0 ($base): devices 0, 1, 2, 3" "$tmp/five.log" &&
	[ -z "$(ls -A "$tmp/five" 2>/dev/null)" ]; then
	ok "--devices 5 of four devices of one model: the count and the devices named (exit 3); nothing written"
else
	bad "--devices 5: exit $st" "$tmp/five.log"
fi
tune three --devices 3
if [ $st = 3 ] && grep -q "cannot tune for gfx90a on 3 devices here: there are only 2 of the model of device 0 ($base): devices 0, 1" "$tmp/three.log" &&
	[ "$(grep -c "^aotc: note: device [23] .*left out" "$tmp/three.log")" = 2 ] && [ -z "$(ls -A "$tmp/three" 2>/dev/null)" ]; then
	ok "--devices 3 with two of one model: refused naming them, the others' notes (exit 3); nothing written"
else
	bad "--devices 3: exit $st" "$tmp/three.log"
fi
# N devices of the architecture's model, not the first N: device 0 is gfx908.
AOTC_FAKE_HIP_DEVICES=gfx908,gfx90a,gfx90a tune skip --devices 2
if [ $st = 0 ] && [ "$(json "$tmp/skip/$file" 'd["search"]["devices"]')" = "[1, 2]" ]; then
	ok "--devices 2 after a gfx908: devices 1 and 2"
else
	bad "--devices 2 after a gfx908: exit $st" "$tmp/skip.log"
fi

# 3. Two workers at once: the cells of one device, the work split between them.
for devices in 1,0 2; do
	tune "split$devices" --devices $devices --verbose
	if [ $st = 0 ] && grep -q "^aotc: device 0: n=" "$tmp/split$devices.log" &&
		grep -q "^aotc: device 1: n=" "$tmp/split$devices.log" &&
		grep -q "in [0-9.]* s on 2 devices (their checking" "$tmp/split$devices.log" &&
		cells "$tmp/split$devices/$file" "$tmp/one/$file" >"$tmp/check" 2>&1; then
		ok "--devices $devices: both devices measured; the cells and statuses of one device"
	else
		bad "--devices $devices: exit $st" "$tmp/check" "$tmp/split$devices.log"
	fi
done
[ "$(json "$tmp/split1,0/$file" 'd["search"]["devices"]')" = "[1, 0]" ] &&
	[ "$(json "$tmp/split2/$file" 'd["search"]["devices"]')" = "[0, 1]" ] &&
	ok "search.devices: [1, 0] for --devices 1,0, [0, 1] for --devices 2" ||
	bad "search.devices" "$(json "$tmp/split1,0/$file" 'd["search"]')" "$(json "$tmp/split2/$file" 'd["search"]')"

# 4. AOTC_DEVICE names one device: no other is tried.
AOTC_DEVICE=1 tune env
if [ $st = 0 ] && [ "$(json "$tmp/env/$file" 'd["search"]["devices"]')" = "[1]" ] &&
	! grep -q "on [0-9]* devices\|^aotc: note: device" "$tmp/env.log" && cells "$tmp/env/$file" "$tmp/one/$file" >"$tmp/check" 2>&1; then
	ok "AOTC_DEVICE=1: device 1 alone (search.devices [1]), the cells of one device"
else
	bad "AOTC_DEVICE=1: exit $st" "$tmp/check" "$tmp/env.log"
fi

# 5. A list the stand-in cannot read is an error, not its default device.
AOTC_FAKE_HIP_DEVICES="gfx90a,,gfx908" tune unread
if [ $st = 3 ] && grep -q "fake_amdhip64: AOTC_FAKE_HIP_DEVICES='gfx90a,,gfx908': entry 2 is not ARCH\[:MODEL\]" "$tmp/unread.log" &&
	grep -q "hipErrorInvalidValue" "$tmp/unread.log"; then
	ok "the stand-in: an AOTC_FAKE_HIP_DEVICES that does not read fails hipInit, saying why (exit 3)"
else
	bad "the stand-in, AOTC_FAKE_HIP_DEVICES='gfx90a,,gfx908': exit $st" "$tmp/unread.log"
fi
finish
