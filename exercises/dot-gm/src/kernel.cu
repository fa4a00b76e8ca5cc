// dot-gm: the first half of a dot product on the GPU, c[i] = a[i] * b[i].
// The host adds the n products up.
//
// Each thread multiplies elements i, i + stride, i + 2*stride, ... where
// stride is the number of threads in the grid (a grid-stride loop), so any
// grid covers any n. The catch is the sum: the host must copy all n
// products back and add them, which the next exercise, dot-sm, avoids.

// extern "C" keeps the name unmangled, so the host finds the kernel as "dot".
extern "C" __global__ void dot(const float* __restrict__ a,
                               const float* __restrict__ b,
                               float* __restrict__ c,
                               size_t n)
{
    // TODO(step 1): store a[i] * b[i] into c[i] for every i below n, with a
    //     grid-stride loop.
}
