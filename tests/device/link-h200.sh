#!/bin/bash
# On the GPU machine: the multi-architecture dispatch of `aotc link` built
# and run for real. Per-architecture outputs for sm80, sm90 and sm100 are
# emitted from copies of the H200 SGEMM database relabelled (with some times
# skewed, so the three dispatches differ), linked, built as a user would
# (the linked .cu alone with one -gencode per architecture), and the linked
# launcher is run on the H200 against a CPU reference. Run from the
# repository root with build/ carried: tests/device/link-h200.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. tools/device-libs.sh
tmp=$(mktemp -d)
for a in sm80 sm90 sm100; do
	mkdir -p "$tmp/db_$a" "$tmp/$a"
	python3 - templates/sgemm.cuda_NVIDIA_H200_13.0.json "$tmp/db_$a/sgemm.$a.json" "$a" <<'PY'
import json, sys
src, dst, arch = sys.argv[1:]
d = json.load(open(src))
d["hardware"]["arch"] = arch
# Without the cuBLAS routine, which wins most shapes on every copy alike:
# the three dispatches are to differ.
keep = [i for i, c in enumerate(d["configs"]) if not c.get("extern")]
index = {old: new for new, old in enumerate(keep)}
d["configs"] = [d["configs"][i] for i in keep]
d["measurements"] = [dict(m, config=index[m["config"]]) for m in d["measurements"] if m["config"] in index]
slow = {"sm80": 128, "sm100": 32}.get(arch)
if slow:
    names = [c["name"] for c in d["configs"]]
    for m in d["measurements"]:
        if m["status"] == "ok" and names[m["config"]].startswith("sgemm<%d," % slow):
            m["time_ms"] *= 3
json.dump(d, open(dst, "w"))
PY
	build/aotc emit templates/sgemm.cu --arch "$a" --db "$tmp/db_$a" -o "$tmp/$a" --quiet
done
mkdir -p "$tmp/link"
build/aotc link "$tmp/sm80" "$tmp/sm90" "$tmp/sm100" -o "$tmp/link/aot_sgemm.c"
cat >"$tmp/link/main.cu" <<'CU'
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>
#include "aot_sgemm.h"

int main()
{
	int dev, major, minor;
	cudaGetDevice(&dev);
	cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
	cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
	int cc = major * 10 + minor;
	printf("device cc %d -> %s\n", cc, aot_sgemm_cuda_arch_name(cc));
	int shapes[][3] = {{384, 1536, 512}, {999, 777, 555}, {4096, 4096, 256}};
	int fails = 0;
	for (auto &s : shapes) {
		int M = s[0], N = s[1], K = s[2];
		std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N), R;
		unsigned x = 12345;
		auto rnd = [&]() { x = x * 1664525u + 1013904223u; return (float)(x >> 8) / 16777216.0f * 2 - 1; };
		for (auto &v : A) v = rnd();
		for (auto &v : B) v = rnd();
		for (auto &v : C) v = rnd();
		R = C;
		float *dA, *dB, *dC;
		cudaMalloc(&dA, A.size() * 4);
		cudaMalloc(&dB, B.size() * 4);
		cudaMalloc(&dC, C.size() * 4);
		cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice);
		cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice);
		cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice);
		cudaError_t e = aot_sgemm_cuda_launch(M, N, K, 1.0f, dA, dB, 0.5f, dC, 0);
		if (e == cudaSuccess)
			e = cudaDeviceSynchronize();
		cudaMemcpy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost);
		double num = 0, den = 0;
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double acc = 0;
				for (int k = 0; k < K; k++)
					acc += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
				double ref = acc + 0.5 * R[(size_t)i * N + j];
				double d = C[(size_t)i * N + j] - ref;
				num += d * d;
				den += ref * ref;
			}
		double err = sqrt(num / den);
		int v = aot_sgemm_cuda_select(cc, M, N, K);
		bool ok = e == cudaSuccess && err <= 1e-5;
		printf("M=%d N=%d K=%d: %s variant %d (%s) err %.2e %s\n", M, N, K, cudaGetErrorString(e), v,
		       aot_sgemm_cuda_variant_name(cc, v), err, ok ? "PASS" : "FAIL");
		fails += !ok;
		cudaFree(dA);
		cudaFree(dB);
		cudaFree(dC);
	}
	printf("%d passed, %d failed\n", 3 - fails, fails);
	return fails != 0;
}
CU
cd "$tmp/link"
gen="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100"
for a in sm80 sm90 sm100; do
	cc -std=c99 -O2 -c "../$a/_aot_sgemm_cuda_$a.c" -o "$a.o"
done
cc -std=c99 -O2 -I. -c aot_sgemm.c -o aot_sgemm.c.o
nvcc -std=c++17 -O2 $gen -I "$OLDPWD/templates" -I. -c aot_sgemm.cu -o aot_sgemm.cu.o
nvcc -std=c++17 -O2 $gen -I. -c main.cu -o main.o
# -lcublas: the launcher includes sgemm.cu, whose cuBLAS routine is there
# even where no dispatch calls it (the linked header says "Link with").
nvcc $gen main.o aot_sgemm.cu.o aot_sgemm.c.o sm80.o sm90.o sm100.o -lcublas -o main
./main
