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

    // Step 1: sum a[i] * b[i] over this thread's grid-stride loop into a
    //     running sum.
    // 16 bytes per load (float4) keep the memory system busy
    // (bench/runs/2026-11-21-h100-vecadd-variants); cudaMalloc aligns buffers
    // to 256 bytes. The leftover n % 4 elements take the scalar loop below.
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float sum = 0.0f;
    for (size_t i = first; i < n / 4; i += stride) {
        const float4 x = a4[i];
        const float4 y = b4[i];
        sum += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
    }
    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {
        sum += a[i] * b[i];
    }

    // Step 2: store the running sum in cache[threadIdx.x], then add the cache
    //     up as a tree, with __syncthreads() after the store and after every
    //     step.
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        // Outside the if: every thread of the block must reach the barrier.
        __syncthreads();
    }

    // Step 3: let thread 0 add the block's total, cache[0], into *result with
    //     atomicAdd.
    if (threadIdx.x == 0) {
        atomicAdd(result, cache[0]);
    }
}
