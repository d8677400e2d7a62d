#!/bin/sh
# README's demo (tools/demo.sh) makes its point: run with the aotc under
# test and --tsv, on both the training and the held-out shapes the emitted
# softmax dispatch picks at least 2 distinct variants, every shape has a
# time for the pick, and the dispatch's geomean slowdown against the
# per-shape best is not worse than the best single variant's.
# Usage: demo.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

rerun="AOTC=$aotc AOTC_DEMO_DIR=$tmp/gen $root/tools/demo.sh --tsv"
if AOTC=$aotc AOTC_DEMO_DIR=$tmp/gen timeout 300 "$root/tools/demo.sh" --tsv >"$tmp/out" 2>"$tmp/err"; then
	ok "tools/demo.sh --tsv runs"
else
	bad "tools/demo.sh --tsv runs" "rerun: $rerun" "$(tail -15 "$tmp/err")"
fi

# summary SET SHAPES COMPARED DISPATCH_GEOMEAN SINGLE_GEOMEAN DISTINCT
for set in training held-out; do
	line=$(awk -F '\t' -v s="$set" '$1 == "summary" && $2 == s' "$tmp/out")
	if [ -z "$line" ]; then
		bad "$set: a summary row" "rerun: $rerun" "$(head -5 "$tmp/out")"
		continue
	fi
	if printf '%s\n' "$line" | awk -F '\t' '{ exit !($7 >= 2) }'; then
		ok "$set: the dispatch picks $(printf '%s\n' "$line" | cut -f7) distinct variants (>= 2)"
	else
		bad "$set: the dispatch picks at least 2 distinct variants" "rerun: $rerun" "$line"
	fi
	if printf '%s\n' "$line" | awk -F '\t' '{ exit !($3 > 0 && $4 == $3) }'; then
		ok "$set: every shape has a time for the dispatch's pick and the single variant"
	else
		bad "$set: every shape has a time for the dispatch's pick and the single variant" "rerun: $rerun" "$line"
	fi
	if printf '%s\n' "$line" | awk -F '\t' '{ exit !($5 >= 1 && $5 <= $6) }'; then
		ok "$set: dispatch geomean $(printf '%s\n' "$line" | cut -f5) <= single variant's $(printf '%s\n' "$line" | cut -f6)"
	else
		bad "$set: dispatch geomean slowdown not worse than the single variant's" "rerun: $rerun" "$line"
	fi
done

# The rows: one per shape, the pick a variant of the emitted dispatch.
rows=$(awk -F '\t' '$1 == "row"' "$tmp/out" | wc -l)
picks=$(awk -F '\t' '$1 == "row" && $5 !~ /^softmax</' "$tmp/out" | wc -l)
if [ "$rows" -gt 0 ] && [ "$picks" -eq 0 ]; then
	ok "$rows rows, each with a softmax variant picked"
else
	bad "$rows rows, each with a softmax variant picked" "rerun: $rerun" "$(awk -F '\t' '$1 == "row" && $5 !~ /^softmax</' "$tmp/out" | head -3)"
fi

finish
