// expect: every need
// vecadd with cooperative groups: the grid's size in threads comes from
// cg::this_grid(), and float4 loads with a scalar tail.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void vecadd(const float* a, const float* b, float* c, size_t n)
{
    cg::grid_group grid = cg::this_grid();
    const size_t stride = grid.size();
    const size_t first = grid.thread_rank();
    for (size_t i = first; i < n / 4; i += stride) {
        const float4 x = reinterpret_cast<const float4*>(a)[i];
        const float4 y = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (size_t i = n / 4 * 4 + first; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}
