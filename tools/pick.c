/* Which precompiled SGEMM variant the emitted dispatch picks for the shapes
 * on the command line (M N K triples), with its launch geometry: a user's
 * first look at the C file that `aotc compile` writes. Built by
 * tools/demo.sh against build/gen/_aot_sgemm_cuda_sm90.c. */
#include <stdio.h>
#include <stdlib.h>

#include "_aot_sgemm_cuda_sm90.h"

int main(int argc, char **argv)
{
	if (argc < 4 || (argc - 1) % 3) {
		fprintf(stderr, "usage: pick M N K [M N K ...]\n");
		return 2;
	}
	printf("%d variants in the dispatch\n", aot_sgemm_cuda_sm90_num_variants());
	for (int i = 1; i + 2 < argc; i += 3) {
		int64_t m = atoll(argv[i]), n = atoll(argv[i + 1]), k = atoll(argv[i + 2]);
		int v = aot_sgemm_cuda_sm90_select(m, n, k);
		uint32_t grid[3], block[3], smem;
		printf("M=%-6lld N=%-6lld K=%-6lld -> ", (long long)m, (long long)n, (long long)k);
		if (v < 0) {
			printf("no valid variant\n");
			continue;
		}
		printf("%d %-30s ", v, aot_sgemm_cuda_sm90_variant_name(v));
		/* An AOTC_EXTERN routine (cuBLAS) has no launch of its own. */
		if (aot_sgemm_cuda_sm90_launch_dims(v, m, n, k, grid, block, &smem) != 0)
			printf("a library routine (AOTC_EXTERN)\n");
		else
			printf("grid %ux%u block %u\n", grid[0], grid[1], block[0]);
	}
	return 0;
}
