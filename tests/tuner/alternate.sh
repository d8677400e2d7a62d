#!/bin/sh
# --alternate N (docs/cli.md, docs/database.md "Noise, warm-up and
# alternation"): 0 times no close contender again and records rounds 0; a
# rerun with rounds alternates what the first left, N rounds; the default
# records 15; eval passes it on to the held-out tune; bad values and
# commands that do not tune are usage errors.
# Usage: alternate.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"
kernel=$root/tests/tuner/noise_host.cpp
# Three small shapes keep it short (each has a tie: TAG changes nothing).
printf '[{"n": 1024}, {"n": 2048}, {"n": 4096}]\n' >"$tmp/shapes.json"

# what the database at $1 says: the method's rounds, then how many cells
# are alternated and how many of those have a sample count other than
# their rounds (or rounds other than $2)
alt_facts() {
	python3 - "$1" "$2" <<'PY'
import glob, json, sys
d = json.load(open(glob.glob(sys.argv[1])[0]))
alt = [m for m in d["measurements"] if "alternated" in m]
off = [m for m in alt if m["alternated"] != int(sys.argv[2]) or len(m["samples"]) != m["alternated"]]
a = d["method"]["alternation"]
print(a["rounds"], a["group"], len(alt), len(off))
PY
}

"$aotc" tune "$kernel" --arch host --db "$tmp/a" --shapes "$tmp/shapes.json" --alternate 0 --verbose >"$tmp/log" 2>&1
st=$?
set -- $(alt_facts "$tmp/a/poly.host_*.json" 0)
if [ $st -eq 0 ] && [ "$1" = 0 ] && [ "$2" = 4 ] && [ "$3" = 0 ] && ! grep -q ": alternated " "$tmp/log" &&
	grep -q "alternated (none this run: --alternate 0)" "$tmp/log"; then
	ok "--alternate 0: nothing re-timed, method.alternation.rounds 0, the summary says so"
else
	bad "--alternate 0" "exit $st, rounds ${1:-?}, group ${2:-?}, ${3:-?} cells alternated" "$tmp/log"
fi

# The same database with alternation: the contenders the first run left
# are alternated now, 3 rounds, and nothing is measured again.
"$aotc" tune "$kernel" --arch host --db "$tmp/a" --shapes "$tmp/shapes.json" --alternate 3 >"$tmp/log" 2>&1
st=$?
set -- $(alt_facts "$tmp/a/poly.host_*.json" 3)
if [ $st -eq 0 ] && grep -q "0 measurements to take" "$tmp/log" && grep -Eq "alternated \([1-9][0-9]* this run\)" "$tmp/log" &&
	[ "$1" = 3 ] && [ "$3" -gt 0 ] && [ "$4" = 0 ]; then
	ok "--alternate 3 after 0: the left contenders alternated, 3 rounds each, nothing measured again"
else
	bad "--alternate 3 rerun" "exit $st, rounds ${1:-?}, ${3:-?} cells alternated, ${4:-?} with other rounds" "$tmp/log"
fi

# Without the option: 15 rounds, recorded as before the option existed.
"$aotc" tune "$kernel" --arch host --db "$tmp/b" --shapes "$tmp/shapes.json" >"$tmp/log" 2>&1
st=$?
m=$(json "$(ls "$tmp"/b/poly.host_*.json)" 'json.dumps(d["method"]["alternation"], sort_keys=True)')
if [ $st -eq 0 ] && [ "$m" = '{"group": 4, "min_noise": 0.03, "rounds": 15}' ]; then
	ok "default: method.alternation as before ($m)"
else
	bad "default alternation" "exit $st, $m" "$tmp/log"
fi

# eval: the held-out tune takes it.
printf '[{"n": 1500}, {"n": 3000}]\n' >"$tmp/held.json"
"$aotc" eval "$kernel" --arch host --db "$tmp/a" --shapes "$tmp/held.json" --alternate 0 >"$tmp/log" 2>&1
st=$?
set -- $(alt_facts "$tmp/a/eval/poly.host_*.json" 0)
if [ $st -eq 0 ] && [ "$1" = 0 ] && [ "$3" = 0 ] && grep -q "^EVAL poly" "$tmp/log"; then
	ok "eval --alternate 0: the held-out tune re-times nothing"
else
	bad "eval --alternate 0" "exit $st, rounds ${1:-?}, ${3:-?} cells alternated" "$tmp/log"
fi

# Usage errors: exit 2, the value named; nothing written.
for v in -1 1001 x 1.5 ''; do
	"$aotc" tune "$kernel" --arch host --db "$tmp/c" --alternate "$v" >"$tmp/log" 2>&1
	st=$?
	if [ $st -eq 2 ] && grep -q "aotc tune: --alternate needs a number of rounds from 0 (no alternation) to 1000, not '$v'" "$tmp/log" &&
		[ ! -e "$tmp/c" ]; then
		ok "--alternate '$v': usage error"
	else
		bad "--alternate '$v'" "exit $st" "$tmp/log"
	fi
done
"$aotc" emit "$kernel" --arch host --db "$tmp/a" --alternate 3 >"$tmp/log" 2>&1
st=$?
if [ $st -eq 2 ] && grep -q "alternate is not an option of 'aotc emit' (it is one of 'aotc compile', 'aotc tune' and 'aotc eval')" "$tmp/log"; then
	ok "emit --alternate: usage error naming the commands that take it"
else
	bad "emit --alternate" "exit $st" "$tmp/log"
fi
for c in tune compile eval; do
	"$aotc" $c --help 2>&1 | grep -q -- "--alternate N" && ok "$c --help lists --alternate" || bad "$c --help lists --alternate"
done
finish
