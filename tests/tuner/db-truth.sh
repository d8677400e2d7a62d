#!/bin/sh
# The database stays true (docs/database.md): a journal left by a killed tune
# of an edited kernel is not replayed for the reverted one (it is set aside,
# and the reverted kernel's measurements come back), a second tuner
# on one database is refused while readers go on, temporary files of a
# killed save are removed, duplicates and malformed source hashes are
# rejected with the file and the entry named.
# Usage: db-truth.sh AOTC REPO_ROOT
aotc=$1
root=$2
here=$root/tests/tuner
tmp=$(mktemp -d)
bg=
trap '[ -n "$bg" ] && kill -KILL "-$bg" 2>/dev/null; rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"

. "$(dirname "$0")/../lib.sh"
check() {
	if [ "$2" -eq "$3" ]; then ok "$1"; else bad "$1" "exit $2, expected $3" "$(tail -5 "$tmp/log")"; fi
}
has() { # has NAME PATTERN: the last log has a line matching PATTERN
	if grep -q -- "$2" "$tmp/log"; then ok "$1"; else bad "$1" "no '$2' in:" "$(cat "$tmp/log")"; fi
}
py() { python3 -c "$@"; }

# wait_lines FILE N: until FILE has N lines (30 s at most)
wait_lines() {
	for _ in $(seq 1 600); do
		[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

k=$tmp/k.cpp
mkdir -p "$tmp/out"
cp "$here/truth_host.cpp" "$k"
db=$tmp/db
echo '[{"n": 1024}, {"n": 4096}]' >"$tmp/s1.json"
echo '[{"n": 262144}, {"n": 524288}, {"n": 1048576}, {"n": 2097152}, {"n": 1024}, {"n": 4096}]' \
	>"$tmp/s21.json"
tune() { "$aotc" tune "$k" --arch host --db "$db" "$@"; }
# edit: a change to the kernel's code (a comment would keep its measurements)
edit() { sed -i 's/for (int j = 0; j < U \&\& i + j < n; j++)/for (int j = 0; j < U \&\& i + j < n; ++j)/' "$k"; }

# --- edit, start tuning, kill, revert: the edited source's journal is not reused
tune --shapes "$tmp/s1.json" >"$tmp/log" 2>&1
check "tune A: exits 0" $? 0
doc=$(ls "$db"/*.json)
cp "$doc" "$tmp/a.json"
edit
cmp -s "$k" "$here/truth_host.cpp" && bad "the edit changes the kernel" || ok "the edit changes the kernel"
setsid "$aotc" tune "$k" --arch host --db "$db" --shapes "$tmp/s21.json" >"$tmp/b.log" 2>&1 &
bg=$!
wait_lines "$doc.journal" 4
kill -KILL "-$bg"
wait "$bg" 2>/dev/null
bg=
lines=$(wc -l <"$doc.journal")
if [ "$lines" -ge 4 ] && [ "$lines" -lt 24 ]; then ok "edited B: killed with $lines measurements journalled"
else bad "edited B: journal when killed" "$lines lines (wanted 4..23)" "$(tail -3 "$tmp/b.log")"; fi
grep -q '"source_hash":"[0-9a-f]\{32\}"' "$doc.journal" && ok "journal lines carry the source hash" ||
	bad "journal lines carry the source hash" "$(head -1 "$doc.journal")"
cp "$here/truth_host.cpp" "$k"
tune --shapes "$tmp/s21.json" >"$tmp/log" 2>&1
check "reverted A: exits 0" $? 0
has "reverted A: sets the edited kernel's journal aside" "set aside $lines measurements of other code"
has "reverted A: brings back what A measured" "brought back 12 measurements of this code"
has "reverted A: the cells only B measured are measured again" "24 measurements to take, 12 reused"
why=$(py '
import json, sys
a, now = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def cells(d):
    return {(d["configs"][m["config"]]["name"], tuple(d["shapes"][m["shape"]])): m for m in d["measurements"]}
ca, cn = cells(a), cells(now)
errs = ["%s %s: %s, was %s" % (k[0], k[1], cn.get(k), m) for k, m in ca.items() if cn.get(k) != m]
if len(cn) != 36 or now["source_hash"] != a["source_hash"]:
    errs.append("%d cells, hash %s" % (len(cn), now["source_hash"]))
print("; ".join(errs[:3]))
' "$tmp/a.json" "$doc")
if [ -z "$why" ]; then ok "reverted A: every cell A measured keeps its measurement; 36 cells"
else bad "reverted A: cells" "$why"; fi
[ ! -e "$doc.journal" ] && ok "reverted A: journal folded and removed" || bad "reverted A: journal left"

# Tuning the edited source again after such a kill keeps what it measured.
db2=$tmp/db2
"$aotc" tune "$k" --arch host --db "$db2" --shapes "$tmp/s1.json" >"$tmp/log" 2>&1
edit
setsid "$aotc" tune "$k" --arch host --db "$db2" --shapes "$tmp/s21.json" >"$tmp/b.log" 2>&1 &
bg=$!
wait_lines "$(ls "$db2"/*.json).journal" 4
kill -KILL "-$bg"
wait "$bg" 2>/dev/null
bg=
lines=$(wc -l <"$(ls "$db2"/*.json).journal")
# A cell is journalled again when its shape's close contenders are
# alternated (timing decides which): a resume reuses the cells, not the lines.
cells=$(python3 "$here/journal_cells.py" "$(ls "$db2"/*.json).journal")
"$aotc" tune "$k" --arch host --db "$db2" --shapes "$tmp/s21.json" >"$tmp/log" 2>&1
check "edited B again: exits 0" $? 0
n=$(grep -c '"config"' "$db2/superseded/$(basename "$(ls "$db2"/*.json)")" 2>/dev/null)
[ "$n" = 12 ] && ok "edited B again: A's 12 measurements set aside in superseded/" ||
	bad "edited B again: A's measurements set aside" "$n lines in $(ls -R "$db2")"
has "edited B again: its own journal reused" "$((36 - cells)) measurements to take, $cells reused"
cp "$here/truth_host.cpp" "$k"

# A journal line of an older aotc (no source hash) is not reused either.
py '
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"config": d["configs"][0]["name"], "values": d["configs"][0]["values"],
                  "shape": [8192], "status": "ok", "time_ms": 1.0, "samples": [1.0]}))
' "$doc" >"$doc.journal"
tune --shapes "$tmp/s1.json" >"$tmp/log" 2>&1
check "journal without source hash: exits 0" $? 0
has "journal without source hash: ignored" "ignored 1 journal line measured from another version"
grep -q '"shapes":' "$doc" && ! grep -q '\[8192\]' "$doc" && ok "journal without source hash: not in the document" ||
	bad "journal without source hash: in the document"

# --- two tuners on one database: the second is refused, readers go on ----
# Enough work that the first tuner still holds the lock when the second
# starts, however loaded the machine (with 5 shapes it could finish first).
python3 -c 'import json; print(json.dumps([{"n": 1048576 + 16 * i} for i in range(60)]))' >"$tmp/s3.json"
setsid "$aotc" tune "$k" --arch host --db "$db" --shapes "$tmp/s3.json" >"$tmp/first.log" 2>&1 &
bg=$!
wait_lines "$doc.journal" 1
tune --shapes "$tmp/s3.json" >"$tmp/log" 2>&1
check "second tuner: exit 3" $? 3
has "second tuner: names the holder's pid" "another aotc (pid $bg) is tuning this database"
grep -q "measurements to take" "$tmp/log" && bad "second tuner: measured nothing" "$(cat "$tmp/log")" ||
	ok "second tuner: measured nothing"
"$aotc" report "$doc" >"$tmp/log" 2>&1
check "report while a tuner holds the lock: exit 0" $? 0
"$aotc" emit "$k" --arch host --db "$db" -o "$tmp/out" --quiet >"$tmp/log" 2>&1
check "emit while a tuner holds the lock: exit 0" $? 0
kill -KILL "-$bg"
wait "$bg" 2>/dev/null
bg=
[ -e "$doc.lock" ] && ok "killed tuner: its lock file stays" || bad "killed tuner: lock file gone"
tune --shapes "$tmp/s3.json" --budget 1s >"$tmp/log" 2>&1
check "after the holder died: the lock is taken, exit 0" $? 0
[ ! -e "$doc.lock" ] && ok "lock file removed at the end" || bad "lock file left at the end"

# --- temporary files of a killed save are removed under the lock ---------
: >"$doc.tmpAb12Cd"
: >"$doc.journal.tmpXy34Zw"
: >"$db/other.json.tmpAb12Cd"
"$aotc" report "$doc" >/dev/null 2>&1
[ -e "$doc.tmpAb12Cd" ] && ok "report leaves temporary files alone" || bad "report removed a temporary file"
tune --shapes "$tmp/s1.json" >"$tmp/log" 2>&1
check "stale temporary files: tune exits 0" $? 0
has "stale temporary files: says so" "removed 2 temporary files left beside"
[ ! -e "$doc.tmpAb12Cd" ] && [ ! -e "$doc.journal.tmpXy34Zw" ] && ok "stale temporary files: removed" ||
	bad "stale temporary files: still there" "$(ls "$db")"
[ -e "$db/other.json.tmpAb12Cd" ] && ok "another document's temporary file is kept" ||
	bad "another document's temporary file removed"
rm -f "$db/other.json.tmpAb12Cd"

# --- duplicates and malformed source hashes are rejected -------------------
cp "$doc" "$tmp/good.json"
# mutate EXPR: the document rewritten by a Python expression on d
mutate() {
	py "
import json, sys
d = json.load(open(sys.argv[1]))
$1
json.dump(d, open(sys.argv[1], 'w'))
" "$doc"
}
mutate 'd["measurements"].append(dict(d["measurements"][0]))'
n=$(py 'import json, sys; print(len(json.load(open(sys.argv[1]))["measurements"]) - 1)' "$doc")
"$aotc" report "$doc" >"$tmp/log" 2>&1
check "duplicate measurement: report exit 3" $? 3
has "duplicate measurement: names the file and both entries" \
	"$doc: error: invalid tuning database: measurements\[$n\] repeats measurements\[0\]: config 0 'scale<1, 1>', shape 0 (n="
tune --shapes "$tmp/s1.json" >"$tmp/log" 2>&1
check "duplicate measurement: tune exit 3" $? 3
"$aotc" emit "$k" --arch host --db "$db" -o "$tmp/out" >"$tmp/log" 2>&1
check "duplicate measurement: emit exit 3" $? 3
has "duplicate measurement: emit names the entry" "measurements\[$n\] repeats"
cp "$tmp/good.json" "$doc"
mutate 'd["shapes"].append(d["shapes"][1])'
"$aotc" report "$doc" >"$tmp/log" 2>&1
check "duplicate shape: exit 3" $? 3
has "duplicate shape: named" "shapes\[[0-9]*\] repeats shapes\[1\]"
cp "$tmp/good.json" "$doc"
mutate 'd["configs"].append(dict(d["configs"][2]))'
"$aotc" report "$doc" >"$tmp/log" 2>&1
check "duplicate config: exit 3" $? 3
has "duplicate config: named" "configs\[6\] repeats config 2 'scale<"
for h in '"C" * 32' '"c" * 31' '"c" * 33' '"g" * 32' '""' '"c" * 31 + "-"'; do
	cp "$tmp/good.json" "$doc"
	mutate "d['source_hash'] = $h"
	"$aotc" report "$doc" >"$tmp/log" 2>&1
	check "source_hash $h: report exit 3" $? 3
	has "source_hash $h: says so" "$doc: error: invalid tuning database: source_hash is not 32 lowercase hex digits"
done
cp "$tmp/good.json" "$doc"
mutate 'd["source_hash"] = "C" * 32'
tune --shapes "$tmp/s1.json" >"$tmp/log" 2>&1
check "bad source_hash: tune exit 3" $? 3
cp "$tmp/good.json" "$doc"
py '
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"source_hash": "XYZ", "config": d["configs"][0]["name"], "values": d["configs"][0]["values"],
                  "shape": [8192], "status": "ok", "time_ms": 1.0}))
' "$doc" >"$doc.journal"
tune --shapes "$tmp/s1.json" >"$tmp/log" 2>&1
check "bad source_hash in the journal: tune exit 3" $? 3
has "bad source_hash in the journal: names the line" \
	"$doc.journal:1:1: error: invalid tuning database: source_hash is not 32 lowercase hex digits"
"$aotc" report "$doc" >"$tmp/log" 2>&1
check "bad source_hash in the journal: report exit 3" $? 3

finish
