#!/bin/sh
# Measurements that cannot be fooled (docs/spec.md §5), on the CPU: planted variants
# that write outside their output (one element past, one before, 64 bytes
# and 64 KiB past) get out_of_bounds (or fault) without touching the
# reference or any other measurement; one that computes only on its first
# call and one that hands back a cached result are wrong.
# Usage: guards.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"

"$aotc" tune "$root/tests/tuner/oob_host.cpp" --arch host --db "$tmp/db" >"$tmp/log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL guards: tune exits $rc"
	tail -5 "$tmp/log"
	exit 1
fi
exec python3 - "$tmp"/db/twice.*.json <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
names = [c["name"] for c in db["configs"]]
want = {0: {"ok"}, 1: {"out_of_bounds"}, 2: {"out_of_bounds"},
        # 64 KiB past the end: in the guard zone, or past it into a guard page
        3: {"out_of_bounds", "fault"}, 4: {"out_of_bounds"}, 5: {"wrong"}, 6: {"wrong"}}
notes = {1: "past its end (first changed byte: end + 0)", 2: "before its start (first changed byte: start - 4)",
         4: "past its end (first changed byte: end + 64)", 6: "on the last timed launch"}
fails = []
seen = set()
for m in db["measurements"]:
    mode = int(names[m["config"]][len("twice<"):-1])
    n = db["shapes"][m["shape"]][0]
    seen.add((mode, n))
    what = "twice<%d> n=%d" % (mode, n)
    if m["status"] not in want[mode]:
        fails.append("%s: %s (%s), expected %s" % (what, m["status"], m.get("note", ""), "/".join(want[mode])))
    elif mode in notes and notes[mode] not in m.get("note", ""):
        fails.append("%s: note %r lacks %r" % (what, m.get("note", ""), notes[mode]))
    if m["status"] == "ok" and not (m["time_ms"] > 0 and len(m["samples"]) >= 3 and m["error"] < 1e-6):
        fails.append("%s: ok without samples or with an error" % what)
# every cell measured: no fault took a shape's reference down
if len(seen) != len(names) * len(db["shapes"]):
    fails.append("%d cells of %d measured" % (len(seen), len(names) * len(db["shapes"])))
for f in fails:
    print("FAIL guards: " + f)
print("PASS guards: every planted fault caught, the correct variant ok on every shape" if not fails else "")
sys.exit(1 if fails else 0)
PY
