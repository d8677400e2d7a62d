#!/bin/sh
# Emit without relearning or parsing (issue 29): `aotc emit` of the softmax
# template with nothing saved (parses, learns), with only the saved dispatch
# (parses), with the saved dispatch and the saved IR (neither), and the parse
# alone. Works on a copy of the committed databases and kernel. The machine
# may be shared: it reports the best wall time of N runs and the median user
# CPU time (/usr/bin/time), the steadier figure under load.
# Usage: bench/emit.sh [AOTC] [N]   (default build/aotc, 15; from the repository root)
aotc=${1:-build/aotc}
n=${2:-15}
case $aotc in /*) ;; *) aotc=$PWD/$aotc ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/templates/eval"
cp templates/softmax.* "$tmp/templates/"
cp templates/eval/softmax.cuda_*.json "$tmp/templates/eval/"
cd "$tmp" || exit 1
emit="$aotc emit templates/softmax.cu --arch sm90 --db templates -o out --quiet"
dispatch=templates/dispatch/softmax.sm90.json
ir=templates/dispatch/softmax.cu.ir.json
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
# t NAME RUNS PREPARE COMMAND: best wall and median user CPU of RUNS runs.
t() {
	name=$1 runs=$2 prep=$3
	shift 3
	: >"$tmp/times"
	i=0
	while [ $i -lt "$runs" ]; do
		sh -c "$prep"
		/usr/bin/time -f "%e %U" -a -o "$tmp/times" "$@" >/dev/null 2>&1
		i=$((i + 1))
	done
	printf '%-44s best wall %6.3f s   median user %6.3f s   (%d runs)\n' "$name" \
		"$(cut -d' ' -f1 "$tmp/times" | sort -g | head -1)" \
		"$(cut -d' ' -f2 "$tmp/times" | sort -g | sed -n "$(((runs + 1) / 2))p")" "$runs"
}
t "emit, nothing saved (parses, learns)" 5 "rm -f $dispatch $ir" $emit
t "emit, saved dispatch only (parses)" "$n" "rm -f $ir" $emit
$emit
t "emit, saved dispatch and saved IR" "$n" ":" $emit
t "parse alone (aotc parse)" "$n" ":" "$aotc" parse templates/softmax.cu
$aotc emit templates/softmax.cu --arch sm90 --db templates -o out --verbose 2>&1 | grep "reused"
