// expect: lacks Atomic(Global)
// Wrong: the block adds atomically into shared memory, but every block then
// overwrites the result with a plain store.
extern "C" __global__ void dot(const float* a, const float* b, float* result, size_t n)
{
    __shared__ float block_total;
    if (threadIdx.x == 0) {
        block_total = 0.0f;
    }
    __syncthreads();
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    atomicAdd(&block_total, sum);
    __syncthreads();
    if (threadIdx.x == 0) {
        *result += block_total;
    }
}
