#!/bin/sh
# Measurements keyed by what was compiled (docs/database.md, "The key"; issue
# 33): on the host backend, an edit to a comment, to host code or to the
# layout keeps every measurement; adding a tunable value or a shape measures
# only the new cells; a real change to one function re-measures only its
# cells and sets the old ones aside, and a revert brings them back; a changed
# reference or -D re-measures all. Databases of two hardware ids for one
# kernel and architecture are never merged, and shards measure common anchor
# cells that emit compares.
# Usage: db-key.sh AOTC REPO_ROOT
unset AOTC_NO_SAVE
aotc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
export AOTC_HOST_FLUSH_BYTES=65536
. "$(dirname "$0")/../lib.sh"
check() {
	if [ "$2" -eq "$3" ]; then ok "$1"; else bad "$1" "exit $2, expected $3" "$(tail -8 "$tmp/log")"; fi
}
has() { if grep -qF -- "$2" "$tmp/log"; then ok "$1"; else bad "$1" "no '$2' in:" "$(tail -12 "$tmp/log")"; fi; }
hasnt() { if grep -qF -- "$2" "$tmp/log"; then bad "$1" "'$2' in:" "$(grep -F -- "$2" "$tmp/log" | head -3)"; else ok "$1"; fi; }
# taken N: the tune in $tmp/log measured N cells
taken() {
	got=$(sed -n 's/^\([0-9]*\) measurements taken.*/\1/p' "$tmp/log")
	if [ "$got" = "$2" ]; then ok "$1 ($2 measured)"; else bad "$1" "measured '$got', expected $2" "$(tail -6 "$tmp/log")"; fi
}
codes() { "$aotc" parse "$1" | grep '"code"'; }

cd "$tmp" || exit 1
cp "$root/tests/families/rowsum_alt.cpp" k.cpp
cp k.cpp k.orig
echo '[{"rows": 16, "cols": 64}, {"rows": 64, "cols": 512}]' >shapes.json
tune() { "$aotc" tune k.cpp --arch host --db db --shapes shapes.json "$@" >"$tmp/log" 2>&1; }

# --- The code: tokens, not bytes ---------------------------------------------
codes k.cpp >codes.orig
n=$(wc -l <codes.orig)
if [ "$n" -eq 3 ]; then ok "parse gives a code to the kernel and its two alternatives"; else bad "three codes" "$(cat codes.orig)"; fi
{ cat k.orig; printf '\n// a comment at the end\nint main() { return 0; }\n'; } >k.cpp
sed -i 's|^    for (int rep = 0; rep < 2; ++rep)|    for (int rep = 0;   rep < 2; ++rep) /* spaced */|' k.cpp
codes k.cpp >codes.new
if [ -s codes.orig ] && cmp -s codes.orig codes.new; then ok "comments, spaces and host code leave every code as it was"; else bad "codes kept" "$(diff codes.orig codes.new)"; fi
cp k.orig k.cpp

# --- Tuning after edits -----------------------------------------------------
tune
check "first tune exits 0" $? 0
taken "first tune measures every cell" 10
db=$(ls db/rowsum.*.json)

{ cat k.orig; printf '\n// a comment at the end\nint main() { return 0; }\n'; } >k.cpp
tune
check "tune after a comment and host code exits 0" $? 0
taken "a comment and host code keep every measurement" 0
"$aotc" emit k.cpp --arch host --db db -o out >"$tmp/log" 2>&1
check "emit after a comment exits 0" $? 0
hasnt "emit says nothing of another version" "another version"

# one alternative's body changes: only its cells (2 variants x 2 shapes)
sed -i 's/for (int rep = 0; rep < 4; ++rep)/for (int rep = 0; rep < 3; ++rep)/' k.cpp
codes k.cpp >codes.new
if [ "$(diff codes.orig codes.new | grep -c '^>')" -eq 1 ]; then ok "an edit to one alternative changes its code only"; else bad "one code changed" "$(diff codes.orig codes.new)"; fi
"$aotc" emit k.cpp --arch host --db db -o out >"$tmp/log" 2>&1
check "emit before tuning the edit exits 0" $? 0
has "emit leaves the edited function's measurements out" "4 measurements of rowsum_twopass were taken from another version of its code"
tune
check "tune after an edit to rowsum_twopass exits 0" $? 0
taken "only rowsum_twopass is measured again" 4
has "the old measurements are set aside" "set aside 4 measurements"
if [ -f "db/superseded/$(basename "$db")" ]; then ok "db/superseded/ holds them"; else bad "superseded file" "$(ls -R db)"; fi
"$aotc" emit k.cpp --arch host --db db -o out >"$tmp/log" 2>&1
check "emit after the tune exits 0" $? 0
hasnt "emit is quiet again" "another version"

cp k.orig k.cpp
tune
check "tune after the revert exits 0" $? 0
taken "a revert measures nothing" 0
has "a revert brings the old measurements back" "brought back 4 measurements"

# a tunable value and a shape: only the new cells (6 x 3 - 5 x 2)
sed -i 's/AOTC_TUNE(SPLIT, 2, 8)/AOTC_TUNE(SPLIT, 2, 4, 8)/' k.cpp
echo '[{"rows": 16, "cols": 64}, {"rows": 64, "cols": 512}, {"rows": 32, "cols": 256}]' >shapes.json
tune
check "tune with a new value and shape exits 0" $? 0
taken "a new value and a new shape measure only the new cells" 8

# the reference is every variant's truth; -D may change every function
sed -i 's/        double s = 0;/        double s = 0.0;/' k.cpp
tune
check "tune after an edit to the reference exits 0" $? 0
taken "a changed reference measures every cell again" 18
tune -D AOTC_TEST_FLAG=1
check "tune with a new -D exits 0" $? 0
taken "a new -D measures every cell again" 18

# --- Hardware ids and shards ------------------------------------------------
python3 - "$db" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["hardware"]["id"] = "host_Other_CPU_1.0"
json.dump(d, open(sys.argv[1].replace(".json", ".other.json"), "w"))
EOF
"$aotc" emit k.cpp --arch host --db db -D AOTC_TEST_FLAG=1 -o out >"$tmp/log" 2>&1
check "emit refuses databases of two hardware ids (exit 3)" $? 3
has "the refusal names the other hardware id" "(host_Other_CPU_1.0)"
has "the refusal names both files" "$(basename "$db" .json).other.json"
"$aotc" tune k.cpp --arch host --db db --shapes shapes.json -D AOTC_TEST_FLAG=1 --shard 1/2 >"$tmp/log" 2>&1
check "tune --shard beside another hardware id's database exits 3" $? 3
has "it says why" "shards of one --db must come from one hardware id"
rm -f db/*.other.json

# link: two emitted directories of one kernel and architecture, measured on
# two hardware ids, are refused with the ids named (every third shape of the
# committed database: its size is not the point, and each emit learns)
mkdir dA dB
python3 "$root/tests/cut-db.py" "$root/templates/softmax.cuda_NVIDIA_H200_13.0.json" \
	dA/softmax.cuda_NVIDIA_H200_13.0.json --shapes 3
python3 - dA/softmax.cuda_NVIDIA_H200_13.0.json dB/softmax.cuda_NVIDIA_H100_13.0.json <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
d["hardware"]["id"] = "cuda_NVIDIA_H100_13.0"
json.dump(d, open(sys.argv[2], "w"))
EOF2
"$aotc" emit "$root/templates/softmax.cu" --arch sm90 --db dA -o linkA >"$tmp/log" 2>&1 &&
	"$aotc" emit "$root/templates/softmax.cu" --arch sm90 --db dB -o linkB >>"$tmp/log" 2>&1
check "emit from each hardware id alone exits 0" $? 0
mkdir linked
"$aotc" link linkA linkB -o linked/aot_softmax.c >"$tmp/log" 2>&1
check "link refuses two hardware ids for one architecture (exit 1)" $? 1
has "link names both hardware ids" "(sm90, measured on cuda_NVIDIA_H100_13.0)"

cp k.orig k.cpp
rm -rf db
# small shapes: the anchors' times that emit compares are planted below, so
# nothing here depends on how steady this machine's timings are
echo '[{"rows": 16, "cols": 64}, {"rows": 64, "cols": 512}, {"rows": 32, "cols": 256}]' >shapes.json
for i in 1 2; do
	tune --shard $i/2
	check "tune --shard $i/2 exits 0" $? 0
done
python3 - db <<'EOF' >"$tmp/anchors"
import glob, json, sys
sets = []
for p in sorted(glob.glob(sys.argv[1] + "/rowsum.*.shard*of2.json")):
    d = json.load(open(p))
    sets.append({(d["configs"][m["config"]]["name"], tuple(d["shapes"][m["shape"]])) for m in d["measurements"]})
    print("machine", d.get("machine"))
common = sets[0] & sets[1]
print("common", len(common))
EOF
if grep -q "^common [4-9]$" "$tmp/anchors"; then ok "every shard measures the 2 anchor configurations on every shape"; else bad "anchors" "$(cat "$tmp/anchors")"; fi
if [ "$(grep -c '^machine [^N]' "$tmp/anchors")" -eq 2 ]; then ok "shards record the machine"; else bad "machine" "$(cat "$tmp/anchors")"; fi
# Agreeing shards, made so: shard 1's samples made steady (a 2 % spread: a
# loaded machine's real spread can exceed the 3x below), shard 2's anchor
# cells given shard 1's times (+1 %). Two real tunes on one loaded CI machine
# can differ by more than their noise; whether emit tells agreeing from
# disagreeing is what counts.
python3 - db <<'EOF'
import glob, json, sys
p1, p2 = sorted(glob.glob(sys.argv[1] + "/rowsum.*.shard*of2.json"))
d1, d2 = json.load(open(p1)), json.load(open(p2))
def key(d, m):
    return (d["configs"][m["config"]]["name"], tuple(d["shapes"][m["shape"]]))
for m in d1["measurements"]:
    if m["status"] == "ok":
        m["samples"] = [m["time_ms"] * (1 + 0.01 * (i % 3 - 1)) for i in range(len(m["samples"]))]
json.dump(d1, open(p1, "w"))
one = {key(d1, m): m for m in d1["measurements"] if m["status"] == "ok"}
for m in d2["measurements"]:
    a = one.get(key(d2, m))
    if a and m["status"] == "ok":
        m["time_ms"] = a["time_ms"] * 1.01
        m["samples"] = [s * 1.01 for s in a["samples"]]
        if "spread" in a:
            m["spread"] = a["spread"]
d2["machine"] = "other-node"
json.dump(d2, open(p2, "w"))
EOF
"$aotc" emit k.cpp --arch host --db db -o out >"$tmp/log" 2>&1
check "emit of agreeing shards exits 0" $? 0
hasnt "agreeing shards draw no warning" "not comparable"
has "emit notes that the two machines agree" "note: merged from 2 machines; the cells each measured that files before it measured too:"
has "... with other-node's anchors 1 % apart" "other-node (1 file) "
if grep -q "other-node (1 file) [0-9]* cells, 1\.0 % apart (median; noise [0-9.]* %)$" "$tmp/log"; then
	ok "... and comparable"; else bad "agreement note" "$(grep "merged from" "$tmp/log")"; fi
# the second machine's anchors 3x slower: their times are not comparable
python3 - db <<'EOF'
import glob, json, sys
p = sorted(glob.glob(sys.argv[1] + "/rowsum.*.shard2of2.json"))[0]
d = json.load(open(p))
d["machine"] = "other-node"
for m in d["measurements"]:
    if m["status"] == "ok":
        m["time_ms"] *= 3
        m["samples"] = [s * 3 for s in m["samples"]]
json.dump(d, open(p, "w"))
EOF
"$aotc" emit k.cpp --arch host --db db -o out >"$tmp/log" 2>&1
check "emit of disagreeing shards exits 0" $? 0
has "disagreeing anchors are named with the machines" "(machines other-node and"
if grep -q "other-node (1 file) [0-9]* cells, 2[0-9][0-9]\.[0-9] % apart (median; noise [0-9.]* %): NOT comparable" "$tmp/log"; then
	ok "... and the note says so"; else bad "disagreement note" "$(grep "merged from" "$tmp/log")"; fi
has "... not comparable" ": NOT comparable"

finish
