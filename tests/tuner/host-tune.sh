#!/bin/sh
# The tuner for real on the CPU (docs/spec.md §5, §6): planted failures get their
# status, reruns resume, a kill -9 loses nothing recorded, --budget stops and
# resumes, a changed source invalidates, bad inputs are diagnosed.
# Usage: host-tune.sh AOTC REPO_ROOT
aotc=$1
root=$2
here=$root/tests/tuner
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"

. "$(dirname "$0")/../lib.sh"

# check NAME STATUS WANT: exit status as wanted.
check() {
	if [ "$2" -eq "$3" ]; then ok "$1"; else bad "$1" "exit $2, expected $3" "$(tail -5 "$tmp/log")"; fi
}

# py SCRIPT ARGS: a Python check on a database; prints what is wrong.
py() { python3 -c "$@"; }

# --- planted failures ------------------------------------------------------
# The hang spins until the timeout, on each of its 3 cells: 2 s (a correct
# variant's measurement takes about 0.1 s, its budget) keeps that short.
AOTC_MEASURE_TIMEOUT=2 "$aotc" tune "$here/faulty_host.cpp" --arch host --db "$tmp/db" \
	>"$tmp/log" 2>&1
check "faulty: tune exits 0" $? 0
db=$(ls "$tmp"/db/twice.*.json)
why=$(py '
import json, sys
db = json.load(open(sys.argv[1]))
names = [c["name"] for c in db["configs"]]
want = {0: "ok", 1: "wrong", 2: "fault", 3: "timeout", 4: "wrong", 5: "wrong"}
errors = []
for m in db["measurements"]:
    name = names[m["config"]]
    n = db["shapes"][m["shape"]][0]
    mode, scale = [int(v) for v in name[name.index("<") + 1:-1].split(",")]
    expect = "invalid" if scale == 2 and n % 2 else want[mode]
    if m["status"] != expect:
        errors.append("%s n=%d: %s, expected %s" % (name, n, m["status"], expect))
    if m["status"] == "ok" and not (m["time_ms"] > 0 and len(m["samples"]) >= 3):
        errors.append("%s n=%d: ok without samples" % (name, n))
if len(db["measurements"]) != len(names) * len(db["shapes"]):
    errors.append("%d measurements for %d cells" % (len(db["measurements"]), len(names) * len(db["shapes"])))
print("; ".join(errors))
' "$db")
if [ -z "$why" ]; then ok "faulty: every planted failure gets its status"; else bad "faulty: statuses" "$why"; fi
grep -q "failed: 6 wrong, 2 fault, 2 timeout" "$tmp/log" && ok "faulty: the table counts failures" ||
	bad "faulty: the table counts failures" "$(grep n=64 "$tmp/log")"

"$aotc" tune "$here/faulty_host.cpp" --arch host --db "$tmp/db" >"$tmp/log" 2>&1
check "faulty: rerun exits 0" $? 0
grep -q "0 measurements to take, 24 reused" "$tmp/log" && ok "faulty: rerun measures nothing" ||
	bad "faulty: rerun measures nothing" "$(head -3 "$tmp/log")"

"$aotc" tune "$here/all_wrong_host.cpp" --arch host --db "$tmp/db" >"$tmp/log" 2>&1
check "no variant correct: exit 4" $? 4

# --- kill -9 in the middle, then resume ------------------------------------
cp "$root/templates/matmul_host.cpp" "$tmp/mm.cpp"
setsid "$aotc" tune "$tmp/mm.cpp" --arch host --db "$tmp/db2" --shapes "$here/small_shapes.json" \
	>"$tmp/killed.log" 2>&1 &
pid=$!
journal=
for _ in $(seq 1 600); do
	journal=$(ls "$tmp"/db2/*.journal 2>/dev/null)
	if [ -n "$journal" ] && [ "$(wc -l <"$journal")" -ge 40 ]; then
		break
	fi
	sleep 0.1
done
kill -KILL "-$pid"
wait "$pid" 2>/dev/null
lines=$(wc -l <"$journal")
cp "$journal" "$tmp/killed.journal"
if [ "$lines" -ge 40 ] && [ "$lines" -lt 180 ]; then ok "kill: $lines measurements journalled when killed"
else bad "kill: journal" "$lines lines (wanted 40..179)" "$(tail -3 "$tmp/killed.log")"; fi
"$aotc" tune "$tmp/mm.cpp" --arch host --db "$tmp/db2" --shapes "$here/small_shapes.json" \
	>"$tmp/log" 2>&1
check "kill: resumed tune exits 0" $? 0
reused=$(sed -n 's/.* measurements to take, \([0-9]*\) reused.*/\1/p' "$tmp/log" | head -1)
# A cell is journalled again when its shape's close contenders are
# alternated: the cells, not the lines, are what a resume reuses.
cells=$(python3 "$here/journal_cells.py" "$tmp/killed.journal")
if [ -n "$reused" ] && [ "$reused" -ge "$cells" ]; then ok "kill: resume reused $reused (journal had $lines lines, $cells cells)"
else bad "kill: resume" "reused '$reused', journal had $lines lines, $cells cells" "$(head -2 "$tmp/log")"; fi
why=$(py '
import json, sys, glob
db = json.load(open(glob.glob(sys.argv[1] + "/*.host_*.json")[0]))
cells = {(m["config"], m["shape"]) for m in db["measurements"]}
if len(cells) != len(db["measurements"]) or len(cells) != len(db["configs"]) * len(db["shapes"]):
    print("%d measurements, %d cells, %d configs x %d shapes" % (len(db["measurements"]), len(cells), len(db["configs"]), len(db["shapes"])))
' "$tmp/db2")
if [ -z "$why" ]; then ok "kill: every cell measured exactly once"; else bad "kill: cells" "$why"; fi
[ ! -e "$journal" ] && ok "kill: journal folded into the document" || bad "kill: journal left behind"

# --- eval: the heuristic from db2, measured on new shapes ---------------------
echo '[{"M": 96, "N": 96, "K": 48}, {"M": 48, "N": 100, "K": 96}]' >"$tmp/new-shapes.json"
"$aotc" eval "$tmp/mm.cpp" --arch host --db "$tmp/db2" --shapes "$tmp/new-shapes.json" --quiet \
	>"$tmp/log" 2>&1
check "eval: exits 0" $? 0
grep -q "^aotc decision tree" "$tmp/log" && grep -q "M=48 N=100 K=96" "$tmp/log" &&
	ok "eval: slowdowns on the new shapes" || bad "eval: output" "$(cat "$tmp/log")"
[ -f "$(ls "$tmp"/db2/eval/*.json 2>/dev/null | head -1)" ] && ok "eval: held-out database written" ||
	bad "eval: held-out database"

# --- budget ----------------------------------------------------------------
# A 256 MiB flush before each timed launch: more work than the 1 s budget on
# any machine (the eviction of the buffers' lines, or the suite's 64 KiB
# flush, would let it finish first).
AOTC_COLD_CACHE=flush AOTC_HOST_FLUSH_BYTES=268435456 "$aotc" tune "$tmp/mm.cpp" --arch host --db "$tmp/db3" \
	--shapes "$here/small_shapes.json" --budget 1s >"$tmp/log" 2>&1
check "budget: exits 0" $? 0
grep -q "stopped at the --budget" "$tmp/log" && ok "budget: says it stopped" ||
	bad "budget: says it stopped" "$(tail -3 "$tmp/log")"
"$aotc" tune "$tmp/mm.cpp" --arch host --db "$tmp/db3" --budget 1x >"$tmp/log" 2>&1
check "budget: malformed duration is a usage error" $? 2

# --- a changed reference sets every measurement aside ------------------------
# (a comment alone keeps them: tests/tuner/db-key.sh)
echo "// changed" >>"$tmp/mm.cpp"
sed -i 's/            float acc = 0.0f;/            float acc = 0;/' "$tmp/mm.cpp"
"$aotc" tune "$tmp/mm.cpp" --arch host --db "$tmp/db2" --shapes "$here/small_shapes.json" \
	--budget 1s >"$tmp/log" 2>&1
grep -q "set aside 180 measurements of other code" "$tmp/log" &&
	ok "changed source: old measurements set aside with a message" ||
	bad "changed source: message" "$(head -3 "$tmp/log")"

# --- bad inputs ----------------------------------------------------------------
echo '[{"M": 64, "N": 64}]' >"$tmp/bad-shapes.json"
"$aotc" tune "$tmp/mm.cpp" --arch host --db "$tmp/db4" --shapes "$tmp/bad-shapes.json" >"$tmp/log" 2>&1
check "shapes file missing an argument: exit 1" $? 1
grep -q "'K' is missing" "$tmp/log" && ok "shapes file: names the argument" || bad "shapes file message" "$(cat "$tmp/log")"
mkdir -p "$tmp/db5"
"$aotc" tune "$here/all_wrong_host.cpp" --arch host --db "$tmp/db5" >/dev/null 2>&1
for f in "$tmp"/db5/*.json; do printf '{"aotc_db": 1, "kernel": ' >"$f"; done
"$aotc" tune "$here/all_wrong_host.cpp" --arch host --db "$tmp/db5" >"$tmp/log" 2>&1
check "corrupt database: exit 3" $? 3
grep -q "invalid tuning database" "$tmp/log" && ok "corrupt database: says so" || bad "corrupt database message" "$(cat "$tmp/log")"

finish
