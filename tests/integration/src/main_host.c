/* A downstream program using aotc's emitted host (CPU) matmul: it runs the
 * launcher on a few shapes and checks C against a plain triple loop, so the
 * whole chain (emit, build, dispatch, variant) is exercised without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "_aot_matmul_host_host.h"

int main(void)
{
	static const int shapes[][3] = {{32, 32, 32}, {64, 100, 100}, {256, 256, 256}, {17, 128, 33}};
	int bad = 0;
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
		float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
		float *C = malloc(sizeof(float) * M * N);
		for (int i = 0; i < M * K; i++)
			A[i] = (float)(i % 7) - 3.0f;
		for (int i = 0; i < K * N; i++)
			B[i] = (float)(i % 5) - 2.0f;
		int v = aot_matmul_host_host_select(M, N, K);
		int rc = aot_matmul_host_host_launch(M, N, K, A, B, C);
		double worst = 0.0;
		for (int i = 0; i < M && rc == 0; i++)
			for (int j = 0; j < N; j++) {
				float acc = 0.0f;
				for (int k = 0; k < K; k++)
					acc += A[i * K + k] * B[k * N + j];
				worst = fmax(worst, fabs(C[i * N + j] - acc));
			}
		printf("M=%d N=%d K=%d: variant %d %s, launch %d, largest difference %g\n", M, N, K, v,
		       v >= 0 ? aot_matmul_host_host_variant_name(v) : "(none)", rc, worst);
		bad |= v < 0 || rc != 0 || worst > 1e-3;
		free(A);
		free(B);
		free(C);
	}
	return bad;
}
