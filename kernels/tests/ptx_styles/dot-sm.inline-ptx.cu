// expect: every need
// dot-sm whose barrier and shared stores are inline PTX.
__device__ __forceinline__ void block_barrier()
{
    asm volatile("barrier.sync.aligned 0;" ::: "memory");
}

extern "C" __global__ void dot(const float* a, const float* b, float* partials, size_t n)
{
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    const unsigned int slot = (unsigned int)__cvta_generic_to_shared(&cache[threadIdx.x]);
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(slot), "f"(sum) : "memory");
    block_barrier();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        block_barrier();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = cache[0];
    }
}
