// vecadd-anyN's classic first mistake, for the book's access picture
// (scripts/book/accesses.py): one element a thread and no grid-stride
// loop, so every element past blocks x threads is never written.
extern "C" __global__ void vecadd(const float* a, const float* b, float* c, size_t n)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
