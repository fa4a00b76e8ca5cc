// The grader's canary for dot-atomic: the sum of products, added atomically,
// every product scaled by a factor the mark (canary_mix, generated per
// build) draws, 3% to 28% above 1.
extern "C" __global__ void dot(const float* __restrict__ a,
                               const float* __restrict__ b,
                               float* __restrict__ result,
                               size_t n)
{
    extern __shared__ float cache[];
    const float scale = 1.0f + (float)(32 + (canary_mix(n) & 255)) / 1024.0f;
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        sum += a[i] * b[i] * scale;
    }
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(result, cache[0]);
    }
}
