#!/bin/sh
# Times aotc on large generated databases (docs/PERFORMANCE.md, "Database
# size"): `aotc report` on one document, `aotc emit` on the same data split
# into two shards (the merge), for each shape count given.
# Usage: bench/big-db.sh [AOTC] [SHAPES...]   (default build/aotc 30000 300000)
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
aotc=${1:-$root/build/aotc}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 30000 300000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=matmul_host.host_AMD_EPYC_12.2.0
# t LABEL COMMAND...: wall and CPU seconds and peak memory of one run
t() {
	label=$1
	shift
	/usr/bin/time -f "%e %U %M" -o "$tmp/time" "$@" >"$tmp/log" 2>&1 || {
		echo "$label: failed:"; tail -3 "$tmp/log"; return 1; }
	read -r wall user kb <"$tmp/time"
	printf '%-34s %8.2f s wall %8.2f s user %7d MiB\n' "$label" "$wall" "$user" $((kb / 1024))
}
for n in "$@"; do
	python3 "$root/bench/big-db.py" --shapes "$n" -o "$tmp/one/$name.json"
	python3 "$root/bench/big-db.py" --shapes "$n" --shards 2 -o "$tmp/two/$name.json"
	size=$(du -m "$tmp/one/$name.json" | cut -f1)
	echo "$n shapes x 4 configurations ($((n * 4)) measurements, $size MB):"
	t "  aotc report" "$aotc" report "$tmp/one/$name.json"
	t "  aotc emit (2 shards merged)" "$aotc" emit "$root/templates/matmul_host.cpp" --arch host \
		--db "$tmp/two" -o "$tmp/emitted" --quiet
	rm -rf "$tmp/one" "$tmp/two"
done
