// The grader's canary for streams-overlap: the solution's transform, with
// the bits of about one output in 256 flipped, which and how chosen by the
// mark (canary_mix, generated per build) from the input value.

__device__ unsigned int canary_flip(unsigned int v)
{
    const unsigned long long h = canary_mix(0x5eedull);
    return ((v ^ (unsigned int)h) & 255u) == 0 ? ((unsigned int)(h >> 32) | 1u) : 0u;
}


extern "C" __global__ void transform(const unsigned int* __restrict__ in,
                                     unsigned int* __restrict__ out,
                                     size_t n,
                                     unsigned int work)
{
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int x = in[i];
        for (unsigned int w = 0; w < work; ++w) {
            x = x * 1664525u + 1013904223u;
        }
        out[i] = x ^ canary_flip(in[i]);
    }
}
