// expect: every need
// dot-sm whose barriers are __syncthreads_or (bar.red): the tree stops as
// soon as no thread has anything left to add.
extern "C" __global__ void dot(const float* a, const float* b, float* partials, size_t n)
{
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    cache[threadIdx.x] = sum;
    unsigned int half = blockDim.x / 2;
    while (__syncthreads_or(half > 0)) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        half /= 2;
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = cache[0];
    }
}
