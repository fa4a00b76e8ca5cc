// expect: every need
// matmul-naive with the block's place from cooperative groups.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void matmul(const float* m, const float* n, float* p, int width)
{
    cg::thread_block block = cg::this_thread_block();
    const int row = block.group_index().y * block.group_dim().y + block.thread_index().y;
    const int col = block.group_index().x * block.group_dim().x + block.thread_index().x;
    if (row < width && col < width) {
        float sum = 0.0f;
        for (int k = 0; k < width; ++k) {
            sum += m[row * width + k] * n[k * width + col];
        }
        p[row * width + col] = sum;
    }
}
