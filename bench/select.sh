#!/bin/sh
# The cost of the emitted select() on this CPU: emits the sgemm and softmax
# dispatch from the committed databases (no GPU needed), builds bench/select.c
# with each (gcc -O2), runs it and prints a table. Figures only, no assertion.
#
#   bench/select.sh [CALLS]        (from anywhere; AOTC=path/to/aotc to override)
set -eu
cd "$(dirname "$0")/.."
AOTC=${AOTC:-build/aotc}
CC=${CC:-gcc}
ARCH=sm90
calls=${1:-10000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# kernel, shape arguments, tuning range of each (templates/*.shapes.json)
bench() {
	k=$1 n=$2
	shift 2
	"$AOTC" emit "templates/$k.cu" --arch "$ARCH" --db templates -o "$tmp" --quiet
	"$CC" -O2 -std=c99 -Wall -Wextra -I "$tmp" -DSELECT="aot_${k}_cuda_${ARCH}_select" -DNARGS="$n" \
		bench/select.c "$tmp/_aot_${k}_cuda_${ARCH}.c" -lm -o "$tmp/select-$k"
	nv=$(grep -c '^	"' "$tmp/_aot_${k}_cuda_${ARCH}.c" || true)
	"$tmp/select-$k" "$@" "$calls" | sed "s/^/$k variants=$nv /" >>"$tmp/results"
}
bench sgemm 3 128:4096 128:4096 256:4096
bench softmax 2 1024:65536 128:16384

echo "select() cost on $(uname -m), $("$CC" --version | head -1), $calls calls per figure, median of 5 rounds"
echo "shapes: range = 4096 log-uniform shapes in the tuning range; odd = 4096 odd shapes in [1, 2*max];"
echo "        fixed = one shape repeated; chained = range, each call's shape depending on the last result"
echo "        (latency; the others are throughput). empty = a noinline function called through a volatile pointer;"
echo "        ratio = ns/select over ns/empty (the target: at most 2)."
printf '%-8s %-8s %9s %14s %13s %7s %9s\n' kernel shapes variants "ns/select" "ns/empty" ratio invalid
sed -e 's/[a-z_]*=//g' "$tmp/results" | while read -r k nv fn set calls sel emp ratio inv; do
	printf '%-8s %-8s %9s %14s %13s %7s %9s\n' "$k" "$set" "$nv" "$sel" "$emp" "$ratio" "$inv"
done
