// vecadd-anyN: c = a + b for vectors of any length.
//
// The grid may hold far fewer threads than the vectors have elements, so one
// pass of the grid does not reach every element. Each thread therefore takes
// elements i, i + stride, i + 2*stride, ... where stride is the number of
// threads in the whole grid: a grid-stride loop. It works for any n and any
// launch shape, and consecutive threads still touch consecutive elements, so
// every warp's loads and stores stay coalesced.

// extern "C" keeps the name unmangled, so the host finds the kernel as "vecadd".
extern "C" __global__ void vecadd(const float* __restrict__ a,
                                  const float* __restrict__ b,
                                  float* __restrict__ c,
                                  size_t n)
{
    // TODO(step 1): store a[i] + b[i] into c[i] for every i below n, with a
    //     grid-stride loop.
}
