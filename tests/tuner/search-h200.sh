#!/bin/sh
# The search on the committed H200 databases of templates/warptile_sgemm.cu
# (2272 configurations x 12 shapes; bench/search/, tools/device-search.sh):
# replayed on the exhaustive run, the model search comes within 2% of every
# shape's best (geomean) for under a quarter of the exhaustive cost; the
# model search's own database holds the same; both emit.
# Usage: search-h200.sh AOTC REPO_ROOT
aotc=$1
root=$2
src=$root/templates/warptile_sgemm.cu
data=$root/bench/search
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

"$aotc" __search-sim "$src" --arch sm90 --db "$data/exhaustive" --search model >"$tmp/sim" 2>&1 ||
	bad "replay runs" "$(tail -5 "$tmp/sim")"
last=$(tail -1 "$tmp/sim")
echo "$last" | awk '{ cost = $3 + 0; if (cost <= 25 && $4 <= 1.02 && $5 <= 1.05) exit 0; exit 1 }' &&
	ok "replay: within 2% of the per-shape best for under 25% of the cost ($last)" ||
	bad "replay: the model search's result" "$(cat "$tmp/sim")"

python3 "$data/compare.py" "$data/exhaustive/sgemm_warptile.cuda_NVIDIA_H200_13.0.json" \
	"$data/model/sgemm_warptile.cuda_NVIDIA_H200_13.0.json" >"$tmp/cmp" 2>&1
geo=$(sed -n 's/^best found, timed in the exhaustive run: geomean \([0-9.]*\).*/\1/p' "$tmp/cmp")
awk -v g="$geo" 'BEGIN { exit !(g != "" && g <= 1.02) }' &&
	ok "H200 model search: best found within 2% (geomean $geo)" || bad "H200 model search" "$(cat "$tmp/cmp")"

for run in exhaustive model; do
	"$aotc" emit "$src" --arch sm90 --db "$data/$run" -o "$tmp/$run" >"$tmp/log" 2>&1 &&
		ok "$run: emit exits 0" || bad "$run: emit" "$(tail -5 "$tmp/log")"
	if grep -q "100\.000" "$tmp/log" "$tmp/$run"/*.h; then bad "$run: no sentinel slowdowns"; else ok "$run: no sentinel slowdowns"; fi
done
grep -q "the model-guided search measured 1336 of 27264 cells" "$tmp/log" &&
	ok "model: emit says how much the search measured" || bad "model: emit's note" "$(cat "$tmp/log")"
if grep -q "incomplete" "$tmp/log"; then bad "model: a finished search is not called incomplete" "$(cat "$tmp/log")"; else ok "model: not called incomplete"; fi
# The dispatch learnt from each, measured against the exhaustive run (the
# report's measured column: the exhaustive database as <db>/eval/).
for run in exhaustive model; do
	mkdir -p "$tmp/r-$run/eval"
	cp "$data/$run"/*.json "$tmp/r-$run/"
	cp "$data/exhaustive"/*.json "$tmp/r-$run/eval/"
	"$aotc" report "$tmp/r-$run/sgemm_warptile.cuda_NVIDIA_H200_13.0.json" --format json >"$tmp/rep-$run" \
		2>"$tmp/rep-$run.err"
done
tree_heldout='[s for s in d["selectors"] if s["key"] == "tree"][0]["heldout"]["geomean"]'
ge=$(json "$tmp/rep-exhaustive" "$tree_heldout" 2>/dev/null)
gm=$(json "$tmp/rep-model" "$tree_heldout" 2>/dev/null)
awk -v e="$ge" -v m="$gm" 'BEGIN { exit !(e != "" && m != "" && m <= e * 1.03) }' &&
	ok "the model search's dispatch within 3% of the exhaustive run's ($gm vs $ge)" ||
	bad "dispatch from the model search" "model $gm, exhaustive $ge" "$(cat "$tmp/rep-model.err")"

finish
