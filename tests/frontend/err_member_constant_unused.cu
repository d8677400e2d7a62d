// A class member spelling the code never uses cannot be evaluated (its
// class may need instantiating): it is an unknown name.
#include <aotc.h>

struct Tile {
	static constexpr int rows = 16;
};

template <class T>
struct alignas(16) Packed128 {
	static constexpr int size = 16 / sizeof(T);
	T payload[size];
};
typedef Packed128<float> x128;

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_VALID_IF(n % x128::size == 0)
AOTC_GRID(cdiv(n, BLOCK * x128::size), Tile::cols)
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(out, n * Tile::rows, out)
AOTC_SHAPES(n = {1024, 4096})
__global__ void fill(float *out, int n)
{
	int i = (blockIdx.x * BLOCK + threadIdx.x) * x128::size;
	for (int k = 0; k < x128::size && i + k < n; k++)
		out[blockIdx.y * n + i + k] = (float)Tile::rows;
}
