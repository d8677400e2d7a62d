#!/bin/sh
# Emit without relearning (issue 29): the dispatch saved beside the
# databases (dispatch/<kernel>.<arch>.json) is reused while its key holds,
# and emits the same bytes as learning; deleted, stale, corrupt, truncated
# or hostile, it is learnt again (same bytes, no crash, nothing said) and
# rewritten; a folder where it cannot be saved changes nothing; unchanged
# emitted files keep their mtimes; and the saved dispatches committed under
# templates/ are up to date (regenerate: see docs/database.md).
# Usage: emit-saved.sh AOTC REPO_ROOT
# The suite sets AOTC_NO_SAVE=1 (tests/meson.build): saving is what this tests.
unset AOTC_NO_SAVE
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
rerun="(rerun: $0 $aotc_real $root)"

# A copy of the committed softmax set, so nothing under templates/ changes,
# cut to every ninth variant (9 of 81, every shape): the dispatch is learnt
# again about 16 times below, and what is checked is that it is (the same
# bytes, the file rewritten), not what 81 variants learn. Its tree still
# has splits (the hostile files edit its inner nodes).
db=$tmp/db
mkdir -p "$db/eval"
for f in "$root"/templates/softmax.cuda_*.json "$root"/templates/eval/softmax.cuda_*.json; do
	case $f in */eval/*) out=$db/eval/${f##*/} ;; *) out=$db/${f##*/} ;; esac
	python3 "$root/tests/cut-db.py" "$f" "$out" --configs 9 || exit 1
done
saved=$db/dispatch/softmax.sm90.json
src=$root/templates/softmax.cu

# emit NAME OUT: emit into $tmp/OUT, the dispatch check beside it; says
# whether the saved dispatch was reused ($tmp/OUT.log).
emit() {
	"$aotc" emit "$src" --arch sm90 --db "$db" -o "$tmp/$2" --verbose >"$tmp/$2.log" 2>&1 &&
	"$aotc" __dispatch-check "$src" --arch sm90 --db "$db" >"$tmp/$2.check" 2>>"$tmp/$2.log"
	rc=$?
	if [ $rc -ne 0 ]; then bad "$1: exit $rc $rerun" "$(tail -5 "$tmp/$2.log")"; return 1; fi
	if grep -q "error\|warning" "$tmp/$2.log"; then bad "$1: says nothing" "$(cat "$tmp/$2.log")"; fi
	return 0
}
reused() { grep -q "is up to date: reused" "$tmp/$1.log"; }
same() {
	if diff -r "$tmp/learnt" "$tmp/$2" >/dev/null && cmp -s "$tmp/learnt.check" "$tmp/$2.check"; then ok "$1"
	else bad "$1" "$(diff -r "$tmp/learnt" "$tmp/$2" | head -5)" "$(cmp "$tmp/learnt.check" "$tmp/$2.check")"; fi
}

emit "no saved dispatch: learns" learnt
if [ -f "$saved" ] && ! reused learnt; then ok "learnt, then saved beside the database"; else bad "saved" "$(ls "$db")"; fi
cp "$saved" "$tmp/good.json"
emit "saved: loads" loaded
if reused loaded; then ok "the saved dispatch is reused"; else bad "reused" "$(cat "$tmp/loaded.log")"; fi
same "loaded: the same bytes and the same answers as learnt" loaded

rm "$saved"
emit "deleted" deleted && same "deleted: learnt again, same bytes" deleted
cmp -s "$saved" "$tmp/good.json" && ok "deleted: saved again, the same file" || bad "deleted: saved again"

sed 's/"key": "[0-9a-f]*"/"key": "00000000000000000000000000000000"/' "$tmp/good.json" >"$saved"
emit "stale key" stale && same "stale key: learnt again, same bytes" stale
reused stale && bad "stale key: not reused" || ok "stale key: not reused"
cmp -s "$saved" "$tmp/good.json" && ok "stale key: rewritten" || bad "stale key: rewritten"

# Corrupt, truncated and hostile files, each with the right key: refused.
i=0
for how in truncate garbage empty cycle order-range variant-name term-zero feature-text values-count \
           routine-range node-feature deep-chain; do
	i=$((i + 1))
	python3 - "$tmp/good.json" "$saved" "$how" <<'PY'
import json, sys
good, out, how = sys.argv[1:]
text = open(good).read()
d = json.loads(text)
if how == "truncate":
    open(out, "w").write(text[:len(text) // 2]); sys.exit()
if how == "garbage":
    open(out, "wb").write(b"\x00\xff{[" * 100); sys.exit()
if how == "empty":
    open(out, "w").write(""); sys.exit()
if how == "cycle":
    inner = [i for i, n in enumerate(d["nodes"]) if n[0] >= 0]
    d["nodes"][inner[-1]][2] = 0
elif how == "order-range":
    d["orders"][0].append(len(d["variants"]))
elif how == "variant-name":
    d["variants"][0]["name"] = "softmax<1, 2, 3>\"); system(\"rm -rf /"
elif how == "term-zero":
    d["variants"][0]["terms"] = [[0, "multiple", 0]]
elif how == "feature-text":
    d["features"][0]["text"] = "rows); abort(); (0"
elif how == "values-count":
    d["variants"][0]["values"].append(1)
elif how == "routine-range":
    d["variants"][0]["routine"] = 7
elif how == "node-feature":
    d["nodes"][0][0] = 99
elif how == "deep-chain":
    n = len(d["nodes"])
    d["nodes"] = [[0, 1, j + 1, j + 1, -1] for j in range(200000)] + [[-1, 0, -1, -1, 0]]
json.dump(d, open(out, "w"))
PY
	emit "$how" "hostile$i" || continue
	reused "hostile$i" && bad "$how: refused $rerun" || ok "$how: refused, learnt again"
	same "$how: same bytes" "hostile$i"
	cmp -s "$saved" "$tmp/good.json" && ok "$how: rewritten" || bad "$how: rewritten"
done

# Where it cannot be saved (the name taken by a folder), emit still works and
# says nothing without --verbose.
rm "$saved"
mkdir "$saved"
"$aotc" emit "$src" --arch sm90 --db "$db" -o "$tmp/nosave" >"$tmp/log" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q "warning\|error\|note" "$tmp/log"; then ok "cannot save: emits, says nothing"
else bad "cannot save: emits, says nothing" "exit $rc" "$(cat "$tmp/log")"; fi
diff -r "$tmp/learnt" "$tmp/nosave" >/dev/null && ok "cannot save: same bytes" || bad "cannot save: same bytes"
"$aotc" emit "$src" --arch sm90 --db "$db" -o "$tmp/nosave" --verbose >"$tmp/log" 2>&1
n=$(grep -c "note:" "$tmp/log")
[ "$n" -eq 1 ] && ok "cannot save: one note under --verbose" || bad "cannot save: one note under --verbose" "$(cat "$tmp/log")"
rmdir "$saved"
cp "$tmp/good.json" "$saved"

# Unchanged files keep their mtimes; a changed database rewrites them.
"$aotc" emit "$src" --arch sm90 --db "$db" -o "$tmp/mt" >/dev/null 2>&1
touch -d '2001-01-01 00:00:00' "$tmp"/mt/*
old=$(stat -c %Y "$tmp"/mt/_aot_softmax_cuda_sm90.c)
"$aotc" emit "$src" --arch sm90 --db "$db" -o "$tmp/mt" >/dev/null 2>&1
kept=0
for f in "$tmp"/mt/*; do [ "$(stat -c %Y "$f")" = "$old" ] && kept=$((kept + 1)); done
total=$(ls "$tmp/mt" | wc -l)
[ "$kept" -eq "$total" ] && ok "emit again: all $total files keep their mtime" || bad "mtimes kept" "$kept of $total"
rm -r "$db/eval" # the held-out figures leave the header
"$aotc" emit "$src" --arch sm90 --db "$db" -o "$tmp/mt" >/dev/null 2>&1
[ "$(stat -c %Y "$tmp"/mt/_aot_softmax_cuda_sm90.c)" != "$old" ] && ok "a changed database rewrites the dispatch" ||
	bad "a changed database rewrites the dispatch"

# The committed saved dispatches are up to date: a change to learning (or to
# a committed database) must regenerate them (docs/database.md).
for k in softmax sgemm; do
	rm -rf "$tmp/c" && mkdir -p "$tmp/c/eval"
	cp "$root"/templates/$k.* "$tmp/c/"
	cp "$root"/templates/eval/$k.* "$tmp/c/eval/" 2>/dev/null
	mkdir -p "$tmp/c/dispatch" && cp "$root/templates/dispatch/$k.sm90.json" "$tmp/c/dispatch/"
	"$aotc" emit "$root/templates/$k.cu" --arch sm90 --db "$tmp/c" -o "$tmp/c/out" --verbose >"$tmp/log" 2>&1
	if grep -q "is up to date: reused" "$tmp/log"; then ok "templates/dispatch/$k.sm90.json is up to date"
	else bad "templates/dispatch/$k.sm90.json is up to date" \
	         "regenerate: build/aotc emit templates/$k.cu --arch sm90 --db templates -o /tmp/aotc-regen"; fi
done

finish
