// matmul-naive: P = M × N for square W × W matrices, one thread per entry
// of P, in a 2D grid of 2D blocks that covers any W.
//
// Which thread gets which entry matters more than anything else here. The
// 32 threads of a warp have consecutive threadIdx.x (and equal threadIdx.y),
// so threadIdx.x picks the column: at every k the warp then reads 32
// consecutive floats of N's row k, and at the end writes 32 consecutive
// entries of P's row, each in a few wide memory transactions (coalesced).
// The warp's reads of M[row][k] are one address, which the hardware sends
// to all 32 threads at once. Give threadIdx.x the row instead, and every
// thread of the warp reads a different row of N and writes a different row
// of P: 32 separate transactions for each, several times slower.
//
// The grid is rounded up to whole blocks, so blocks at the right and bottom
// edges have threads past the matrix: they must neither read nor write.

// extern "C" keeps the name unmangled, so the host finds the kernel as "matmul".
extern "C" __global__ void matmul(const float* __restrict__ m,
                                  const float* __restrict__ n,
                                  float* __restrict__ p,
                                  int width)
{
    // TODO(step 1): compute P[row][col] = the sum over k of M[row][k] *
    //     N[k][col], rows from the y indices and columns from the x indices,
    //     for threads inside the matrix only.
}
