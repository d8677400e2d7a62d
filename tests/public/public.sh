#!/bin/sh
# Kernel files as public projects write them (tests/public/README.md), with
# annotations added and nothing else changed: they parse, enumerate and
# compile with --compile-only (nvcc: they hold host code NVRTC cannot take);
# errors clang finds in code aotc does not use are one note (each shown with
# --verbose), an error in a kernel or in what it calls still fails; element
# types resolve through typedefs and aliases; the host twin tunes for real,
# and its emitted launcher runs against the reference.
# Usage: public.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
here=$root/tests/public
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache" AOTC_HOST_FLUSH_BYTES=65536
# The host twin's OpenMP threads sleep, not spin, between parallel regions:
# no check here depends on how fast it runs, and a spinning team burns the
# CPU time of a loaded machine (the tune's measurements and the app's runs).
export OMP_WAIT_POLICY=passive
. "$(dirname "$0")/../lib.sh"
# run NAME WANT CMD...: CMD exits WANT (its output in $tmp/log)
run() {
	name=$1 want=$2
	shift 2
	"$@" >"$tmp/log" 2>&1
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else bad "$name" "exit $got, expected $want: $*" "$(tail -8 "$tmp/log")"; fi
}
has() { # NAME PATTERN: the last log has a line matching the extended regex PATTERN
	if grep -Eq -- "$2" "$tmp/log"; then ok "$1"; else bad "$1" "no line matching /$2/" "$(tail -8 "$tmp/log")"; fi
}
lacks() {
	if grep -Eq -- "$2" "$tmp/log"; then bad "$1" "a line matches /$2/" "$(grep -E -- "$2" "$tmp/log" | head -3)"; else ok "$1"; fi
}
# parse NAME WANT IR ARGS...: aotc parse ARGS exits WANT, its IR in IR and
# its messages in $tmp/log (one parse serves every check of its IR)
parse() {
	name=$1 want=$2 ir=$3
	shift 3
	"$aotc" parse "$@" >"$ir" 2>"$tmp/log"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else bad "$name" "exit $got, expected $want: aotc parse $*" "$(tail -8 "$tmp/log")"; fi
}
# dtypes IR: the kernels' buffer element types in the IR, "name=dtype/lanes ..."
dtypes() {
	python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(" ".join("%s=%s/%d" % (p["name"], p["dtype"], p["lanes"])
               for k in m["kernels"] for p in k["params"] if p.get("accounted_by") == "buffer"))' "$1" 2>/dev/null
}
same() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2'" "want '$3'"; fi
}

cd "$tmp" || exit 1

# --- gelu_forward.cu: an LLM-training project's style ----------------------
parse "gelu_forward.cu: parse" 0 gelu.json "$here/gelu_forward.cu"
has "gelu_forward.cu: one note for the errors in unused code" \
	'gelu_forward\.cu: note: 2 errors in code aotc does not use were ignored; --verbose shows them'
run "gelu_forward.cu: parse --verbose" 0 "$aotc" parse --verbose "$here/gelu_forward.cu"
has "--verbose: host isfinite in common.h" "common\.h:[0-9]+:[0-9]+: warning: no matching function for call to 'isfinite' \(in code aotc does not use; ignored\)"
has "--verbose: max(float, float) in main()" "gelu_forward\.cu:[0-9]+:[0-9]+: warning: no matching function for call to 'max' \(in code aotc does not use; ignored\)"
lacks "--verbose: <omp.h> found (the host compiler's include directories)" "omp\.h' file not found"
lacks "--verbose: the cache-hint loads and stores are declared" "call to '__(ldcs|stcs|ldcg)'"
# x128::size: a class template's static member through a typedef, as the
# code spells it; 16 bytes of floatX. (The IR of the plain parse above, and
# one parse with -DENABLE_BF16.)
x128() {
	python3 -c '
import json, sys
print([c["value"] for c in json.load(open(sys.argv[1]))["constants"] if c["name"] == "x128::size"])' "$1" 2>/dev/null
}
"$aotc" parse -DENABLE_BF16 "$here/gelu_forward.cu" >gelu_bf16.json 2>/dev/null
same "x128::size is 4 for float" "$(x128 gelu.json)" "[4]"
same "x128::size is 8 for bf16" "$(x128 gelu_bf16.json)" "[8]"
same "floatX is float by default" "$(dtypes gelu.json)" "out=f32/1 inp=f32/1"
same "floatX is __nv_bfloat16 with -DENABLE_BF16" "$(dtypes gelu_bf16.json)" "out=bf16/1 inp=bf16/1"
# (configs from the IR of the plain parse: the same enumeration, one parse less)
run "gelu_forward.cu: configs" 0 "$aotc" configs gelu.json
has "gelu_forward.cu: 5 configurations" "gelu_forward_kernel2: 5 configurations"
run "gelu_forward.cu: tune --compile-only (bf16)" 0 "$aotc" tune "$here/gelu_forward.cu" -DENABLE_BF16 --arch sm90 --compile-only
has "gelu_forward.cu: every configuration and the reference compiled" "5 of 5 configurations compiled for sm90 .*; reference compiled"

# Planted errors: in the kernel and in what it calls they fail, at their
# place; in a function nothing annotated uses they do not.
cp "$here/common.h" "$here/gelu_forward.cu" .
sed 's/float cube = 0.044715f \* xi \* xi \* xi;/float cube = 0.044715f * xi * xi * xi + no_such_value;/' gelu_forward.cu >in_kernel.cu
run "an error in the kernels fails" 1 "$aotc" parse in_kernel.cu
has "... at its place" "^in_kernel\.cu:[0-9]+:[0-9]+: error: use of undeclared identifier 'no_such_value'"
sed 's/return Packed128<ElementType>{__ldcs(/return Packed128<ElementType>{__no_such_load(/' common.h >common2.h
sed 's/"common.h"/"common2.h"/' gelu_forward.cu >in_helper.cu
run "an error in a helper the kernel calls fails" 1 "$aotc" parse in_helper.cu
has "... at its place in the header" "^\./common2\.h:[0-9]+:[0-9]+: error: use of undeclared identifier '__no_such_load'"
sed 's/out\[i\] = 0.5f \* x \*/out[i] = no_such_value * x */' gelu_forward.cu >in_unused.cu
run "an error in a host function nothing annotated uses does not" 0 "$aotc" parse in_unused.cu
has "... and is counted" "in_unused\.cu: note: 3 errors in code aotc does not use were ignored"
sed 's/AOTC_GRID(cdiv(N, block_size \* x128::size))/AOTC_GRID(ceil_div(N, block_size * x128::size))/' gelu_forward.cu >typo.cu
run "annotation typos" 1 "$aotc" parse typo.cu
has "... did you mean cdiv" "typo\.cu:[0-9]+:[0-9]+: error: unknown function 'ceil_div'; did you mean 'cdiv'\?"

# --- layernorm_forward.cu: the same project, B and T launcher-only ---------
parse "layernorm_forward.cu: parse" 0 layernorm.json "$here/layernorm_forward.cu"
has "layernorm_forward.cu: one note for the errors in unused code" \
	'note: 2 errors in code aotc does not use were ignored'
got=$(python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
print(" ".join(p["name"] + ("(launcher-only)" if p.get("launcher_only") else "")
               for p in k["params"] if p["accounted_by"] == "shape"),
      " ".join("%s=%s" % (v["param"], v["expr"]["text"]) for v in k["values"]))' layernorm.json 2>/dev/null)
same "shape arguments C, and B, T launcher-only; N = B * T" "$got" "C B(launcher-only) T(launcher-only) N=B * T"
run "layernorm_forward.cu: tune --compile-only" 0 "$aotc" tune "$here/layernorm_forward.cu" --arch sm90 --compile-only
has "layernorm_forward.cu: every configuration and the reference compiled" "4 of 4 configurations compiled for sm90 .*; reference compiled"

# --- rmsnorm_cub.cu: CUB, nv_bfloat16 and a `using` alias ------------------
parse "rmsnorm_cub.cu: parse" 0 rmsnorm.json "$here/rmsnorm_cub.cu"
same "nv_bfloat16 and using weight_t = nv_bfloat16 are bf16" "$(dtypes rmsnorm.json)" \
	"out=bf16/1 in=bf16/1 weight=bf16/1"
run "rmsnorm_cub.cu: tune --compile-only" 0 "$aotc" tune "$here/rmsnorm_cub.cu" --arch sm90 --compile-only
has "rmsnorm_cub.cu: every configuration and the reference compiled" "4 of 4 configurations compiled for sm90 .*; reference compiled"

# --- gelu_host.cpp: the host twin, tuned for real --------------------------
run "gelu_host.cpp: parse" 0 "$aotc" parse "$here/gelu_host.cpp"
has "gelu_host.cpp: g++-only code in the header is one note" "note: 1 error in code aotc does not use was ignored"
"$aotc" parse -DENABLE_FP64 "$here/gelu_host.cpp" >gelu_host64.json 2>/dev/null
same "floatX is double with -DENABLE_FP64" "$(dtypes gelu_host64.json)" "out=f64/1 inp=f64/1"
cp "$here/common_host.h" "$here/gelu_host.cpp" .
run "gelu_host.cpp: compile (tune on this CPU, with OpenMP, then emit)" 0 \
	"$aotc" compile gelu_host.cpp --arch host --db db -o gen
has "gelu_host.cpp: every cell measured" "18 measurements taken"
cat >main.cpp <<'END'
#include <cmath>
#include <cstdio>
#include <vector>
#include "common_host.h"
#include "_aot_gelu_forward_host.h"
void gelu_forward_cpu(floatX *out, const floatX *inp, int N);
int main()
{
	int failures = 0;
	for (int N : {1, 999, 4097, 100000, 2000003}) {
		std::vector<floatX> in(N), out(N, NAN), ref(N);
		for (int i = 0; i < N; i++)
			in[i] = (floatX)((i * 7919) % 2001 - 1000) / 250;
		int st = aot_gelu_forward_host_launch(out.data(), in.data(), N);
		gelu_forward_cpu(ref.data(), in.data(), N);
		int wrong = 0;
		for (int i = 0; i < N; i++)
			wrong += !(std::fabs(out[i] - ref[i]) <= 1e-5f * (1 + std::fabs(ref[i])));
		printf("N=%d: launch %d, %d wrong\n", N, st, wrong);
		failures += st != 0 || wrong != 0;
	}
	return failures != 0;
}
END
# The kernel file's main() stays out of the application's way by itself.
run "the emitted launcher builds (with the kernel file's host code and main())" 0 \
	sh -c "g++ -std=c++17 -O2 -fopenmp -I . -I gen -c gen/_aot_gelu_forward_host.cpp -o launcher.o &&
	       gcc -std=c99 -O2 -c gen/_aot_gelu_forward_host.c -o dispatch.o &&
	       g++ -std=c++17 -O2 -fopenmp -I . -I gen main.cpp launcher.o dispatch.o -o app"
run "the application gets the reference's results on untuned shapes" 0 ./app

finish
