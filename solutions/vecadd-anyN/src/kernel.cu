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
    // Step 1: store a[i] + b[i] into c[i] for every i below n, with a
    //     grid-stride loop.
    // size_t, not int: past 2^31 elements an int index would overflow.
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    // A plain float loop is correct and reaches about 0.93x the copy
    // bandwidth on an H100; moving 16 bytes per access (float4) reaches about
    // 0.98x (bench/runs/2026-11-21-h100-vecadd-variants). cudaMalloc aligns
    // every buffer to 256 bytes, so a, b and c may be read as float4 from
    // their start.
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (size_t i = first; i < n / 4; i += stride) {
        const float4 x = a4[i];
        const float4 y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    // The last n % 4 elements, one float each.
    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}
