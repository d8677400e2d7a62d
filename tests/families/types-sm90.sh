#!/bin/bash
# AOTC_TYPES on an sm90 GPU (H100 or H200), in one device call from the
# repository root with the Debian build carried along (carry: ["build/aotc"]):
#   1. tests/families/scale_types.cu tuned for float, __half and
#      __nv_bfloat16 (each against scale_ref<T> on the host);
#   2. emitted for sm90, the three launchers built with nvcc into one program
#      that calls aot_scale_cuda_sm90_launch for each type on a shape the
#      tuner never saw and checks every element (2x is exact in all three).
# Output: $OUT/types-sm90.txt and the three databases. Run on an H100 on
# 2026-12-05 (no H200 could be started): tests/families/device/.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/types-sm90.txt") 2>&1
. tools/device-libs.sh
export AOTC_CACHE_DIR=/tmp/aotc-cache
db=/tmp/types-db
gen=/tmp/types-gen
rm -rf "$db" "$gen"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build/aotc --version | head -1 || exit 2

echo "== 1. tune every type"
build/aotc tune tests/families/scale_types.cu --arch sm90 --db "$db" -j 16 2>&1 | grep -v '^aotc: compiled'
cp "$db"/scale_*.json "$OUT/"

echo "== 2. emit, build, run"
build/aotc emit tests/families/scale_types.cu --arch sm90 --db "$db" -o "$gen" || exit 1
cat >"$gen/main.cu" <<'END'
#include <cstdio>
#include <vector>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "_aot_scale_f32_cuda_sm90.h"
#include "_aot_scale_f16_cuda_sm90.h"
#include "_aot_scale_bf16_cuda_sm90.h"

template <class T> int check(const char *what, int n, const char *chosen)
{
	std::vector<T> h(n), out(n);
	for (int i = 0; i < n; i++)
		h[i] = T(float(i % 1000) * 0.25f);
	T *x, *y;
	cudaMalloc(&x, n * sizeof(T));
	cudaMalloc(&y, n * sizeof(T));
	cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
	cudaError_t e = aot_scale_cuda_sm90_launch(n, (const T *)x, y, (cudaStream_t)0);
	cudaMemcpy(out.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost);
	int bad = e != cudaSuccess;
	for (int i = 0; i < n && !bad; i++)
		bad = float(out[i]) != float(h[i]) * 2.0f;
	std::printf("%-14s n=%d %s: %s\n", what, n, chosen, bad ? "WRONG" : "right");
	cudaFree(x);
	cudaFree(y);
	return bad;
}

int main()
{
	int n = 300001, bad = 0;
	bad += check<float>("float", n, aot_scale_f32_cuda_sm90_variant_name(aot_scale_f32_cuda_sm90_select(n)));
	bad += check<__half>("__half", n, aot_scale_f16_cuda_sm90_variant_name(aot_scale_f16_cuda_sm90_select(n)));
	bad += check<__nv_bfloat16>("__nv_bfloat16", n,
	                            aot_scale_bf16_cuda_sm90_variant_name(aot_scale_bf16_cuda_sm90_select(n)));
	std::printf("%s\n", bad ? "FAIL" : "PASS: every type's launcher ran its dispatch's choice, right results");
	return bad;
}
END
for t in f32 f16 bf16; do
	gcc -std=c99 -O2 -c -o "$gen/d_$t.o" "$gen/_aot_scale_${t}_cuda_sm90.c" || exit 1
	nvcc -std=c++17 -arch=sm_90 -O2 -I tests/families -I "$gen" -c -o "$gen/l_$t.o" "$gen/_aot_scale_${t}_cuda_sm90.cu" || exit 1
done
nvcc -std=c++17 -arch=sm_90 -O2 -I "$gen" -o "$gen/main" "$gen/main.cu" "$gen"/l_*.o "$gen"/d_*.o -lcuda && "$gen/main"
