// expect: every need
// dot-atomic summing in double with warp shuffles of doubles; each warp
// adds its total, rounded to float, with atomicAdd_system.
extern "C" __global__ void dot(const float* a, const float* b, float* result, size_t n)
{
    double sum = 0.0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += (double)a[i] * (double)b[i];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd_system(result, (float)sum);
    }
}
