#!/bin/sh
# aotc report on the committed H200 databases: the aotc tree beats the best
# single variant, nearest neighbour and the Helion-style tree on held-out
# shapes (sgemm: within 1% of the Helion-style tree, see below) and stays
# within --max-variants. (That the report is deterministic,
# report-formats.sh checks.)
# Usage: report.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
for k in sgemm softmax; do
	db=$root/templates/$k.cuda_NVIDIA_H200_13.0.json
	if ! "$aotc" report "$db" >"$tmp/a" 2>&1; then
		bad "$k: aotc report exited non-zero" "$tmp/a"; continue
	fi
	# the figures from the JSON report (selectors' held-out geomeans, the
	# variants chosen); the text report's own form below
	if ! "$aotc" report "$db" --format json >"$tmp/a.json" 2>"$tmp/a.err"; then
		bad "$k: aotc report --format json exited non-zero" "$tmp/a.err"; continue
	fi
	held() { json "$tmp/a.json" '[s for s in d["selectors"] if s["key"] == "'"$1"'"][0]["heldout"]["geomean"]'; }
	tree=$(held tree)
	for other in single nearest helion; do
		o=$(held $other)
		# sgemm with cuBLAS (docs/PERFORMANCE.md, "Library routines"): the
		# folds holding out K = 160 cannot learn the shallow shapes' split,
		# where the Helion-style tree happens to be close (on the measured
		# held-out shapes cuBLAS everywhere is the better: 1.000). The tree
		# must stay within 1% of it there, and beat it elsewhere.
		margin=0
		if [ "$k" = sgemm ] && [ "$other" = helion ]; then margin=0.01; fi
		if awk -v t="$tree" -v o="$o" -v m="$margin" 'BEGIN { exit !(t != "" && t < o + m) }'; then
			pass=$((pass + 1))
		else
			bad "$k: tree held-out geomean $tree not below selector $other's $o"
		fi
	done
	n=$(json "$tmp/a.json" 'd["counts"]["chosen"]')
	# at most --max-variants (16) and a few more for coverage
	if [ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le 20 ]; then pass=$((pass + 1)); else bad "$k: $n variants chosen"; fi
	"$aotc" report "$db" --max-variants 2 --format json >"$tmp/c" 2>"$tmp/c.err"
	n=$(json "$tmp/c" 'd["counts"]["chosen"]')
	if [ "$n" = 2 ]; then pass=$((pass + 1)); else bad "$k: --max-variants 2 chose $n" "$tmp/c.err"; fi
	# the tree: splits, or (sgemm, one leaf) its variants in order
	grep -q "^  if (\|^  -> " "$tmp/a" && pass=$((pass + 1)) || bad "$k: no tree printed"
	# lists wrap: no line over 100 columns but the selector table's
	long=$(sed '/^slowdown vs oracle/,/^$/d' "$tmp/a" | awk 'length($0) > 100' | wc -l)
	[ "$long" -eq 0 ] && pass=$((pass + 1)) || bad "$k: $long lines over 100 columns"
	# aotc eval without a GPU evaluates the committed held-out measurements.
	"$aotc" eval "$root/templates/$k.cu" --arch sm90 --db "$root/templates" \
		--shapes "$root/templates/$k.heldout.json" --format json >"$tmp/e.json" 2>"$tmp/e"
	st=$?
	misses=$(json "$tmp/e.json" '[s for s in d["selectors"] if s["key"] == "tree"][0]["misses"]' 2>/dev/null)
	if [ $st -eq 0 ] && [ "$misses" = 0 ] && grep -q "evaluating the measurements in" "$tmp/e"; then
		pass=$((pass + 1))
	else
		bad "$k: eval on the held-out database (exit $st, misses '$misses')" "$(tail -8 "$tmp/e")"
	fi
	# every held-out shape gets a variant whose AOTC_VALID_IF holds
	nv=$(json "$tmp/e.json" 'sum(r["status"] == "none valid" for r in d["shapes"])' 2>/dev/null)
	if [ "$nv" = 0 ]; then pass=$((pass + 1)); else bad "$k: held-out shapes without a variant: '$nv'"; fi
done
# Shards merge: the H200 SGEMM database split in two files by shape gives
# the same emitted files as the whole. Both are cut to every fourth variant
# and cuBLAS (86 of 341; every shape): the merge, not the size, is checked,
# and each side learns its dispatch.
mkdir -p "$tmp/whole" "$tmp/shards" "$tmp/e1" "$tmp/e2"
python3 "$root/tests/cut-db.py" "$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json" \
	"$tmp/whole/sgemm.cuda_NVIDIA_H200_13.0.json" --configs 4 --externs
python3 - "$tmp/whole/sgemm.cuda_NVIDIA_H200_13.0.json" "$tmp/shards" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
for part in (0, 1):
    d = dict(db)
    d["measurements"] = [m for m in db["measurements"] if m["shape"] % 2 == part]
    json.dump(d, open("%s/sgemm.cuda_NVIDIA_H200_13.0.part%d.json" % (sys.argv[2], part), "w"))
PY
"$aotc" emit "$root/templates/sgemm.cu" --arch sm90 --db "$tmp/whole" -o "$tmp/e1" >/dev/null 2>&1
"$aotc" emit "$root/templates/sgemm.cu" --arch sm90 --db "$tmp/shards" -o "$tmp/e2" >/dev/null 2>&1
if cmp -s "$tmp/e1/_aot_sgemm_cuda_sm90.c" "$tmp/e2/_aot_sgemm_cuda_sm90.c" &&
   cmp -s "$tmp/e1/_aot_sgemm_cuda_sm90.cu" "$tmp/e2/_aot_sgemm_cuda_sm90.cu"; then
	pass=$((pass + 1))
else
	bad "shards: merged shards emit differently from the whole database"
fi
"$aotc" report "$tmp/missing.json" >"$tmp/d" 2>&1
[ $? -eq 3 ] && pass=$((pass + 1)) || bad "missing database: not exit 3"
finish
