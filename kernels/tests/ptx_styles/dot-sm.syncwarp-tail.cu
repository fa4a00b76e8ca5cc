// expect: every need
// dot-sm whose tree uses block barriers down to 32 values and finishes in
// the first warp with __syncwarp on a volatile view.
extern "C" __global__ void dot(const float* a, const float* b, float* partials, size_t n)
{
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 16; half /= 2) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        volatile float* v = cache;
        for (unsigned int half = min(16u, blockDim.x / 2); half > 0; half /= 2) {
            if (threadIdx.x < half) {
                v[threadIdx.x] += v[threadIdx.x + half];
            }
            __syncwarp();
        }
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = cache[0];
    }
}
