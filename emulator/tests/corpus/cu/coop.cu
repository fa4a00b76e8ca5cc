// Cooperative groups: the thread block, tiles of fixed and runtime size,
// their shuffles, votes and cg::reduce, and coalesced groups.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace cg = cooperative_groups;

// thread_block: its rank, size and sync, and a shared-memory exchange.
//@ case cg_block
//@ launch 2 96
//@ in i32 192 iota 3
//@ out i32 192
//@ out u32 2
extern "C" __global__ void cg_block(const int *a, int *out, unsigned *sizes) {
    __shared__ int s[96];
    cg::thread_block block = cg::this_thread_block();
    unsigned r = block.thread_rank();
    s[r] = a[blockIdx.x * blockDim.x + r];
    block.sync();
    out[blockIdx.x * blockDim.x + r] = s[block.size() - 1 - r] + (int)block.group_index().x;
    if (r == 0) {
        sizes[blockIdx.x] = block.size() * 1000 + block.group_dim().x;
    }
}

// A tile of 32: shfl_down to a sum per tile.
//@ case cg_tile32_sum
//@ launch 1 128
//@ in i32 128 rand -50 50
//@ out i32 4
extern "C" __global__ void cg_tile32_sum(const int *a, int *sums) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int v = a[block.thread_rank()];
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) {
        v += tile.shfl_down(v, offset);
    }
    if (tile.thread_rank() == 0) {
        sums[block.thread_rank() / 32] = v;
    }
}

// cg::reduce with plus over tiles of 16, and with greater over tiles of 32.
//@ case cg_reduce
//@ launch 1 64
//@ in i32 64 rand 0 1000
//@ in f32 64 rand -5 5
//@ out i32 4
//@ out f32 2
extern "C" __global__ void cg_reduce(const int *a, const float *x, int *sums, float *maxima) {
    cg::thread_block block = cg::this_thread_block();
    unsigned r = block.thread_rank();
    cg::thread_block_tile<16> sixteen = cg::tiled_partition<16>(block);
    int sum = cg::reduce(sixteen, a[r], cg::plus<int>());
    if (sixteen.thread_rank() == 0) {
        sums[r / 16] = sum;
    }
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float top = cg::reduce(warp, x[r], cg::greater<float>());
    if (warp.thread_rank() == 0) {
        maxima[r / 32] = top;
    }
}

// A tile whose size is chosen at run time, synchronising a shared-memory
// sum within each tile of 8.
//@ case cg_dynamic_tile
//@ launch 1 64
//@ in i32 64 iota 2 1
//@ out i32 64
extern "C" __global__ void cg_dynamic_tile(const int *a, int *out) {
    __shared__ int s[64];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_group tile = cg::tiled_partition(block, 8);
    unsigned r = block.thread_rank();
    unsigned base = r - tile.thread_rank();
    s[r] = a[r];
    tile.sync();
    int total = 0;
    for (unsigned k = 0; k < tile.size(); k++) {
        total += s[base + k];
    }
    tile.sync();
    s[r] = total;
    tile.sync();
    out[r] = s[base + (tile.thread_rank() + 1) % tile.size()] * 100 + (int)tile.thread_rank();
}

// Votes and a broadcast on tiles of 8 and 4.
//@ case cg_tile_vote
//@ launch 1 32
//@ in i32 32 mod 6
//@ out u32 32
extern "C" __global__ void cg_tile_vote(const int *a, unsigned *out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
    cg::thread_block_tile<4> quad = cg::tiled_partition<4>(block);
    int v = a[block.thread_rank()];
    unsigned r = tile.ballot(v > 2);
    r |= (unsigned)tile.any(v == 5) << 8;
    r |= (unsigned)tile.all(v < 6) << 9;
    r |= (unsigned)quad.shfl(v, 3) << 12;
    r |= tile.meta_group_rank() << 16;
    out[block.thread_rank()] = r;
}

// A coalesced group inside a branch: its size, each member's rank, and a
// broadcast from its first member.
//@ case cg_coalesced
//@ launch 1 32
//@ in i32 32 mod 4
//@ out u32 32
extern "C" __global__ void cg_coalesced(const int *a, unsigned *out) {
    unsigned r = 0;
    int v = a[threadIdx.x];
    if (v != 1) {
        cg::coalesced_group active = cg::coalesced_threads();
        int first = active.shfl((int)threadIdx.x, 0);
        r = active.size() | active.thread_rank() << 8 | (unsigned)first << 16;
    }
    out[threadIdx.x] = r;
}

// cg::inclusive_scan and cg::exclusive_scan over tiles of 32 and 8.
//@ case cg_scan
//@ launch 1 64
//@ in i32 64 rand -100 100
//@ out i32 64
//@ out i32 64
extern "C" __global__ void cg_scan(const int *a, int *inclusive, int *exclusive) {
    cg::thread_block block = cg::this_thread_block();
    unsigned r = block.thread_rank();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    inclusive[r] = cg::inclusive_scan(warp, a[r]);
    cg::thread_block_tile<8> eight = cg::tiled_partition<8>(block);
    exclusive[r] = cg::exclusive_scan(eight, a[r], cg::plus<int>());
}
