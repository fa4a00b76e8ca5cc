// dot-atomic: a dot product summed entirely on the GPU.
//
// Each thread keeps a running sum of a[i] * b[i] over its grid-stride loop.
// Then the block adds its threads' sums in shared memory as a tree: at every
// step the lower half of the live slots adds the upper half's, halving them
// until slot 0 holds the block's total (so blockDim.x must be a power of
// two). Every step reads slots other threads wrote, so all threads meet at a
// barrier, __syncthreads(), before the next step reads. Then each block adds
// its total into one float in global memory. Blocks run concurrently, so a
// plain `*result += total` would race: two blocks read the same old value
// and one addition is lost. atomicAdd does the read, add and write as one
// indivisible step. The order of the additions varies from run to run, and
// so, in the last bits, does the float32 result.

// extern "C" keeps the name unmangled, so the host finds the kernel as "dot".
extern "C" __global__ void dot(const float* __restrict__ a,
                               const float* __restrict__ b,
                               float* __restrict__ result,
                               size_t n)
{
    // One float per thread, sized at launch (the launch's shared-memory bytes).
    extern __shared__ float cache[];

    // TODO(step 1): sum a[i] * b[i] over this thread's grid-stride loop into a
    //     running sum.
    float sum = 0.0f;

    // TODO(step 2): store the running sum in cache[threadIdx.x], then add the
    //     cache up as a tree, with __syncthreads() after the store and after
    //     every step.

    // TODO(step 3): let thread 0 add the block's total, cache[0], into *result
    //     with atomicAdd.
}
