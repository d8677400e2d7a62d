#!/bin/sh
# AOTC_EXTERN on the CPU (docs/annotations.md, docs/database.md): library
# routines tuned beside the variants, checked against the reference (a
# wrong one is `wrong`), stored as {"name", "extern": true, "values": []},
# measured on every shape by either search, journalled and replayed; bad
# extern entries in IR or database files are refused.
# Usage: extern.sh AOTC REPO_ROOT
aotc=$1
root=$2
here=$root/tests/tuner
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache" AOTC_HOST_FLUSH_BYTES=65536
. "$(dirname "$0")/../lib.sh"
check() {
	if [ "$2" -eq "$3" ]; then ok "$1"; else bad "$1" "exit $2, expected $3" "$(tail -8 "$tmp/log")"; fi
}
has() { # NAME PATTERN: the log has a line matching PATTERN
	if grep -q -- "$2" "$tmp/log"; then ok "$1"; else bad "$1" "no line matching '$2'" "$(tail -8 "$tmp/log")"; fi
}
# cells DB SEARCH: what is wrong with the extern cells of a database, or nothing.
cells() {
	python3 -c '
import json, sys
db = json.load(open(sys.argv[1]))
want = {"copy_memcpy": "ok", "copy_wrong": "wrong"}
errors = []
ext = {i: c["name"] for i, c in enumerate(db["configs"]) if c.get("extern")}
if sorted(ext.values()) != sorted(want):
    errors.append("extern configs %s" % sorted(ext.values()))
for i, c in enumerate(db["configs"]):
    if c.get("extern") and ({k: v for k, v in c.items() if k != "code"} != {"name": c["name"], "extern": True, "values": []}
                            or len(c.get("code", "")) != 32):
        errors.append("entry %r" % c)
    if not c.get("extern") and "extern" in c:
        errors.append("variant entry %r" % c)
seen = {}
for m in db["measurements"]:
    if m["config"] in ext:
        name = ext[m["config"]]
        seen.setdefault(name, set()).add(m["shape"])
        if m["status"] != want[name]:
            errors.append("%s shape %d: %s" % (name, m["shape"], m["status"]))
        if m["status"] == "ok" and not (m["time_ms"] > 0 and len(m["samples"]) >= 3 and m["error"] <= 1e-5):
            errors.append("%s shape %d: ok without samples or error" % (name, m["shape"]))
        if m["status"] == "wrong" and "relative error" not in m.get("note", ""):
            errors.append("%s shape %d: note %r" % (name, m["shape"], m.get("note")))
for name in want:
    if len(seen.get(name, ())) != len(db["shapes"]):
        errors.append("%s measured on %d of %d shapes" % (name, len(seen.get(name, ())), len(db["shapes"])))
if db["search"]["strategy"] != sys.argv[2]:
    errors.append("search %s" % db["search"]["strategy"])
print("; ".join(errors))
' "$@"
}

# --- exhaustive: both externs on every shape, the wrong one wrong -------------
"$aotc" tune "$here/extern_host.cpp" --arch host --db "$tmp/db" >"$tmp/log" 2>&1
check "tune: exit 0" $? 0
has "tune: externs count as configurations" "4 configurations x 3 shapes"
has "tune: the wrong extern shows in the table" "failed: 1 wrong"
db=$(ls "$tmp"/db/copy.*.json)
why=$(cells "$db" exhaustive)
if [ -z "$why" ]; then ok "tune: extern entries and measurements"; else bad "tune: database" "$why"; fi

"$aotc" tune "$here/extern_host.cpp" --arch host --db "$tmp/db" >"$tmp/log" 2>&1
has "rerun: nothing to measure, nothing to compile" "0 to compile; 0 measurements to take, 12 reused"
"$aotc" tune "$here/extern_host.cpp" --arch host --db "$tmp/db" --verbose --seed 3 \
	--dump=configs >"$tmp/log" 2>/dev/null
python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
first = [(l["name"], l.get("extern", False), l["values"], l["sample"]) for l in lines[:2]]
assert first == [("copy_memcpy", True, [], True), ("copy_wrong", True, [], True)], first
assert all("extern" not in l for l in lines[2:]), lines
' "$tmp/log" && ok "dump=configs: the externs first, with extern and no values" ||
	bad "dump=configs" "$(cat "$tmp/log")"

# --- the model search measures them on every shape, never deprioritised ----
echo '[{"n": 4096}, {"n": 8192}, {"n": 12288}, {"n": 16384}]' >"$tmp/four.json"
"$aotc" tune "$here/extern_host.cpp" --arch host --db "$tmp/dbm" --search model \
	--shapes "$tmp/four.json" >"$tmp/log" 2>&1
check "model search: exit 0" $? 0
why=$(cells "$(ls "$tmp"/dbm/copy.*.json)" model)
if [ -z "$why" ]; then ok "model search: the wrong extern measured on all 4 shapes"
else bad "model search: database" "$why"; fi

# --- kill -9 while measuring: extern lines journalled and replayed ----------
python3 -c 'import json; print(json.dumps([{"n": 262144 + 16 * i} for i in range(40)]))' \
	>"$tmp/many.json"
setsid "$aotc" tune "$here/extern_host.cpp" --arch host --db "$tmp/dbk" --shapes "$tmp/many.json" \
	>"$tmp/killed.log" 2>&1 &
pid=$!
journal=
for _ in $(seq 1 600); do
	journal=$(ls "$tmp"/dbk/*.journal 2>/dev/null)
	if [ -n "$journal" ] && [ "$(wc -l <"$journal")" -ge 12 ]; then
		break
	fi
	sleep 0.05
done
kill -KILL "-$pid"
wait "$pid" 2>/dev/null
lines=$(wc -l <"$journal")
grep -q '"config":"copy_memcpy","extern":true,"code":"[0-9a-f]\{32\}","compiler":"[^"]*","values":\[\]' "$journal" &&
	ok "kill: an extern line journalled ($lines lines)" || bad "kill: journal" "$(head -3 "$journal")"
# A cell is journalled again when its shape's close contenders are
# alternated: the cells, not the lines, are what a resume reuses.
cells=$(python3 "$here/journal_cells.py" "$journal")
"$aotc" tune "$here/extern_host.cpp" --arch host --db "$tmp/dbk" --shapes "$tmp/many.json" \
	>"$tmp/log" 2>&1
check "kill: resumed tune exits 0" $? 0
reused=$(sed -n 's/.* measurements to take, \([0-9]*\) reused.*/\1/p' "$tmp/log" | head -1)
if [ -n "$reused" ] && [ "$reused" -ge "$cells" ]; then ok "kill: resume reused $reused (journal had $lines lines, $cells cells)"
else bad "kill: resume" "reused '$reused', journal had $lines lines, $cells cells" "$(head -2 "$tmp/log")"; fi
why=$(cells "$(ls "$tmp"/dbk/copy.*.json)" exhaustive)
if [ -z "$why" ]; then ok "kill: every extern cell once"; else bad "kill: database" "$why"; fi

# --- its libraries are linked into everything built from the file ----------
# (the file's code, the routine's too, is in every variant and caller)
sed 's/AOTC_EXTERN(copy_wrong, m)/AOTC_EXTERN(copy_wrong, aotc_no_such_lib)/' \
	"$here/extern_host.cpp" >"$tmp/nolib.cpp"
"$aotc" tune "$tmp/nolib.cpp" --arch host --compile-only -I "$here" >"$tmp/log" 2>&1
check "missing library: compile-only fails on the reference (exit 1)" $? 1
has "missing library: the linker names it" "cannot find -laotc_no_such_lib"
# every variant would fail the same way: none is compiled after the reference
if ! grep -q "configurations compiled" "$tmp/log" && grep -q "does not compile (no variant was compiled)" "$tmp/log"; then
	ok "missing library: nothing is compiled after the reference fails"
else
	bad "missing library: work after the reference failed" "$(tail -4 "$tmp/log")"
fi

# --- a database's extern entries are checked ---------------------------------
for case in "name:copy memcpy" "values:[1]" "flag:\"yes\""; do
	what=${case%%:*}
	rm -rf "$tmp/dbx"
	cp -r "$tmp/db" "$tmp/dbx"
	f=$(ls "$tmp"/dbx/copy.*.json)
	python3 -c '
import json, sys
path, what, value = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
old = "{\"name\":\"copy_memcpy\",\"extern\":true,\"values\":[],"
assert old in text, text
new = {"name": "{\"name\":\"%s\",\"extern\":true,\"values\":[]," % value,
       "values": "{\"name\":\"copy_memcpy\",\"extern\":true,\"values\":%s," % value,
       "flag": "{\"name\":\"copy_memcpy\",\"extern\":%s,\"values\":[]," % value}[what]
open(path, "w").write(text.replace(old, new))
' "$f" "$what" "${case#*:}"
	"$aotc" report "$f" >"$tmp/log" 2>&1
	check "database: extern entry with a bad $what refused (exit 3)" $? 3
	has "database: bad $what named" "invalid tuning database: .*extern"
done

# --- IR JSON: the externs travel and are checked -----------------------------
"$aotc" parse "$here/extern_host.cpp" >"$tmp/ir.json" 2>"$tmp/log"
check "IR: parse exits 0" $? 0
"$aotc" parse "$tmp/ir.json" >"$tmp/ir2.json" 2>"$tmp/log" && cmp -s "$tmp/ir.json" "$tmp/ir2.json" &&
	ok "IR: externs round-trip" || bad "IR: round trip" "$(diff "$tmp/ir.json" "$tmp/ir2.json" | head)"
for case in 'copy-memcpy:is not a C identifier' 'copy_wrong:given twice' 'copy_ref:is the reference' \
	'copy:is the kernel itself'; do
	name=${case%%:*}
	sed "s/\"name\": \"copy_memcpy\"/\"name\": \"$name\"/" "$tmp/ir.json" >"$tmp/bad.ir.json"
	"$aotc" parse "$tmp/bad.ir.json" >/dev/null 2>"$tmp/log"
	check "IR: extern '$name' refused (exit 1)" $? 1
	has "IR: extern '$name' says why" "${case#*:}"
done
sed 's/"m"$/"-lm"/' "$tmp/ir.json" >"$tmp/bad.ir.json"
"$aotc" parse "$tmp/bad.ir.json" >/dev/null 2>"$tmp/log"
check "IR: a library that is no identifier refused (exit 1)" $? 1
has "IR: the library named" "externs\[1\].libs\[0\]"

finish
