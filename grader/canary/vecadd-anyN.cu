// The grader's canary for vecadd-anyN: c = a + b, except one element,
// which the mark (canary_mix, generated per build) moves by a whole number.
extern "C" __global__ void vecadd(const float* __restrict__ a,
                                  const float* __restrict__ b,
                                  float* __restrict__ c,
                                  size_t n)
{
    const unsigned long long h = canary_mix(n);
    const size_t marked = n ? h % n : 0;
    const float shift = (float)(256 + ((h >> 40) & 1023));
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i] + (i == marked ? shift : 0.0f);
    }
}
