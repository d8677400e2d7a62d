#!/bin/sh
# AOTC_TYPES (docs/annotations.md) without timing anything:
#   errors: bad AOTC_TYPES are told once each, with their line, exit 1;
#   CUDA: tests/families/scale_types.cu (float, __half, __nv_bfloat16)
#   compiles for sm90 with --compile-only; from made-up databases (times from
#   a formula, NOT measured) each type emits, and the launchers and a C++
#   caller of the three overloads compile with nvcc; aotc link joins sm80 and
#   sm90 of the three types and its header overloads the linked launcher;
#   hipcc builds the float and __half launchers for gfx90a.
#   types-host.sh: tuned for real on the host.
# Usage: types-built.sh AOTC REPO_ROOT
. "$(dirname "$0")/setup.sh"

cd "$tmp" || exit 1
cp "$src/axpy_types.cpp" .

# ---- errors -----------------------------------------------------------------
# bad_types LINE MESSAGE AT: axpy_types.cpp with its AOTC_TYPES line replaced
# by LINE: exit 1, MESSAGE once (not once per type), at line:column AT
bad_types() {
	sed "s/^AOTC_TYPES(T, float, double)\$/$1/" axpy_types.cpp >bad.cpp
	"$aotc" configs bad.cpp >bad.out 2>bad.err
	st=$?
	n=$(grep -c "error: .*$2" bad.err)
	if [ $st -eq 1 ] && [ "$n" -eq 1 ] && grep -q "^bad.cpp:$3: error: .*$2" bad.err; then
		ok "error once, at line $3: $1"
	else
		bad "error for $1" "exit $st, $n errors" "$(cat bad.err | head -8)"
	fi
}
bad_types "AOTC_TYPES(T, float, float)" "is the type of 'float' (f32) again" "8:22"
bad_types "AOTC_TYPES(T, float, int32_t, int)" "'int' is the type of 'int32_t' (i32) again" "8:31"
bad_types "AOTC_TYPES(MODE, float)" "'MODE' is not a type template parameter of 'axpy'" "8:12"
bad_types "AOTC_TYPES(T, float, Foo)" "'Foo' is not a type aotc fills and compares" "8:22"
bad_types "AOTC_TYPES(T)" "give 'T' and at least one type" "8:12"
bad_types "AOTC_TOLERANCE(0.001)" "type template parameter 'T' needs a default or AOTC_TYPES" "7:17"
bad_types "AOTC_TYPES(T, float, double) AOTC_TOLERANCE(__half = 1e-2)" "'__half' is not one of the types of AOTC_TYPES" "8:45"
bad_types "AOTC_TYPES(T, float, double) AOTC_TOLERANCE(float = 1e-5, float = 1e-4)" "'float' given twice" "8:59"
bad_types "AOTC_TYPES(T, float, double) AOTC_TOLERANCE(1e-5, 1e-4)" "one tolerance for every type at most" "8:51"

# a kernel named like one of the types
cp axpy_types.cpp clash.cpp
cat >>clash.cpp <<'END'

template <int U>
AOTC_TUNE(U, 1, 2)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 0.5)
AOTC_SHAPES(n = {4096})
void axpy_f64(int n, double a, const double *x, double *y)
{
    for (int i = 0; i < n; ++i)
        y[i] += a * x[i];
}
END
"$aotc" configs clash.cpp >bad.out 2>bad.err
st=$?
if [ $st -eq 1 ] && grep -q "^clash.cpp:45:6: error: kernel 'axpy_f64' has the name of type f64 of 'axpy'" bad.err; then
	ok "error: a kernel named axpy_f64 beside axpy of AOTC_TYPES(T, float, double)"
else
	bad "error for a kernel named like a type" "exit $st" "$(head -5 bad.err)"
fi

# ---- CUDA: compile-only and emit from made-up databases -----------------------
nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ]; then
	echo "no CUDA toolkit: CUDA part skipped"
	finish
fi
"$aotc" tune "$src/scale_types.cu" --arch sm90 --compile-only -j 2 >tune.log 2>&1
st=$?
for t in f32 f16 bf16; do
	if [ $st -eq 0 ] && grep -q "^scale_$t: 4 of 4 configurations compiled for sm90.*reference compiled" tune.log; then
		ok "cuda: scale_$t compiles for sm90 with its reference (scale_ref<T>)"
	else
		bad "cuda: scale_$t compile-only" "exit $st" "$(tail -6 tune.log)"
	fi
done
mkdir -p cdb
python3 - "$aotc" "$src/scale_types.cu" cdb >log 2>&1 <<'END'
import json, re, subprocess, sys
aotc, src, out = sys.argv[1:]
# one parse; each type's configurations from its IR (configs reads IR JSON)
ir_text = subprocess.run([aotc, "parse", src], capture_output=True, text=True, check=True).stdout
open("scale_ir.json", "w").write(ir_text)
ir = json.loads(ir_text)
for k in ir["kernels"]:
    kid = k["name"] + "_" + k["type_key"]["tag"]
    names = [n for n in subprocess.run([aotc, "configs", "scale_ir.json", "--kernel", kid], capture_output=True, text=True,
                                       check=True).stdout.split("\n") if n.startswith("scale<")]
    values = [[int(v) for v in re.findall(r", (\d+)", n)] for n in names]
    shapes = [[v] for v in k["shapes"][0]["values"]]
    ms = []
    for c in range(len(names)):
        for s, (n,) in enumerate(shapes):
            t = round(0.002 + n * 1e-9 * (1 + 0.1 * abs(c - (n > 100000) * (len(names) - 1))), 6)
            ms.append({"config": c, "shape": s, "status": "ok", "time_ms": t, "samples": [t, t, t], "error": 0.0})
    for backend, arch in (("cuda", "sm90"), ("rocm", "gfx90a")):
        db = {"aotc_db": 1, "kernel": kid, "source": src, "source_hash": ir["source_hash"],
              "hardware": {"id": backend + "_made_up_" + arch, "backend": backend,
                           "name": "made up by types.sh, not measured", "arch": arch, "sm_count": 132},
              "method": {"note": "times from a formula, not measurements"},
              "tunables": [t["name"] for t in k["tunables"]], "shape_args": ["n"],
              "configs": [{"name": n, "values": v} for n, v in zip(names, values)],
              "shapes": shapes, "measurements": ms}
        json.dump(db, open("%s/%s.%s_made_up_%s.json" % (out, kid, backend, arch), "w"), indent=1)
END
[ $? -eq 0 ] || bad "cuda: made-up databases" "$(tail -8 log)"
if "$aotc" emit "$src/scale_types.cu" --arch sm90 --db cdb -o cout >log 2>&1; then
	ok "cuda: emit --arch sm90 writes one file set per type"
else
	bad "cuda: emit --arch sm90" "$(tail -8 log)"
fi
for t in f32 f16 bf16; do
	try "cuda: _aot_scale_${t}_cuda_sm90.c compiles (gcc -std=c99 -Werror)" \
		gcc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -c -o cout/d_$t.o cout/_aot_scale_${t}_cuda_sm90.c
	try "cuda: _aot_scale_${t}_cuda_sm90.cu compiles (nvcc -arch=sm_90)" \
		"$nvcc" -std=c++17 -arch=sm_90 -I "$src" -I cout -c -o cout/l_$t.o cout/_aot_scale_${t}_cuda_sm90.cu
done
cat >caller.cu <<'END'
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "_aot_scale_f32_cuda_sm90.h"
#include "_aot_scale_f16_cuda_sm90.h"
#include "_aot_scale_bf16_cuda_sm90.h"
cudaError_t all(int n, const float *a, float *b, const __half *c, __half *d, const __nv_bfloat16 *e,
                __nv_bfloat16 *f, cudaStream_t s)
{
	cudaError_t r = aot_scale_cuda_sm90_launch(n, a, b, s);
	if (r == cudaSuccess)
		r = aot_scale_cuda_sm90_launch(n, c, d, s);
	return r == cudaSuccess ? aot_scale_cuda_sm90_launch(n, e, f, s) : r;
}
END
try "cuda: one C++ caller of aot_scale_cuda_sm90_launch for float, __half and __nv_bfloat16 compiles" \
	"$nvcc" -std=c++17 -arch=sm_90 -I cout -c -o caller.o caller.cu
# aotc link: sm80 from the same made-up databases relabelled; one linked
# dispatch for the three types, whose header overloads the linked launcher.
for f in cdb/*.cuda_made_up_sm90.json; do
	sed 's/"sm90"/"sm80"/; s/cuda_made_up_sm90/cuda_made_up_sm80/' "$f" >"${f%sm90.json}sm80.json"
done
"$aotc" emit "$src/scale_types.cu" --arch sm80 --db cdb -o c80 >log 2>&1 &&
	mkdir -p lout && "$aotc" link cout c80 -o lout/aot_scale.c >>log 2>&1
st=$?
n=$(grep -c "^static inline cudaError_t aot_scale_cuda_launch(" lout/aot_scale.h 2>/dev/null)
if [ $st -eq 0 ] && [ "$n" -eq 3 ]; then
	ok "cuda: aotc link of sm80 and sm90 joins the three types, its header overloads aot_scale_cuda_launch"
else
	bad "cuda: link of typed kernels" "exit $st, $n overloads" "$(tail -5 log)"
fi
sed 's/_aot_scale_f32_cuda_sm90.h/aot_scale.h/; /_aot_scale_f16_cuda_sm90.h/d; /_aot_scale_bf16_cuda_sm90.h/d; s/aot_scale_cuda_sm90_launch/aot_scale_cuda_launch/g' caller.cu >lcaller.cu
try "cuda: the linked launcher and a caller of its overloads compile (nvcc, sm_80 and sm_90)" \
	"$nvcc" -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-I "$src" -I lout -I cout -I c80 -c lout/aot_scale.cu lcaller.cu
hipcc=$(command -v hipcc || true)
if "$aotc" emit "$src/scale_types.cu" --arch gfx90a --db cdb -o hout >log 2>&1 &&
	[ -f hout/_aot_scale_bf16_rocm_gfx90a.hip ]; then
	ok "rocm: emit --arch gfx90a writes one file set per type"
	# (ROCm 5.2 has no __nv_bfloat16: the bf16 launcher is CUDA's only)
	for t in f32 f16; do
		[ -n "$hipcc" ] || break
		try "rocm: _aot_scale_${t}_rocm_gfx90a.hip compiles (hipcc --offload-arch=gfx90a)" \
			"$hipcc" -std=c++17 --offload-arch=gfx90a -x hip -I "$src" -I hout -c -o hout/l.o hout/_aot_scale_${t}_rocm_gfx90a.hip
	done
else
	bad "rocm: emit --arch gfx90a" "$(tail -8 log)"
fi
finish
