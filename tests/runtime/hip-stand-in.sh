#!/bin/sh
# The HIP device side (runtime/hip/device.c) without an AMD GPU.
# 1. No ROCm runtime (AOTC_HIP_LIBRARY=/nonexistent), and where one is
#    installed but no AMD GPU is (Debian's libamdhip64.so.5 here): tune
#    --arch gfx90a says what it found, exit 3; compile emits from the
#    database instead.
# 2. Through the STAND-IN runtime (fake_amdhip64.c, loaded with
#    AOTC_HIP_LIBRARY; a plumbing test, NOT a measurement): tune goes
#    through open, load, alloc, upload, launch, event timing, compare with
#    the reference and the guard zones, and writes a database (in a
#    temporary directory: never commit one as data) in which the stand-in's
#    broken variants have the statuses a GPU's would get: axpy<64, 2>
#    wrong, axpy<128, 2> out_of_bounds, axpy<512, 2> fault; the others ok.
#    emit takes the database; a device of another architecture is named.
# 3. The same through a host reference (axpy_host_ref.cu): the worker's
#    host-reference path (host copies of the inputs, the call, the outputs
#    as the truth, the guard zones) runs for real here, where no GPU does.
# The stand-in's one default device throughout; its several devices
# (AOTC_FAKE_HIP_DEVICES) and tune --devices: hip-devices.sh.
# Usage: hip-stand-in.sh AOTC REPO_ROOT FAKE_LIBAMDHIP64
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
src=tests/codegen/rocm/axpy.cu
export AOTC_CACHE_DIR="$tmp/cache"

AOTC_HIP_LIBRARY=/nonexistent "$aotc" tune $src --arch gfx90a --db "$tmp/none" >"$tmp/log" 2>&1
st=$?
[ $st = 3 ] && grep -q "HIP runtime not found: no ROCm runtime on this machine (/nonexistent" "$tmp/log" &&
	ok "no HIP runtime: tune says so (exit 3)" || bad "no HIP runtime: exit $st" "$(cat "$tmp/log")"
AOTC_HIP_LIBRARY=/nonexistent "$aotc" compile $src --arch gfx90a --db tests/codegen/rocm -o "$tmp/comp" >"$tmp/log" 2>&1
st=$?
[ $st = 0 ] && grep -q "emitting from the tuning database" "$tmp/log" && [ -f "$tmp/comp/_aot_axpy_rocm_gfx90a.hip" ] &&
	ok "no HIP runtime: compile emits from the database" || bad "no HIP runtime: compile: exit $st" "$(cat "$tmp/log")"

real=
for l in /opt/rocm/lib/libamdhip64.so /usr/lib/x86_64-linux-gnu/libamdhip64.so.5; do
	[ -e "$l" ] && real=$l && break
done
if [ -n "$real" ] && ! [ -e /dev/kfd ]; then
	AOTC_HIP_LIBRARY=$real "$aotc" tune $src --arch gfx90a --db "$tmp/none" >"$tmp/log" 2>&1
	st=$?
	[ $st = 3 ] && grep -q "no AMD GPU on this machine: .*libamdhip64.* loaded, but" "$tmp/log" &&
		ok "ROCm without a GPU: tune says what it found (exit 3)" ||
		bad "ROCm without a GPU: exit $st" "$(cat "$tmp/log")"
else
	echo "skip: no ROCm runtime without a GPU here"
fi

if ! command -v hipcc >/dev/null 2>&1; then
	skip "no hipcc: the variants cannot be compiled; the stand-in is not run"
fi

# Small shapes: the stand-in runs every thread of every launch on the CPU.
echo '[{"n": 1024}, {"n": 4096}, {"n": 65536}]' >"$tmp/shapes.json"
export AOTC_HIP_LIBRARY="$fake"
unset AOTC_FAKE_HIP_DEVICES # its one default device
# The worker's own stderr comes through: a sanitizer's report in it fails.
# Timed launches on rotated copies of the buffers (not a GPU's default:
# docs/database.md), so that the statuses below are checked through them.
if AOTC_COLD_CACHE=rotate "$aotc" tune $src --arch gfx90a --db "$tmp/db" --shapes "$tmp/shapes.json" -j 2 >"$tmp/log" 2>&1 &&
	! grep -q "Sanitizer\|runtime error" "$tmp/log"; then
	ok "stand-in: tune runs"
else
	bad "stand-in: tune" "$(tail -20 "$tmp/log")"
fi
# The timed launches rotated over copies of the buffers, as many as twice
# the stand-in's 1 MiB L2 takes.
grep -q "% of the timed launches on rotated copies" "$tmp/log" &&
	[ "$(json "$tmp"/db/axpy.*.json 'd["method"]["cold_cache"]')" = rotate ] &&
	ok "stand-in: timed launches on rotated copies, method rotate" ||
	bad "stand-in: no rotation" "$(grep 'measurements taken' "$tmp/log")"
# The statuses of the stand-in's variants in database $1 (wrong, out_of_bounds, fault for
# the three broken ones, ok elsewhere; or, with "all-wrong" as $2, wrong for every variant
# that ran): no output and exit 0 when so.
statuses() {
	python3 - "$1" "${2:-}" <<'END'
import json, sys
db = json.load(open(sys.argv[1]))
hw = db["hardware"]
problems = []
if hw.get("backend") != "rocm" or hw.get("arch") != "gfx90a" or "not a GPU" not in hw.get("name", ""):
    problems.append("hardware: %s" % hw)
want = {"axpy<64, 2>": "wrong", "axpy<128, 2>": "out_of_bounds", "axpy<512, 2>": "fault"}
names = [c["name"] for c in db["configs"]]
seen = {}
for m in db["measurements"]:
    seen.setdefault(names[m["config"]], set()).add(m["status"])
for name in names:
    expect = want.get(name, "wrong" if sys.argv[2] == "all-wrong" else "ok")
    if seen.get(name) != {expect}:
        problems.append("%s: %s, expected %s" % (name, sorted(seen.get(name, [])), expect))
ok = [m for m in db["measurements"] if m["status"] == "ok"]
if any(not (m["time_ms"] > 0) for m in ok):
    problems.append("an ok measurement without a time")
print("\n".join(problems))
sys.exit(1 if problems else 0)
END
}

db="$tmp/db/axpy.rocm_aotc_test_stand-in_not_a_GPU_5.2.json"
if [ -f "$db" ]; then
	ok "stand-in: the database is named by the hardware id (rocm_<name>_<version>)"
	statuses "$db" >"$tmp/check" 2>&1
	if [ $? = 0 ]; then
		ok "stand-in: wrong, out_of_bounds and fault where the stand-in misbehaves, ok elsewhere"
	else
		bad "stand-in: statuses" "$(cat "$tmp/check")"
	fi
	if "$aotc" emit $src --arch gfx90a --db "$tmp/db" -o "$tmp/emit" >"$tmp/log" 2>&1 &&
		! grep -q 'axpy<64, 2>\|axpy<128, 2>\|axpy<512, 2>' "$tmp/emit/_aot_axpy_rocm_gfx90a.hip"; then
		ok "stand-in: emit takes the database; no broken variant is dispatched"
	else
		bad "stand-in: emit" "$(cat "$tmp/log")"
	fi
else
	bad "stand-in: no database" "$(ls "$tmp/db" 2>&1)" "$(tail -5 "$tmp/log")"
fi

# A host reference (AOTC_REFERENCE naming a plain host function): hipcc builds it as host
# code, the worker calls it on host copies of the inputs, and the variants are checked
# against its outputs: the same statuses as against axpy.cu's reference kernel; every
# variant wrong against a reference broken on purpose; a reference that writes past a
# buffer, or crashes, loses the shape, with a warning that says so.
href=tests/runtime/axpy_host_ref.cu
hdb="$tmp/hdb/axpy.rocm_aotc_test_stand-in_not_a_GPU_5.2.json"
if "$aotc" tune $href --arch gfx90a --db "$tmp/hdb" --shapes "$tmp/shapes.json" -j 2 >"$tmp/log" 2>&1 &&
	! grep -q "Sanitizer\|runtime error\|reference failed" "$tmp/log" && statuses "$hdb" >"$tmp/check" 2>&1; then
	ok "stand-in, host reference: wrong, out_of_bounds and fault where the stand-in misbehaves, ok elsewhere"
else
	bad "stand-in, host reference" "$(tail -20 "$tmp/log")" "$(cat "$tmp/check" 2>/dev/null)"
fi
echo '[{"n": 1024}]' >"$tmp/one.json"
AXPY_HOST_BREAK=wrong "$aotc" tune $href --arch gfx90a --db "$tmp/hdb-wrong" --shapes "$tmp/one.json" -j 2 >"$tmp/log" 2>&1
st=$?
if [ $st = 4 ] && statuses "$tmp/hdb-wrong/axpy.rocm_aotc_test_stand-in_not_a_GPU_5.2.json" all-wrong >"$tmp/check" 2>&1; then
	ok "stand-in, host reference: it is the truth (every variant wrong against a wrong one, exit 4)"
else
	bad "stand-in, wrong host reference: exit $st" "$(tail -8 "$tmp/log")" "$(cat "$tmp/check" 2>/dev/null)"
fi
AXPY_HOST_BREAK=past "$aotc" tune $href --arch gfx90a --db "$tmp/hdb-past" --shapes "$tmp/one.json" -j 2 >"$tmp/log" 2>&1
grep -q "shape n=1024: the reference failed (error: the host reference writes outside its buffers: y: written past its end)" "$tmp/log" &&
	ok "stand-in, host reference writing past a buffer: the shape is lost, with a warning" ||
	bad "stand-in, host reference writing past a buffer" "$(tail -8 "$tmp/log")"
AXPY_HOST_BREAK=crash "$aotc" tune $href --arch gfx90a --db "$tmp/hdb-crash" --shapes "$tmp/one.json" -j 2 >"$tmp/log" 2>&1
# Killed by SIGSEGV; under AddressSanitizer, which reports the fault, exited.
grep -q "shape n=1024: the reference failed (worker \(killed by signal\|exited with status\)" "$tmp/log" &&
	ok "stand-in, host reference that crashes: the worker only, the shape is lost with a warning" ||
	bad "stand-in, host reference that crashes" "$(tail -8 "$tmp/log")"

# A device of another architecture: named, exit 3.
"$aotc" tune $src --arch gfx908 --db "$tmp/db908" --shapes "$tmp/shapes.json" -j 2 >"$tmp/log" 2>&1
st=$?
[ $st = 3 ] && grep -q "no gfx908 among the AMD GPUs here (0: aotc test stand-in (not a GPU) (gfx90a))" "$tmp/log" &&
	ok "stand-in: --arch gfx908 names the gfx90a device found (exit 3)" ||
	bad "stand-in: gfx908: exit $st" "$(tail -5 "$tmp/log")"
finish
