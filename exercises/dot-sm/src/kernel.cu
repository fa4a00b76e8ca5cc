// dot-sm: a dot product summed on the GPU, block by block.
//
// Each thread keeps a running sum of a[i] * b[i] over its grid-stride loop.
// Then the block adds its threads' sums in shared memory as a tree: at every
// step the lower half of the live slots adds the upper half's, halving them
// until slot 0 holds the block's total (so blockDim.x must be a power of
// two). Every step reads slots other threads wrote, so all threads meet at a
// barrier, __syncthreads(), before the next step reads. One partial per block
// goes back to the host, which adds them: blocks-many floats, not n.

// extern "C" keeps the name unmangled, so the host finds the kernel as "dot".
extern "C" __global__ void dot(const float* __restrict__ a,
                               const float* __restrict__ b,
                               float* __restrict__ partials,
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

    // TODO(step 3): let thread 0 write the block's total, cache[0], to
    //     partials[blockIdx.x].
}
