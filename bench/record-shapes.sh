#!/bin/sh
# What AOTC_RECORD costs with many distinct shapes (docs/PERFORMANCE.md,
# "AOTC_RECORD with many distinct shapes"): the host launcher of
# templates/matmul_host.cpp (emitted from the committed test database, no
# tuning) launched once on each of SHAPES distinct shapes that compute
# nothing (M = 0), with a 2.1 s pause half way (so that a merge falls due
# while the program runs), without AOTC_RECORD, then twice with it into one
# file (a new file, then a merge into the file the first run wrote). Prints
# per run: the process's wall seconds (the pause and the merge at exit
# included), the seconds the launches took, the longest single launch, and
# the record file's rows.
#   bench/record-shapes.sh [AOTC] [SHAPES]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
aotc=$(cd "$(dirname "${1:-$root/build/aotc}")" && pwd)/$(basename "${1:-aotc}")
shapes=${2:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
unset AOTC_RECORD AOTC_VARIANT AOTC_LOG
cd "$tmp"
cp "$root/templates/matmul_host.cpp" "$here/record/shapes.cpp" .
"$aotc" emit matmul_host.cpp --arch host --db "$root/tests/codegen" -o out --quiet
c++ -std=c++17 -O2 -I out -I . -pthread shapes.cpp out/_aot_matmul_host_host.cpp \
	out/_aot_matmul_host_host.c -o shapes
now() { date +%s.%N; }
run() { # LABEL [VAR=VALUE]
	label=$1
	shift
	t0=$(now)
	r=$(env "$@" ./shapes "$shapes")
	t1=$(now)
	rows=-
	[ -f rec.json ] && rows=$(grep -c '"calls"' rec.json)
	printf "%-28s %8.2f s wall  %8.2f s launching  longest launch %8.1f ms  rows %s\n" \
		"$label" "$(echo "$t1 - $t0" | bc)" "${r% *}" "${r#* }" "$rows"
}
echo "$shapes distinct shapes, one launch each"
run "no AOTC_RECORD" X=1
run "AOTC_RECORD, new file" AOTC_RECORD=rec.json
run "AOTC_RECORD, merge into it" AOTC_RECORD=rec.json
