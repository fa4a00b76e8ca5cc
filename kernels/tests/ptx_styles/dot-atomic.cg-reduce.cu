// expect: every need
// dot-atomic with cooperative groups: each warp's tile reduces with
// cg::reduce, and its first thread adds the warp's total atomically.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void dot(const float* a, const float* b, float* result, size_t n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        sum += a[i] * b[i];
    }
    const float total = cg::reduce(warp, sum, cg::plus<float>());
    if (warp.thread_rank() == 0) {
        atomicAdd(result, total);
    }
}
