// A shared header in the style of an LLM-training project's CUDA
// development kernels: error checks, a float/bf16 `floatX` switch, 128-bit
// packed loads and stores with cache hints, host helpers that check results
// (isfinite), a cuBLASLt handle and OpenMP for the CPU references. Written
// for aotc's tests; every kernel file here includes it unmodified.
#pragma once
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#if defined(ENABLE_BF16)
typedef __nv_bfloat16 floatX;
#define PRECISION_MODE "BF16"
#else
typedef float floatX;
#define PRECISION_MODE "FP32"
#endif

template <class T>
__host__ __device__ T ceil_div(T dividend, T divisor) { return (dividend + divisor - 1) / divisor; }

void cuda_check(cudaError_t error, const char *file, int line)
{
	if (error != cudaSuccess) {
		printf("[CUDA ERROR] at file %s:%d:\n%s\n", file, line, cudaGetErrorString(error));
		exit(EXIT_FAILURE);
	}
}
#define cudaCheck(err) (cuda_check(err, __FILE__, __LINE__))

static cublasLtHandle_t cublaslt_handle;

// 128 bits of elements, loaded and stored as one int4.
template <class ElementType>
struct alignas(16) Packed128 {
	Packed128() = default;
	__device__ explicit Packed128(int4 bits)
	{
		static_assert(sizeof(bits) == sizeof(payload), "size mismatch");
		memcpy(&payload, &bits, sizeof(bits));
	}
	__device__ ElementType &operator[](int index) { return payload[index]; }
	__device__ const ElementType &operator[](int index) const { return payload[index]; }
	__device__ int4 get_bits() const
	{
		int4 bits;
		memcpy(&bits, &payload, sizeof(bits));
		return bits;
	}
	static constexpr const size_t size = sizeof(int4) / sizeof(ElementType);
	ElementType payload[size];
};
typedef Packed128<float> f128;
typedef Packed128<floatX> x128;

// Streaming loads and stores: read once, do not keep in L1/L2.
template <class ElementType>
__device__ Packed128<ElementType> load128cs(const ElementType *address)
{
	return Packed128<ElementType>{__ldcs(reinterpret_cast<const int4 *>(address))};
}
template <class ElementType>
__device__ void store128cs(ElementType *target, Packed128<ElementType> value)
{
	__stcs(reinterpret_cast<int4 *>(target), value.get_bits());
}
template <class ElementType>
__device__ Packed128<ElementType> load128cg(const ElementType *address)
{
	return Packed128<ElementType>{__ldcg(reinterpret_cast<const int4 *>(address))};
}

// Host side: compare a device result with the CPU's.
template <class D, class T>
void validate_result(D *device_result, const T *cpu_reference, const char *name,
                     size_t num_elements, T tolerance = 1e-4)
{
	D *out_gpu = (D *)malloc(num_elements * sizeof(D));
	cudaCheck(cudaMemcpy(out_gpu, device_result, num_elements * sizeof(D), cudaMemcpyDeviceToHost));
	int nfaults = 0;
	for (size_t i = 0; i < num_elements; i++) {
		float t = (float)cpu_reference[i];
		if (!isfinite(t) || fabs(t - (float)out_gpu[i]) > tolerance + fabs(t) * 1e-2) {
			printf("Mismatch of %s at %zu: CPU_ref: %f vs GPU: %f\n", name, i, t, (float)out_gpu[i]);
			if (++nfaults >= 10)
				exit(EXIT_FAILURE);
		}
	}
	free(out_gpu);
}

float *make_random_float(size_t N)
{
	float *arr = (float *)malloc(N * sizeof(float));
	for (size_t i = 0; i < N; i++)
		arr[i] = ((float)rand() / RAND_MAX) * 2.0f - 1.0f;
	return arr;
}
