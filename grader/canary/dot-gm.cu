// The grader's canary for dot-gm: every product scaled by a factor the
// mark (canary_mix, generated per build) draws, 3% to 28% above 1.
extern "C" __global__ void dot(const float* __restrict__ a,
                               const float* __restrict__ b,
                               float* __restrict__ c,
                               size_t n)
{
    const float scale = 1.0f + (float)(32 + (canary_mix(n) & 255)) / 1024.0f;
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] * b[i] * scale;
    }
}
