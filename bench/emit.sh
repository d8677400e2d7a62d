#!/bin/sh
# Emit without relearning (issue 29): `aotc emit` of the softmax template
# with no saved dispatch (learns), with an up-to-date one (reuses it), and
# the parse alone. Works on a copy of the committed databases.
# Usage: bench/emit.sh [AOTC]   (default build/aotc; run from the repository root)
aotc=${1:-build/aotc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/db/eval"
cp templates/softmax.cuda_*.json "$tmp/db/"
cp templates/eval/softmax.cuda_*.json "$tmp/db/eval/"
emit="$aotc emit templates/softmax.cu --arch sm90 --db $tmp/db -o $tmp/out --quiet"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
if command -v hyperfine >/dev/null; then
	hyperfine -N --warmup 1 --runs 5 --prepare "rm -f $tmp/db/dispatch/softmax.sm90.json" -n "emit, no saved dispatch" "$emit"
	$emit
	hyperfine -N --warmup 2 --runs 15 -n "emit, saved dispatch up to date" "$emit"
	hyperfine -N --warmup 2 --runs 15 -n "parse alone" "$aotc parse templates/softmax.cu"
else
	t() {
		name=$1; shift
		s=$(date +%s.%N)
		for i in 1 2 3 4 5; do "$@" >/dev/null 2>&1; done
		echo "$name: $(echo "($(date +%s.%N) - $s) / 5" | bc -l | cut -c1-6) s"
	}
	t "emit, no saved dispatch" sh -c "rm -f $tmp/db/dispatch/softmax.sm90.json; $emit"
	$emit
	t "emit, saved dispatch up to date" sh -c "$emit"
	t "parse alone" "$aotc" parse templates/softmax.cu
fi
$aotc emit templates/softmax.cu --arch sm90 --db "$tmp/db" -o "$tmp/out" --verbose 2>&1 | grep "up to date"
