// expect: every need
// dot-sm whose barrier and shared-memory steps are device functions nvcc
// calls rather than inlines.
__device__ __noinline__ void block_barrier()
{
    __syncthreads();
}

__device__ __noinline__ void add_from(float* cache, unsigned int to, unsigned int from)
{
    cache[to] += cache[from];
}

extern "C" __global__ void dot(const float* a, const float* b, float* partials, size_t n)
{
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    cache[threadIdx.x] = sum;
    block_barrier();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            add_from(cache, threadIdx.x, threadIdx.x + half);
        }
        block_barrier();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = cache[0];
    }
}
