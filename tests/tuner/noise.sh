#!/bin/sh
# Timing noise measured and acted on (docs/spec.md §5, docs/database.md "Noise"):
# two tunes of a kernel with near-ties, back to back while two busy loops load
# the machine, agree on each shape's winner, or the one's winner is within the
# other's recorded noise of the other's, on at least 90 % of the shapes; close
# contenders are alternated and recorded so; a rerun alternates only what was
# not; the report shows the noise.
# Usage: noise.sh AOTC REPO_ROOT
aotc=$1
root=$2
here=$root/tests/tuner
tmp=$(mktemp -d)
loads=""
cleanup() {
	for p in $loads; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# A small flush keeps the test short (the host's is twice the LLC otherwise).
export AOTC_CACHE_DIR="$tmp/cache" AOTC_HOST_FLUSH_BYTES=4M
. "$(dirname "$0")/../lib.sh"
kernel=$here/noise_host.cpp
rerun() { echo "rerun: $aotc_real tune $kernel --arch host --db $1"; }

# Compiled once, before the load, so that only timing runs under it.
"$aotc" tune "$kernel" --arch host --db "$tmp/warm" >"$tmp/log" 2>&1 ||
	bad "tune without load" "$(tail -5 "$tmp/log")"

for i in 1 2; do
	sh -c 'while :; do :; done' &
	loads="$loads $!"
done
for d in a b; do
	if "$aotc" tune "$kernel" --arch host --db "$tmp/$d" >"$tmp/$d.log" 2>&1; then
		ok "tune $d under load"
	else
		bad "tune $d under load" "$(tail -5 "$tmp/$d.log")" "$(rerun "$tmp/$d")"
	fi
done
for p in $loads; do kill "$p" 2>/dev/null; done
loads=""

# Per shape the two agree on the winner, or the one's winner is within the
# other's recorded noise of the other's (noise_agree.py); every alternated
# cell has its rounds as samples; the method records warm-up and alternation.
python3 "$here/noise_agree.py" "$tmp"/a/poly.host_*.json "$tmp"/b/poly.host_*.json >"$tmp/agree.json"
why=$(python3 - "$tmp/agree.json" "$tmp"/a/poly.host_*.json "$tmp"/b/poly.host_*.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if not r["shapes"] or r["agree"] < 0.9 * r["shapes"]:
    print("the tunes agree on %d of %d shapes: %s" % (r["agree"], r["shapes"], "; ".join(r["errors"])))
for name, path in zip("ab", sys.argv[2:]):
    d = json.load(open(path))
    alt = [m for m in d["measurements"] if m.get("alternated")]
    if not alt:
        print("%s: no measurement is alternated" % name)
    for m in alt:
        if m["status"] != "ok" or len(m["samples"]) != m["alternated"] or m["alternated"] < 5:
            print("%s: alternated %d rounds with %d samples" % (name, m["alternated"], len(m.get("samples", []))))
    if "warmed" not in d["method"] or "alternation" not in d["method"]:
        print("%s: the method has no warm-up or alternation: %s" % (name, d["method"]))
PY
)
if [ -z "$why" ]; then ok "two tunes under load agree within the noise; alternation recorded"; else bad "noise agreement" "$why"; fi
grep -q "timing noise: the winners' spread is" "$tmp/a.log" && ok "the summary states the noise" ||
	bad "the summary states the noise" "$(tail -4 "$tmp/a.log")"

# A rerun measures nothing and alternates nothing again.
"$aotc" tune "$kernel" --arch host --db "$tmp/a" >"$tmp/log" 2>&1
grep -q "0 measurements to take" "$tmp/log" && grep -q "alternated (0 this run)" "$tmp/log" &&
	ok "rerun: nothing measured or alternated again" || bad "rerun: nothing again" "$(grep -E 'measurements|noise' "$tmp/log")"
"$aotc" tune "$kernel" --arch host --db "$tmp/a" --quiet >"$tmp/log" 2>&1
[ ! -s "$tmp/log" ] && ok "--quiet: no noise warning" || bad "--quiet prints" "$(cat "$tmp/log")"

# A tune killed between the last cell and the alternation: the rerun
# alternates those shapes, and measures nothing else.
python3 - "$tmp"/a/poly.host_*.json <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
for m in db["measurements"]:
    m.pop("alternated", None)
json.dump(db, open(sys.argv[1], "w"))
PY
"$aotc" tune "$kernel" --arch host --db "$tmp/a" >"$tmp/log" 2>&1
if grep -q "0 measurements to take" "$tmp/log" && grep -Eq "alternated \([1-9][0-9]* this run\)" "$tmp/log"; then
	ok "resumed: contenders alternated, nothing measured"
else
	bad "resumed: alternation" "$(grep -E 'measurements|noise' "$tmp/log")"
fi

# The report shows each shape's noise and alternation, in every format.
db=$(ls "$tmp"/a/poly.host_*.json)
"$aotc" report "$db" >"$tmp/r.txt" 2>&1 && grep -q " noise$" "$tmp/r.txt" && grep -Eq "[0-9]%\*$" "$tmp/r.txt" &&
	ok "report: text" || bad "report: text" "$(tail -6 "$tmp/r.txt")"
"$aotc" report "$db" --format json >"$tmp/r.json" 2>&1 && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
bad = [s["label"] for s in r["shapes"] if not isinstance(s.get("noise"), float) or "alternated" not in s]
assert r["shapes"] and not bad, bad
assert any(s["alternated"] > 0 for s in r["shapes"])
' "$tmp/r.json" && ok "report: json" || bad "report: json" "$(head -c 300 "$tmp/r.json")"
"$aotc" report "$db" --format markdown >"$tmp/r.md" 2>&1 && grep -q "| noise | alternated |" "$tmp/r.md" &&
	grep -q "rounds |" "$tmp/r.md" && ok "report: markdown" || bad "report: markdown" "$(grep -i noise "$tmp/r.md")"
"$aotc" report "$db" --format html >"$tmp/r.html" 2>&1 && grep -q "<th>noise</th>" "$tmp/r.html" &&
	grep -q "rounds</td>" "$tmp/r.html" && ok "report: html" || bad "report: html" "$(grep -c noise "$tmp/r.html")"

finish
