// expect: every need
// dot-atomic whose atomic add is a compare-and-swap loop on the float's bits,
// in a device function nvcc must call rather than inline.
__device__ __noinline__ void add_by_cas(float* address, float value)
{
    unsigned int* bits = reinterpret_cast<unsigned int*>(address);
    unsigned int seen = *bits;
    unsigned int assumed;
    do {
        assumed = seen;
        seen = atomicCAS(bits, assumed, __float_as_uint(__uint_as_float(assumed) + value));
    } while (seen != assumed);
}

extern "C" __global__ void dot(const float* a, const float* b, float* result, size_t n)
{
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
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
        add_by_cas(result, cache[0]);
    }
}
