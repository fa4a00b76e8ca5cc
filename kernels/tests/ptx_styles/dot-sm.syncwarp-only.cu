// expect: lacks BlockBarrier
// Wrong: __syncwarp holds one warp, not the block, so the tree races
// across warps; no block barrier in the PTX.
extern "C" __global__ void dot(const float* a, const float* b, float* partials, size_t n)
{
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    cache[threadIdx.x] = sum;
    __syncwarp();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        __syncwarp();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = cache[0];
    }
}
