#!/bin/sh
# aotc eval without a device evaluates the held-out database in <db>/eval
# only when it was measured from the same source as the training database
# (issue 30): one of another source hash is an error (exit 3, both hashes
# named, nothing written); one that lacks training configurations is
# evaluated with a warning naming them, their choices counted as misses.
# Uses the committed softmax databases (H200); skipped (77) on a machine
# with an sm90 device, where eval measures instead.
# Usage: eval-heldout.sh AOTC REPO_ROOT   (~5 s)
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"

name=softmax.cuda_NVIDIA_H200_13.0.json
src=$root/templates/softmax.cu
shapes=$root/templates/softmax.heldout.json
cd "$tmp" || exit 1
# db DIR: the training database, with HELD as the held-out one
mkdb() {
	mkdir -p "$1/eval"
	cp "$root/templates/$name" "$1/"
	cp "$2" "$1/eval/$name"
}
run_eval() { # DB: exit status in $st, stdout in DB.out, stderr in DB.err
	"$aotc" eval "$src" --arch sm90 --db "$tmp/$1" --shapes "$shapes" >"$1.out" 2>"$1.err"
	st=$?
}
rerun() { echo "rerun: $aotc_real eval $src --arch sm90 --db $tmp/$1 --shapes $shapes"; }

# The committed pair: evaluated, no warning.
mkdb good "$root/templates/eval/$name"
run_eval good
if ! grep -q "no sm90 device here: evaluating the measurements in" good.err; then
	echo "SKIP: an sm90 device here: aotc eval measures instead of evaluating the committed measurements"
	exit 77
fi
if [ "$st" -eq 0 ] && grep -q "^EVAL softmax" good.out && ! grep -q "warning" good.err; then
	ok "the committed held-out database of the same source: evaluated, no warning"
else
	bad "committed pair evaluated" "exit $st" "$(rerun good)" "$(cat good.err)"
fi

# Another source hash: exit 3, the file and both hashes named, nothing written.
python3 - "$root/templates/eval/$name" other.json <<'END'
import json, sys
d = json.load(open(sys.argv[1]))
d["source_hash"] = "0123abcd" + d["source_hash"][8:]
for c in d["configs"]:  # and another code: what a tune of another version records
    c["code"] = "0123abcd" + c["code"][8:]
json.dump(d, open(sys.argv[2], "w"))
END
mkdb other other.json
train_hash=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["source_hash"][:8])' "$root/templates/$name")
(cd other && find . | sort) >other.before
run_eval other
(cd other && find . | sort) >other.after
held=$tmp/other/eval/$name
if [ "$st" -eq 3 ] && grep -q "error: $held was measured from another version of .*softmax.cu (source hash 0123abcd, the training database .*$train_hash)" other.err &&
	grep -q "aotc eval where a sm90 device is" other.err && ! grep -q "EVAL" other.out; then
	ok "a held-out database of another source hash: exit 3, both hashes named, no figures"
else
	bad "another source hash refused" "exit $st (expected 3)" "$(rerun other)" "$(cat other.err other.out | head -20)"
fi
if cmp -s other.before other.after; then
	ok "a held-out database of another source hash: nothing written"
else
	bad "nothing written" "$(diff other.before other.after)"
fi

# Missing configurations: those the dispatch chose on the committed pair
# (and the first one) taken out of the held-out database. Every shape is a
# miss, and the warning counts and names them.
sed -n 's/^  rows=[0-9]* cols=[0-9]*  *\(softmax<[^>]*>\) .*/\1/p' good.out | sort -u >chosen.txt
python3 - "$root/templates/eval/$name" missing.json chosen.txt >dropped.txt <<'END'
import json, sys
d = json.load(open(sys.argv[1]))
chosen = set(open(sys.argv[3]).read().splitlines())
names = [c["name"] for c in d["configs"]]
drop = {i for i, n in enumerate(names) if n in chosen or i == 0}
keep = [i for i in range(len(names)) if i not in drop]
new = {old: n for n, old in enumerate(keep)}
d["configs"] = [d["configs"][i] for i in keep]
d["measurements"] = [dict(m, config=new[m["config"]]) for m in d["measurements"] if m["config"] not in drop]
json.dump(d, open(sys.argv[2], "w"))
print(len(drop), ", ".join(names[i] for i in sorted(drop)[:3]) + (", ..." if len(drop) > 3 else ""))
END
ndrop=$(cut -d' ' -f1 dropped.txt)
named=$(cut -d' ' -f2- dropped.txt)
nchosen=$(wc -l <chosen.txt)
mkdb missing missing.json
run_eval missing
dispatched=$(sed -n 's/.*not in this held-out database (.*), \([0-9]*\) of them among the dispatch.*/\1/p' missing.err)
if [ "$st" -eq 0 ] && [ "$nchosen" -ge 1 ] &&
	grep -qF "$tmp/missing/eval/$name: warning: $ndrop of the 81 training configurations are not in this held-out database ($named)" missing.err &&
	[ -n "$dispatched" ] && [ "$dispatched" -ge "$nchosen" ]; then
	ok "missing configurations: a warning with the file, the count ($ndrop) and up to 3 names"
else
	bad "missing configurations warned" "exit $st" "expected: $ndrop ... ($named), at least $nchosen dispatched" "$(rerun missing)" "$(cat missing.err)"
fi
"$aotc" eval "$src" --arch sm90 --db "$tmp/missing" --shapes "$shapes" --format json >missing.json 2>/dev/null
misses=$(json missing.json '[s for s in d["selectors"] if s["key"] == "tree"][0]["misses"]' 2>/dev/null)
unmeasured=$(json missing.json 'sum(r["status"] == "not measured" for r in d["shapes"])' 2>/dev/null)
if [ "$misses" = 15 ] && [ "$unmeasured" -eq 15 ]; then
	ok "missing configurations: the dispatch's choices of them are misses (15 of 15)"
else
	bad "choices of missing configurations are misses" "misses '$misses', rows not measured $unmeasured (expected 15)" "$(rerun missing)" "$(tail -12 missing.out)" "$(head -c 2000 missing.json)"
fi
finish
