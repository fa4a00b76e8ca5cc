// expect: every need
// dot-sm with cooperative groups: block.sync() compiles to barrier.sync.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void dot(const float* a, const float* b, float* partials, size_t n)
{
    extern __shared__ float cache[];
    cg::thread_block block = cg::this_thread_block();
    float sum = 0.0f;
    for (size_t i = block.group_index().x * (size_t)block.size() + block.thread_rank(); i < n;
         i += (size_t)block.size() * gridDim.x) {
        sum += a[i] * b[i];
    }
    cache[block.thread_rank()] = sum;
    block.sync();
    for (unsigned int half = block.size() / 2; half > 0; half /= 2) {
        if (block.thread_rank() < half) {
            cache[block.thread_rank()] += cache[block.thread_rank() + half];
        }
        cg::sync(block);
    }
    if (block.thread_rank() == 0) {
        partials[blockIdx.x] = cache[0];
    }
}
