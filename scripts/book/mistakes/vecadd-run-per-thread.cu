// vecadd-anyN with each thread walking its own run of consecutive
// elements, for the book's access picture (scripts/book/accesses.py).
// Right for any n, and the most common way to lose coalescing by
// accident: at each step, lane i of a warp reads element i * run, so the
// warp's 32 reads are run x 4 bytes apart, each in a sector of its own.
extern "C" __global__ void vecadd(const float* a, const float* b, float* c, size_t n)
{
    const size_t threads = (size_t)blockDim.x * gridDim.x;
    const size_t run = (n + threads - 1) / threads;
    const size_t first = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * run;
    for (size_t i = first; i < first + run && i < n; ++i) {
        c[i] = a[i] + b[i];
    }
}
