// expect: every need
// matmul-tiled with cooperative groups' block.sync() (barrier.sync), the
// tile's inner loop reading four entries of m_tile at a time.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <int TILE>
__device__ void matmul_tiled(const float* m, const float* n, float* p, int width)
{
    __shared__ __align__(16) float m_tile[TILE][TILE];
    __shared__ float n_tile[TILE][TILE];
    cg::thread_block block = cg::this_thread_block();
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;
    float sum = 0.0f;
    for (int phase = 0; phase < (width + TILE - 1) / TILE; ++phase) {
        const int m_col = phase * TILE + tx;
        const int n_row = phase * TILE + ty;
        m_tile[ty][tx] = (row < width && m_col < width) ? m[row * width + m_col] : 0.0f;
        n_tile[ty][tx] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;
        block.sync();
        for (int k = 0; k < TILE; k += 4) {
            const float4 four = *reinterpret_cast<const float4*>(&m_tile[ty][k]);
            sum += four.x * n_tile[k][tx] + four.y * n_tile[k + 1][tx] + four.z * n_tile[k + 2][tx] +
                   four.w * n_tile[k + 3][tx];
        }
        block.sync();
    }
    if (row < width && col < width) {
        p[row * width + col] = sum;
    }
}

extern "C" __global__ void matmul_tiled_16(const float* m, const float* n, float* p, int width)
{
    matmul_tiled<16>(m, n, p, width);
}

extern "C" __global__ void matmul_tiled_32(const float* m, const float* n, float* p, int width)
{
    matmul_tiled<32>(m, n, p, width);
}
