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
    // Step 1: store a[i] * b[i] into c[i] for every i below n, with a
    //     grid-stride loop.
    // As in vecadd-anyN, 16 bytes per access (float4) keep the memory system
    // busier than 4 (bench/runs/2026-11-21-h100-vecadd-variants); cudaMalloc aligns
    // buffers to 256 bytes.
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (size_t i = first; i < n / 4; i += stride) {
        const float4 x = a4[i];
        const float4 y = b4[i];
        c4[i] = make_float4(x.x * y.x, x.y * y.y, x.z * y.z, x.w * y.w);
    }
    // The last n % 4 elements, one float each.
    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {
        c[i] = a[i] * b[i];
    }
}
