// streams-overlap: the kernel, a stand-in for real work on each element.
//
// Each element goes through x = x * 1664525 + 1013904223 (mod 2^32) `work`
// times: integer arithmetic, exact, and a loop the compiler cannot shorten,
// so `work` sets how long the kernel takes next to the copies. The kernel
// sees one chunk at a time: the host passes pointers to the chunk's first
// element and the chunk's length.

// extern "C" keeps the name unmangled, so the host finds it as "transform".
extern "C" __global__ void transform(const unsigned int* __restrict__ in,
                                     unsigned int* __restrict__ out,
                                     size_t n,
                                     unsigned int work)
{
    // Step 1: for every i below n, with a grid-stride loop, apply the step work
    //     times to in[i] and store the result in out[i].
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int x = in[i];
        for (unsigned int w = 0; w < work; ++w) {
            x = x * 1664525u + 1013904223u;
        }
        out[i] = x;
    }
}
