#!/bin/sh
# Command-line behaviour (docs/spec.md §3): exit statuses, --help, --version, usage
# errors, unreadable files. Usage: cli.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

# expect STATUS PATTERN CMD...: CMD exits STATUS and its output matches PATTERN.
expect() {
	want=$1
	pattern=$2
	shift 2
	"$aotc" "$@" >"$tmp/out" 2>&1 </dev/null
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "aotc $*: exit $got, expected $want" "$(head -10 "$tmp/out")"
	elif ! grep -Eq -- "$pattern" "$tmp/out"; then
		bad "aotc $*: output does not match /$pattern/" "$(head -10 "$tmp/out")"
	else
		ok "aotc $*"
	fi
}

sgemm=$root/templates/sgemm.cu
expect 0 '^aotc [0-9]+\.[0-9]+\.[0-9]+' --version
expect 0 'libclang: .*clang version [0-9]+' --version
expect 0 'usage: aotc COMMAND' --help
for c in compile tune emit eval parse configs report link; do
	expect 0 "usage: aotc $c" "$c" --help
	expect 0 "usage: aotc $c" "$c" -h
done
expect 2 'usage: aotc COMMAND' 
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "unknown option '--frob'" parse --frob "$sgemm"
expect 2 "needs a FILE" parse
expect 2 "takes one FILE" parse "$sgemm" "$sgemm"
expect 2 "option '-I' needs an argument" parse "$sgemm" -I
expect 2 "-j needs a number" tune -j zero "$sgemm" --arch sm90
expect 2 "aotc eval: --format is text or json, not 'html'" eval "$sgemm" --arch sm90 --shapes "$root/templates/sgemm.heldout.json" --format html

# Each subcommand takes its own options: --help lists those, the others are
# usage errors naming who takes them.
"$aotc" report --help >"$tmp/help" 2>&1
if grep -q -- '--format' "$tmp/help" && ! grep -q -- '--budget\|--arch\|--dump' "$tmp/help"; then
	ok "report --help lists its options only"
else
	bad "report --help lists its options only" "$tmp/help"
fi
"$aotc" tune --help >"$tmp/help" 2>&1
if grep -q -- '--dump' "$tmp/help" && ! grep -q -- '--format\|--include-as\|--max-variants' "$tmp/help"; then
	ok "tune --help lists its options only"
else
	bad "tune --help lists its options only" "$tmp/help"
fi
expect 2 "--budget is not an option of 'aotc parse'.*'aotc compile' and 'aotc tune'" parse "$sgemm" --budget 10s -j 3
expect 2 "--arch is not an option of 'aotc report'" report "$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json" --arch host -o "$tmp/x"
expect 2 "-o is not an option of 'aotc tune'" tune "$sgemm" --arch sm90 -o "$tmp/x"
expect 2 "--format is text, json, markdown or html, not 'pdf'" report "$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json" --format pdf
expect 2 "--budget needs a duration with a unit.*not '10'" tune "$sgemm" --arch sm90 --budget 10
expect 2 "not '10x'" tune "$sgemm" --arch sm90 --budget 10x
expect 2 "not '-5s'" tune "$sgemm" --arch sm90 --budget -5s
# Architecture typos: the nearest name and the list.
for typo in sm_90 SM90 compute_90 sm900 90; do
	expect 2 "unknown architecture '$typo'; did you mean 'sm90'\?" emit "$sgemm" --arch "$typo"
	expect 2 "--arch takes: sm75 .* sm120 gfx900 .* host" emit "$sgemm" --arch "$typo"
done
# ROCm (tests/codegen/rocm.sh has the rest): known names, no database here.
mkdir -p "$tmp/nodb"
expect 3 "no tuning database" emit "$sgemm" --arch gfx90a --db "$tmp/nodb"
expect 2 "unknown architecture 'gfx9000'; did you mean 'gfx900'\?" emit "$sgemm" --arch gfx9000
expect 2 "--arch takes: sm75 .* gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942 gfx950 host" emit "$sgemm" --arch gfx9000
expect 2 "unknown architecture 'hosts'; did you mean 'host'" emit "$sgemm" --arch hosts
# link's usage errors are usage errors.
expect 2 "must name the C file" link "$tmp" -o "$tmp/multi"
expect 2 "needs -o FILE.c" link "$tmp"
# An unknown front-end mode is an environment error, not ignored.
AOTC_FRONTEND=bogus "$aotc" parse "$sgemm" >"$tmp/out" 2>&1
st=$?
if [ $st -eq 3 ] && grep -q "AOTC_FRONTEND='bogus' is not a front-end mode" "$tmp/out"; then
	ok "AOTC_FRONTEND=bogus"
else
	bad "AOTC_FRONTEND=bogus: exit $st" "$tmp/out"
fi
# A truncated or corrupt database: emit says where it breaks.
mkdir -p "$tmp/cdb"
head -c 5000 "$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json" >"$tmp/cdb/sgemm.cuda_NVIDIA_H200_13.0.json"
expect 3 "sgemm.cuda_NVIDIA_H200_13.0.json:[0-9]+:[0-9]+: error: invalid tuning database: (premature end of input|.* expected near end of file)" \
	emit "$sgemm" --arch sm90 --db "$tmp/cdb" -o "$tmp/cout"
printf '{"aotc_db": 1, "kernel": "sgemm", ]' >"$tmp/cdb/sgemm.cuda_NVIDIA_H200_13.0.json"
expect 3 "sgemm.cuda_NVIDIA_H200_13.0.json:1:[0-9]+: error: invalid tuning database" \
	emit "$sgemm" --arch sm90 --db "$tmp/cdb" -o "$tmp/cout"
[ ! -e "$tmp/cout" ] || bad "emit on a corrupt database wrote $tmp/cout"
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
expect 1 'written by a newer aotc \(IR version 99; aotc [0-9.]* reads version 1\)' parse "$tmp/v99.json"
printf '{"aotc_ir": "1"}' >"$tmp/vstr.json"
expect 1 'not an aotc IR document of version 1' parse "$tmp/vstr.json"

# Empty paths are usage errors naming the option: -o '' is no directory,
# --db '' would put the database in /.
host=$root/templates/matmul_host.cpp
hostdb=$root/tests/codegen
expect 2 "aotc emit: -o needs a path, not an empty string" emit "$host" --arch host --db "$hostdb" -o ''
expect 2 "aotc tune: --db needs a path, not an empty string" tune "$host" --arch host --db ''
expect 2 "aotc emit: --db needs a path, not an empty string" emit "$host" --arch host --db '' -o "$tmp/o"
expect 2 "aotc tune: --shapes needs a path, not an empty string" tune "$host" --arch host --shapes ''
expect 2 "aotc parse: -I needs a path, not an empty string" parse -I '' "$sgemm"
expect 2 "aotc parse: FILE needs a path, not an empty string" parse ''
expect 2 "aotc report: DB needs a path, not an empty string" report ''
expect 2 "aotc link: -o needs a path, not an empty string" link "$tmp" -o ''
[ ! -e "$tmp/o" ] || bad "--db '': nothing written"

# Every file read is bounded, also a device or a pipe that never ends:
# IR, sources and shapes files at 64 MiB, databases at 512 MiB.
ln -s /dev/zero "$tmp/zero.json"
expect 1 "zero.json: error: larger than 64 MiB" parse "$tmp/zero.json"
expect 1 "/dev/zero: error: larger than 64 MiB" tune "$host" --arch host --shapes /dev/zero --db "$tmp/zdb"
expect 3 "/dev/zero: error: .*(larger than 512 MiB|File too large)" report /dev/zero
head -c 70000000 /dev/zero >"$tmp/big.json"
expect 1 "big.json: error: larger than 64 MiB" parse "$tmp/big.json"
rm -f "$tmp/big.json"
[ ! -e "$tmp/zdb" ] || bad "--shapes /dev/zero: no database written"

# A shape the kernel's int parameter cannot take is an error at tune, not
# a shape tuned truncated (2^32 + 1 ran as 1); nothing is written.
printf '[{"M": 64, "N": 64, "K": 64}, {"M": 4294967297, "N": 64, "K": 64}]' >"$tmp/wide.json"
expect 1 "wide.json: error: shape 1: 'M' = 4294967297 does not fit the parameter's type \\(int\\)" \
	tune "$host" --arch host --shapes "$tmp/wide.json" --db "$tmp/wdb"
[ ! -e "$tmp/wdb" ] || bad "a shape that does not fit: no database written"

# Extreme shape values in a database (INT64_MAX, INT64_MIN, negative):
# no overflow in the heuristic (UBSan in the sanitized build), and the
# emitted dispatch still compiles as strict C99.
mkdir -p "$tmp/xdb"
python3 - "$hostdb"/matmul_host.host_*.json "$tmp/xdb" <<'END'
import json, os, sys
db = json.load(open(sys.argv[1]))
db["shapes"][3] = [2**63 - 1, 64, 64]
db["shapes"][4] = [64, -2**63, 2**63 - 1]
db["shapes"][5] = [-5, 64, -1]
json.dump(db, open(os.path.join(sys.argv[2], os.path.basename(sys.argv[1])), "w"))
END
expect 0 "aotc: emitted" emit "$host" --arch host --db "$tmp/xdb" -o "$tmp/xout"
if gcc -std=c99 -Wall -Wextra -Werror -pedantic -c -o "$tmp/x.o" "$tmp/xout/_aot_matmul_host_host.c" >"$tmp/cc" 2>&1; then
	ok "extreme shapes: the dispatch compiles"
else
	bad "extreme shapes: the dispatch compiles" "$(head -5 "$tmp/cc")"
fi
expect 0 "per-shape winners" report "$tmp/xdb"/matmul_host.host_*.json
# A tree split at INT64_MIN: its threshold is written as INT64_MIN, not as
# a constant too large for int64_t (-Werror in the downstream build). The
# kernel takes M as a long long here (as an int, such an M is no shape it
# can be given: no variant is valid there).
mkdir -p "$tmp/tdb"
sed 's/matmul_host(int M,/matmul_host(long long M,/; s/matmul_host_naive(int M,/matmul_host_naive(long long M,/' \
	"$host" >"$tmp/matmul_host.cpp"
"$aotc" parse "$tmp/matmul_host.cpp" >"$tmp/wide.ir.json" 2>&1
python3 - "$hostdb"/matmul_host.host_*.json "$tmp/tdb" "$tmp/wide.ir.json" <<'END'
import json, os, sys
db = json.load(open(sys.argv[1]))
db["source_hash"] = json.load(open(sys.argv[3]))["source_hash"]
ms = [-2**63, -2**63 + 1024, 2**63 - 1024, 2**63 - 1]
db["shapes"] = [[m, 64 + i, 64] for m in ms for i in range(10)]
db["measurements"] = [{"config": c, "shape": s, "status": "ok", "samples": [t] * 5, "time_ms": t, "error": 0}
                      for c in range(len(db["configs"])) for s in range(40)
                      for t in [1.0 if c == s // 10 else 3.0 if c < 4 else 5.0]]
json.dump(db, open(os.path.join(sys.argv[2], os.path.basename(sys.argv[1])), "w"))
END
expect 0 "tree depth [1-9]" emit "$tmp/matmul_host.cpp" --arch host --db "$tmp/tdb" -o "$tmp/tout"
if gcc -std=c99 -Wall -Wextra -Werror -pedantic -c -o "$tmp/t.o" "$tmp/tout/_aot_matmul_host_host.c" >"$tmp/cc" 2>&1; then
	ok "a split at INT64_MIN: the dispatch compiles"
else
	bad "a split at INT64_MIN: the dispatch compiles" "$(head -5 "$tmp/cc")"
fi

finish
