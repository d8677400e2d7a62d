#!/bin/sh
# Sources that crash, hang or flood a C++ parser (docs/spec.md §9): aotc must exit 1
# with one error naming the file, a bounded stderr, and write nothing to -o.
# usage: hostile.sh AOTC_BINARY
aotc=$1
case $aotc in
/*) ;;
*/*) aotc=$(pwd)/$aotc ;;   # the cases run in a scratch directory
esac
limit=65536   # bytes of stderr at most
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aotc-hostile.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
trap 'exit 130' INT TERM
cd "$tmp" || exit 2

# Generated, not committed: several are hundreds of kilobytes.
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "{"; print "" }' >braces.cu
awk 'BEGIN { printf "int f() { return (1"; for (i = 1; i < 260000; i++) printf ",1"; print "); }" }' >comma.cu
awk 'BEGIN { printf "void f() { "; for (i = 0; i < 2000; i++) printf "["; print " }" }' >brackets.cu
# One error per term on one line: each quotes the line.
awk 'BEGIN { printf "int a = f(x"; for (i = 1; i < 2000; i++) printf ",x"; print ");" }' >errors_line.cu
awk 'BEGIN { printf "int a = f(x"; for (i = 1; i < 10000; i++) printf ",x"; print ");" }' >long_line.cu
# A kernel at the end of a call chain of 5000 device functions whose first
# has an error: the frontend follows the chain (without recursing once per
# link) and reports it; an unused function's error is not.
awk 'BEGIN { print "#include <aotc.h>"; print "__device__ float f0(float x) { return no_such(x); }";
	for (i = 1; i < 5000; i++) printf "__device__ float f%d(float x) { return f%d(x) + 1; }\n", i, i - 1;
	print "__device__ float unused_bad(float x) { return also_missing(x); }";
	print "template <int B>\nAOTC_TUNE(B, 128)\nAOTC_GRID(cdiv(n, B))\nAOTC_BLOCK(B)\nAOTC_BUFFER(x, n, inout)\nAOTC_SHAPES(n = {1024})";
	print "__global__ void k(float *x, int n) { x[0] = f4999(x[0]); }" }' >chain.cu
# An #include that never ends: a FIFO nobody writes.
mkfifo never
printf '#include "never"\n' >hang.cu

# check NAME PATTERN [ENV=VALUE...] -- AOTC_ARGS...: aotc exits 1, stderr matches PATTERN
# (an extended regex), is under $limit bytes, and -o out/ stays empty.
check() {
	name=$1
	pattern=$2
	shift 2
	rm -rf out
	mkdir out
	start=$(date +%s)
	env "$@" >stdout 2>stderr </dev/null
	got=$?
	secs=$(($(date +%s) - start))
	size=$(wc -c <stderr)
	if [ "$got" -ne 1 ]; then
		why="exit $got, expected 1"
	elif ! grep -Eq -- "$pattern" stderr; then
		why="stderr does not match /$pattern/"
	elif [ "$size" -gt "$limit" ]; then
		why="stderr is $size bytes, over $limit"
	elif [ -n "$(ls -A out)" ]; then
		why="wrote to -o: $(ls -A out | head -3)"
	else
		echo "PASS $name (${secs}s, $size bytes of stderr)"
		pass=$((pass + 1))
		return
	fi
	bad "$name: $why" "$(head -c 2000 stderr | cut -c1-200)"
}

crash='^(braces|comma)\.cu: error: the C\+\+ parser \(libclang [0-9]+\) (crashed|failed)'
for c in parse configs; do
	check "braces: $c" "$crash" "$aotc" "$c" braces.cu
done
for c in tune eval; do
	check "braces: $c" "$crash" "$aotc" "$c" braces.cu --arch host --db db
done
for c in compile emit; do
	check "braces: $c" "$crash" "$aotc" "$c" braces.cu --arch host -o out --db db
done
check "comma" "$crash" "$aotc" compile comma.cu --arch host -o out --db db
check "brackets" '^brackets\.cu:1:[0-9]+: error: ' "$aotc" compile brackets.cu --arch host -o out --db db
shown='more errors not shown \(limit 50;'
check "errors on one line" "$shown" "$aotc" compile errors_line.cu --arch host -o out --db db
check "20 KB line" "$shown" "$aotc" compile long_line.cu --arch host -o out --db db
check "20 KB line, limit 3" 'aotc: note: 99[0-9] more errors not shown \(limit 3;' \
	AOTC_ERROR_LIMIT=3 "$aotc" parse long_line.cu
check "call chain" '^chain\.cu:2:[0-9]+: error: use of undeclared identifier .no_such.' \
	"$aotc" compile chain.cu --arch host -o out --db db
if grep -q also_missing stderr; then
	bad "call chain: the unused function's error is reported"
fi
check "hang" '^hang\.cu: error: the C\+\+ parser \(libclang [0-9]+\) did not finish within 2 s' \
	AOTC_PARSE_TIMEOUT=2 "$aotc" compile hang.cu --arch host -o out --db db

finish
