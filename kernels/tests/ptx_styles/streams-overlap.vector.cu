// expect: every need
// streams-overlap with uint4 loads and stores and a scalar tail.
__device__ unsigned int step(unsigned int x, unsigned int work)
{
    for (unsigned int w = 0; w < work; ++w) {
        x = x * 1664525u + 1013904223u;
    }
    return x;
}

extern "C" __global__ void transform(const unsigned int* in, unsigned int* out, size_t n, unsigned int work)
{
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = first; i < n / 4; i += stride) {
        const uint4 x = reinterpret_cast<const uint4*>(in)[i];
        reinterpret_cast<uint4*>(out)[i] = make_uint4(step(x.x, work), step(x.y, work), step(x.z, work), step(x.w, work));
    }
    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {
        out[i] = step(in[i], work);
    }
}
