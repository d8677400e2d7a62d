#!/bin/sh
# Timing noise on this machine (docs/PERFORMANCE.md, "Timing noise"): PAIRS
# pairs of back-to-back tunes of tests/tuner/noise_host.cpp (separate
# databases), without load and with LOADS busy loops, and per pair how many
# shapes' winners agree within the recorded noise (tests/tuner/noise_agree.py).
# Usage: bench/noise/agree.sh AOTC [PAIRS] [LOADS]   (AOTC_HOST_FLUSH_BYTES as set)
aotc=$1
pairs=${2:-3}
nload=${3:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
loads=""
cleanup() {
	for p in $loads; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
export AOTC_CACHE_DIR="$tmp/cache"
kernel=$root/tests/tuner/noise_host.cpp
"$aotc" tune "$kernel" --arch host --db "$tmp/compile" --quiet
for load in 0 "$nload"; do
	i=0
	while [ "$i" -lt "$load" ]; do
		sh -c 'while :; do :; done' &
		loads="$loads $!"
		i=$((i + 1))
	done
	p=0
	while [ "$p" -lt "$pairs" ]; do
		rm -rf "$tmp/a" "$tmp/b"
		"$aotc" tune "$kernel" --arch host --db "$tmp/a" --quiet
		"$aotc" tune "$kernel" --arch host --db "$tmp/b" --quiet
		printf 'loads %s pair %s: ' "$load" "$p"
		python3 "$root/tests/tuner/noise_agree.py" "$tmp"/a/poly.host_*.json "$tmp"/b/poly.host_*.json
		p=$((p + 1))
	done
	for q in $loads; do kill "$q" 2>/dev/null; done
	loads=""
done
