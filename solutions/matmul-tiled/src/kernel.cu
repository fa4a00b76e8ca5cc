// matmul-tiled: P = M × N for square W × W matrices, with tiles of M and N
// staged in shared memory.
//
// In matmul-naive every thread reads a whole row of M and a whole column of
// N from global memory: each element of M and N is read W times. Here a
// TILE × TILE block computes a TILE × TILE tile of P, walking along k one
// tile at a time (a phase). In each phase every thread loads one element of
// M's tile and one of N's into shared memory, the block waits until all are
// loaded, then each thread takes its TILE products from shared memory, and
// the block waits again before the next phase overwrites the tiles. Each
// element of M and N now leaves global memory W / TILE times instead of W.
//
// W need not be a multiple of TILE: the last tile in each direction hangs
// over the matrix's edge. Threads load 0 there (0 adds nothing to a sum),
// and only threads inside the matrix write P.

// The kernel for one tile size; the host picks matmul_tiled_16 or _32.
template <int TILE>
__device__ void matmul_tiled(const float* __restrict__ m,
                             const float* __restrict__ n,
                             float* __restrict__ p,
                             int width)
{
    __shared__ float m_tile[TILE][TILE];
    __shared__ float n_tile[TILE][TILE];
    // x picks the column, as in matmul-naive, so loads and stores coalesce.
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;
    float sum = 0.0f;

    for (int phase = 0; phase < (width + TILE - 1) / TILE; ++phase) {
        // Step 1: load this phase's tiles, m_tile[ty][tx] from M[row][phase *
        //     TILE + tx] and n_tile[ty][tx] from N[phase * TILE + ty][col], 0
        //     past the matrix's edge, then __syncthreads().
        const int m_col = phase * TILE + tx;
        const int n_row = phase * TILE + ty;
        m_tile[ty][tx] = (row < width && m_col < width) ? m[row * width + m_col] : 0.0f;
        n_tile[ty][tx] = (n_row < width && col < width) ? n[n_row * width + col] : 0.0f;
        __syncthreads();

        // Step 2: add m_tile[ty][k] * n_tile[k][tx] for every k in the tile to
        //     the sum, then __syncthreads() before the next phase overwrites
        //     the tiles.
        // In a warp, m_tile[ty][k] is one address (a broadcast) and
        // n_tile[k][tx] 32 consecutive ones (32 banks): no bank conflicts.
        #pragma unroll
        for (int k = 0; k < TILE; ++k) {
            sum += m_tile[ty][k] * n_tile[k][tx];
        }
        __syncthreads();
    }

    // Step 3: write the sum to P[row][col] if the thread lies inside the
    //     matrix.
    if (row < width && col < width) {
        p[row * width + col] = sum;
    }
}

// extern "C" keeps the names unmangled, so the host finds them.
extern "C" __global__ void matmul_tiled_16(const float* m, const float* n, float* p, int width)
{
    matmul_tiled<16>(m, n, p, width);
}

extern "C" __global__ void matmul_tiled_32(const float* m, const float* n, float* p, int width)
{
    matmul_tiled<32>(m, n, p, width);
}
