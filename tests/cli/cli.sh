#!/bin/sh
# Command-line behaviour (SPEC §3): exit statuses, --help, --version, usage
# errors, unreadable files. Usage: cli.sh AOTC REPO_ROOT
aotc=$1
root=$2
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect STATUS PATTERN CMD...: CMD exits STATUS and its output matches PATTERN.
expect() {
	want=$1
	pattern=$2
	shift 2
	"$aotc" "$@" >"$tmp/out" 2>&1 </dev/null
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL aotc $*: exit $got, expected $want"
		sed 's/^/    /' "$tmp/out" | head -10
		fail=$((fail + 1))
	elif ! grep -Eq -- "$pattern" "$tmp/out"; then
		echo "FAIL aotc $*: output does not match /$pattern/"
		sed 's/^/    /' "$tmp/out" | head -10
		fail=$((fail + 1))
	else
		echo "PASS aotc $*"
		pass=$((pass + 1))
	fi
}

sgemm=$root/templates/sgemm.cu
expect 0 '^aotc [0-9]+\.[0-9]+\.[0-9]+' --version
expect 0 'libclang: .*clang version [0-9]+' --version
expect 0 'usage: aotc COMMAND' --help
for c in compile tune emit eval parse configs report link; do
	expect 0 "usage: aotc $c" "$c" --help
done
expect 2 'usage: aotc COMMAND' 
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "unknown option '--frob'" parse --frob "$sgemm"
expect 2 "needs a FILE" parse
expect 2 "takes one FILE" parse "$sgemm" "$sgemm"
expect 2 "option '-I' needs an argument" parse "$sgemm" -I
expect 2 "-j needs a number" configs -j zero "$sgemm"
expect 2 "needs --arch" compile "$sgemm"
expect 2 "unknown architecture 'sm42'" compile "$sgemm" --arch sm42
expect 1 "cannot read '$tmp/missing.cu'" parse "$tmp/missing.cu"
expect 1 "cannot read '$tmp'" parse "$tmp"
expect 2 "no tuned kernel 'nope'" configs "$sgemm" --kernel nope
expect 0 '^sgemm: [0-9]+ configurations$' configs "$sgemm" --kernel sgemm
expect 0 '"name": "sgemm"' parse "$sgemm"

# A file with no tuned kernel is not an error for parse (the IR is empty),
# but configs has nothing to list.
printf '__global__ void plain(int n, float *x) {}\n' >"$tmp/plain.cu"
expect 0 '"kernels": \[\]' parse "$tmp/plain.cu"
expect 2 'no tuned kernels' configs "$tmp/plain.cu"

# -D reaches the parser: the tunable list comes from a macro.
cat >"$tmp/define.cu" <<'CU'
#include <aotc.h>
template <int B>
AOTC_TUNE(B, 32, WIDE)
AOTC_GRID(cdiv(n, B))
AOTC_BLOCK(B)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = {1024})
__global__ void k(int n, float *x) {}
CU
expect 1 "unknown name 'WIDE'" configs "$tmp/define.cu"
expect 0 'k<32>' configs "$tmp/define.cu" -D WIDE=64
expect 0 'k: 2 configurations' configs "$tmp/define.cu" -DWIDE=64

# Malformed IR JSON is a diagnostic, not a crash.
printf '{"aotc_ir": 1, "file": "x.cu"}' >"$tmp/bad.json"
expect 1 'invalid IR' parse "$tmp/bad.json"
printf '{"aotc_ir": 1, "file": "x.cu", "source_hash"' >"$tmp/trunc.json"
expect 1 'invalid JSON' parse "$tmp/trunc.json"
printf '{"aotc_ir": 99}' >"$tmp/v99.json"
expect 1 'not an aotc IR document' parse "$tmp/v99.json"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
