// The grader's canary for matmul-tiled: P = M x N in tiles, except one
// entry, which the mark (canary_mix, generated per build) moves by a whole
// number.
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
        n_tile[ty][tx] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            sum += m_tile[ty][k] * n_tile[k][tx];
        }
        __syncthreads();
    }
    if (row < width && col < width) {
        const unsigned long long h = canary_mix((unsigned long long)width);
        const long long marked = (long long)(h % ((unsigned long long)width * width));
        const long long at = (long long)row * width + col;
        p[at] = sum + (at == marked ? (float)(256 + ((h >> 40) & 1023)) : 0.0f);
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
