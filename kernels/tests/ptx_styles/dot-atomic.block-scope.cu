// expect: every need
// dot-atomic: threads add into a shared total with atomicAdd_block (legal:
// only the block touches it), then one inline-PTX red with gpu scope adds
// the block's total into the result.
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
    atomicAdd_block(&block_total, sum);
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("red.relaxed.gpu.global.add.f32 [%0], %1;" ::"l"(result), "f"(block_total) : "memory");
    }
}
