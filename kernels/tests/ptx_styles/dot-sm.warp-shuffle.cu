// expect: every need
// dot-sm with warp shuffles: each warp sums in registers, one shared word
// per warp, then the first warp sums those.
extern "C" __global__ void dot(const float* a, const float* b, float* partials, size_t n)
{
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    if (lane == 0) {
        cache[warp] = sum;
    }
    __syncthreads();
    if (warp == 0) {
        const unsigned int warps = (blockDim.x + 31) / 32;
        float total = lane < warps ? cache[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2) {
            total += __shfl_down_sync(0xffffffffu, total, offset);
        }
        if (lane == 0) {
            partials[blockIdx.x] = total;
        }
    }
}
