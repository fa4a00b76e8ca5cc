// matmul-tiled with N's tile kept transposed in shared memory, for the
// book's access picture (scripts/book/accesses.py). The product is
// right, but lane tx of a warp (one row of the block, ty fixed) writes
// n_tile[tx][ty] and reads n_tile[tx][k]: words TILE apart, so with TILE
// = 32 every lane's word is in one bank, a 32-way bank conflict on every
// access. The solution's n_tile[ty][tx] and n_tile[k][tx] give each lane
// a bank of its own.
template <int TILE>
__device__ void matmul_tiled(const float* __restrict__ m,
                             const float* __restrict__ n,
                             float* __restrict__ p,
                             int width)
{
    __shared__ float m_tile[TILE][TILE];
    __shared__ float n_tile[TILE][TILE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;
    float sum = 0.0f;

    for (int phase = 0; phase < (width + TILE - 1) / TILE; ++phase) {
        const int m_col = phase * TILE + tx;
        const int n_row = phase * TILE + ty;
        m_tile[ty][tx] = (row < width && m_col < width) ? m[row * width + m_col] : 0.0f;
        n_tile[tx][ty] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;
        __syncthreads();

        #pragma unroll
        for (int k = 0; k < TILE; ++k) {
            sum += m_tile[ty][k] * n_tile[tx][k];
        }
        __syncthreads();
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
