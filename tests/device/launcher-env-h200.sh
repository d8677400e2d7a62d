#!/bin/bash
# On the GPU machine: the launcher's environment (docs/cli.md) with real
# launches. The SGEMM dispatch and launcher are emitted from the committed
# H200 database (cuBLAS and a template variant), built with nvcc and
# -lcublas, and run on a few shapes, each result checked against a CPU
# reference:
#  - with nothing set, then AOTC_LOG=1 (the choice printed per launch);
#  - AOTC_VARIANT forcing the template variant where cuBLAS is chosen, and
#    cuBLAS by name: both right, both logged as forced;
#  - a VEC = 4 variant forced on N = 102 (N % 4 != 0): cudaErrorInvalidValue,
#    and C untouched (nothing launched);
#  - AOTC_RECORD: the record file after two runs holds the summed counts.
# Run from the repository root with build/ carried:
#   tests/device/launcher-env-h200.sh     (output: $OUT/launcher-env-h200.txt)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tools/device-libs.sh >/dev/null
out=${OUT:-out}
mkdir -p "$out"
log=$out/launcher-env-h200.txt
exec > >(tee "$log") 2>&1
tmp=$(mktemp -d)
build/aotc emit templates/sgemm.cu --arch sm90 --db templates -o "$tmp/gen" --quiet || exit 1
cat >"$tmp/main.cu" <<'END'
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "_aot_sgemm_cuda_sm90.h"

/* sgemm M N K for each triple on the command line; prints the launcher's
 * status and the relative error against a CPU reference (C starts as 1, so
 * an untouched C is told apart). */
int main(int argc, char **argv)
{
	for (int a = 1; a + 2 < argc; a += 3) {
		int M = atoi(argv[a]), N = atoi(argv[a + 1]), K = atoi(argv[a + 2]);
		std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N, 1.0f), R(C);
		for (size_t i = 0; i < A.size(); i++) A[i] = (float)((i * 7) % 13) / 13 - 0.5f;
		for (size_t i = 0; i < B.size(); i++) B[i] = (float)((i * 5) % 11) / 11 - 0.5f;
		float *dA, *dB, *dC;
		cudaMalloc(&dA, A.size() * 4); cudaMalloc(&dB, B.size() * 4); cudaMalloc(&dC, C.size() * 4);
		cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice);
		cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice);
		cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice);
		cudaError_t e = aot_sgemm_cuda_sm90_launch(M, N, K, 1.0f, dA, dB, 0.5f, dC, 0);
		cudaError_t s = cudaDeviceSynchronize();
		cudaMemcpy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost);
		double num = 0, den = 0, untouched = 0;
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double r = 0.5 * R[(size_t)i * N + j];
				for (int k = 0; k < K; k++) r += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
				double d = C[(size_t)i * N + j] - r;
				num += d * d; den += r * r;
				untouched += C[(size_t)i * N + j] == 1.0f;
			}
		std::printf("%dx%dx%d: launch %s, sync %s, rel.err %.2e, C untouched %s\n", M, N, K,
		            cudaGetErrorName(e), cudaGetErrorName(s), std::sqrt(num / den),
		            untouched == (double)M * N ? "yes" : "no");
		cudaFree(dA); cudaFree(dB); cudaFree(dC);
	}
	return 0;
}
END
cc -std=c99 -O2 -I "$tmp/gen" -c "$tmp/gen/_aot_sgemm_cuda_sm90.c" -o "$tmp/dispatch.o" || exit 1
nvcc -arch=sm_90 -O2 -std=c++17 -I templates -I "$tmp/gen" "$tmp/main.cu" "$tmp/gen/_aot_sgemm_cuda_sm90.cu" \
	"$tmp/dispatch.o" -lcublas -o "$tmp/prog" || exit 1
shapes="100 124 160 512 512 8192 999 777 555 128 102 64"
echo "== names"; grep '^	"sgemm' "$tmp/gen/_aot_sgemm_cuda_sm90.c"
echo "== nothing set"; "$tmp/prog" $shapes
echo "== AOTC_LOG=1"; AOTC_LOG=1 "$tmp/prog" $shapes
tv=$(grep -n '^	"sgemm<' "$tmp/gen/_aot_sgemm_cuda_sm90.c" | head -1 | cut -d: -f1)
tv=$((tv - 1 - $(grep -n 'aot_names\[AOT_NV\]' "$tmp/gen/_aot_sgemm_cuda_sm90.c" | cut -d: -f1)))
echo "== AOTC_VARIANT=sgemm=$tv (the template variant)"; AOTC_LOG=1 AOTC_VARIANT="sgemm=$tv" "$tmp/prog" $shapes
echo "== AOTC_VARIANT=sgemm=sgemm_cublas"; AOTC_LOG=1 AOTC_VARIANT=sgemm=sgemm_cublas "$tmp/prog" $shapes
echo "== AOTC_RECORD, twice"
rm -f "$tmp/rec.json"
AOTC_RECORD="$tmp/rec.json" "$tmp/prog" $shapes >/dev/null
AOTC_RECORD="$tmp/rec.json" "$tmp/prog" 512 512 8192 >/dev/null
cat "$tmp/rec.json"
rm -rf "$tmp"
