// Warp-level primitives: shuffles of each kind and type, votes, __syncwarp,
// __activemask and __match_*_sync. A case is declared in the //@ lines above
// its kernel (tests/corpus/spec.rs).

// Each warp's sum with __shfl_down_sync, and each lane's value after one step
// of 5 (lanes 27 to 31 read past the warp and keep their own).
//@ case shfl_down_i32
//@ launch 2 64
//@ in i32 128 rand -1000 1000
//@ out i32 4
//@ out i32 128
extern "C" __global__ void shfl_down_i32(const int *a, int *sums, int *step) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = a[i];
    step[i] = __shfl_down_sync(0xffffffff, v, 5);
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    if (threadIdx.x % 32 == 0) {
        sums[i / 32] = v;
    }
}

// An inclusive scan of floats with __shfl_up_sync.
//@ case shfl_up_scan_f32
//@ launch 1 64
//@ in f32 64 rand -1 1
//@ out f32 64
extern "C" __global__ void shfl_up_scan_f32(const float *a, float *scan) {
    int lane = threadIdx.x % 32;
    float v = a[threadIdx.x];
    for (int d = 1; d < 32; d *= 2) {
        float up = __shfl_up_sync(0xffffffff, v, d);
        if (lane >= d) {
            v += up;
        }
    }
    scan[threadIdx.x] = v;
}

// A butterfly all-reduce of doubles: each 64-bit value travels as two 32-bit
// halves (mov.b64 {lo, hi}).
//@ case shfl_xor_f64
//@ launch 1 64
//@ in f64 64 rand -100 100
//@ out f64 64
extern "C" __global__ void shfl_xor_f64(const double *a, double *out) {
    double v = a[threadIdx.x];
    for (int mask = 16; mask > 0; mask /= 2) {
        v += __shfl_xor_sync(0xffffffff, v, mask);
    }
    out[threadIdx.x] = v;
}

// __shfl_sync of 64-bit integers from a lane each thread computes.
//@ case shfl_idx_u64
//@ launch 1 32
//@ in u64 32 rand 0 1000000000000000
//@ out u64 32
//@ out i64 32
extern "C" __global__ void shfl_idx_u64(const unsigned long long *a, unsigned long long *out,
                                        long long *negated) {
    int lane = threadIdx.x % 32;
    unsigned long long v = a[threadIdx.x];
    out[threadIdx.x] = __shfl_sync(0xffffffff, v, (lane * 7 + 3) % 32);
    negated[threadIdx.x] = __shfl_sync(0xffffffff, -(long long)v, 31 - lane);
}

// Shuffles within segments of 8, 16 and 4 lanes (the width argument).
//@ case shfl_width
//@ launch 1 32
//@ in i32 32 iota 10 1
//@ out i32 32
//@ out i32 32
//@ out i32 32
extern "C" __global__ void shfl_width(const int *a, int *down, int *idx, int *up) {
    int v = a[threadIdx.x];
    down[threadIdx.x] = __shfl_down_sync(0xffffffff, v, 3, 8);
    idx[threadIdx.x] = __shfl_sync(0xffffffff, v, 5, 16);
    up[threadIdx.x] = __shfl_up_sync(0xffffffff, v, 2, 4);
}

// Only the lower half-warp shuffles, with its own mask.
//@ case shfl_half_warp
//@ launch 1 32
//@ in f32 32 rand 0 10
//@ out f32 32
extern "C" __global__ void shfl_half_warp(const float *a, float *out) {
    float v = a[threadIdx.x];
    if (threadIdx.x < 16) {
        for (int offset = 8; offset > 0; offset /= 2) {
            v += __shfl_xor_sync(0x0000ffff, v, offset, 16);
        }
    }
    out[threadIdx.x] = v;
}

// A sum of doubles per block: shuffles in each warp, then the warps'
// partials through shared memory (the reduction a student writes).
//@ case shfl_block_sum_f64
//@ launch 3 128
//@ in f64 384 rand 0 1
//@ out f64 3
extern "C" __global__ void shfl_block_sum_f64(const double *a, double *sums) {
    __shared__ double partial[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    double v = a[blockIdx.x * blockDim.x + threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? partial[lane] : 0.0;
        for (int offset = 16; offset > 0; offset /= 2) {
            v += __shfl_down_sync(0xffffffff, v, offset);
        }
        if (lane == 0) {
            sums[blockIdx.x] = v;
        }
    }
}

// __any_sync, __all_sync and __uni_sync over several predicates, and one
// vote by the upper half-warp alone.
//@ case vote_any_all
//@ launch 1 64
//@ in i32 64 mod 7
//@ out u32 64
extern "C" __global__ void vote_any_all(const int *a, unsigned *out) {
    int lane = threadIdx.x % 32;
    int v = a[threadIdx.x];
    unsigned r = 0;
    r |= (unsigned)__any_sync(0xffffffff, v == 6) << 0;
    r |= (unsigned)__all_sync(0xffffffff, v < 7) << 1;
    r |= (unsigned)__all_sync(0xffffffff, v != 3) << 2;
    r |= (unsigned)__any_sync(0xffffffff, v > 100) << 3;
    r |= (unsigned)__uni_sync(0xffffffff, v >= 0) << 4;
    r |= (unsigned)__uni_sync(0xffffffff, v == 2) << 5;
    if (lane >= 16) {
        r |= (unsigned)__any_sync(0xffff0000, v == 0) << 6;
        r |= (unsigned)__all_sync(0xffff0000, lane > 15) << 7;
    }
    out[threadIdx.x] = r;
}

// Stream compaction: a ballot, and each kept lane's place from the popcount
// of the ballot below it.
//@ case ballot_compact
//@ launch 1 64
//@ in i32 64 rand 0 100
//@ out i32 64
//@ out u32 2
extern "C" __global__ void ballot_compact(const int *a, int *packed, unsigned *ballots) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int v = a[threadIdx.x];
    bool keep = v % 3 == 0;
    unsigned b = __ballot_sync(0xffffffff, keep);
    int below = __popc(b & ((1u << lane) - 1));
    if (keep) {
        packed[warp * 32 + below] = v;
    }
    if (lane == 0) {
        ballots[warp] = b;
    }
}

// A tree in shared memory whose last steps are warp-synchronous: each step
// reads and writes disjoint halves, and __syncwarp() orders one step's
// writes before the next step's reads.
//@ case syncwarp_tail
//@ launch 2 128
//@ in f32 256 rand 0 1
//@ out f32 2
extern "C" __global__ void syncwarp_tail(const float *a, float *sums) {
    __shared__ float cache[128];
    int t = threadIdx.x;
    cache[t] = a[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s /= 2) {
        if (t < s) {
            cache[t] += cache[t + s];
        }
        __syncthreads();
    }
    if (t < 32) {
        volatile float *v = cache;
        for (int s = 32; s > 0; s /= 2) {
            if (t < s) {
                v[t] += v[t + s];
            }
            __syncwarp();
        }
    }
    if (t == 0) {
        sums[blockIdx.x] = cache[0];
    }
}

// The same tail with explicit masks: only the lanes still working meet.
//@ case syncwarp_masks
//@ launch 1 64
//@ in i32 64 rand 0 1000
//@ out i32 1
extern "C" __global__ void syncwarp_masks(const int *a, int *sum) {
    __shared__ int cache[64];
    int t = threadIdx.x;
    cache[t] = a[t];
    __syncthreads();
    if (t < 32) {
        volatile int *v = cache;
        v[t] += v[t + 32];
        __syncwarp();
        for (int s = 16; s > 0; s /= 2) {
            if (t < 2 * s) {
                if (t < s) {
                    v[t] += v[t + s];
                }
                __syncwarp(0xffffffffu >> (32 - 2 * s));
            }
        }
    }
    if (t == 0) {
        *sum = cache[0];
    }
}

// __activemask() inside a branch that a third of the lanes take.
//@ case activemask_branch
//@ launch 1 64
//@ in i32 64 iota
//@ out u32 64
extern "C" __global__ void activemask_branch(const int *a, unsigned *out) {
    unsigned m = 0;
    if (a[threadIdx.x] % 3 == 0) {
        m = __activemask();
    }
    out[threadIdx.x] = m;
}

// __match_any_sync and __match_all_sync (compute 7.0 and newer).
//@ case match_any_all
//@ launch 1 64
//@ in i32 64 mod 5
//@ out u32 64
//@ out u32 64
extern "C" __global__ void match_any_all(const int *a, unsigned *any, unsigned *all) {
    int v = a[threadIdx.x];
    any[threadIdx.x] = __match_any_sync(0xffffffff, v);
    int pred = 0;
    unsigned m = __match_all_sync(0xffffffff, threadIdx.x < 32 ? 1 : v, &pred);
    all[threadIdx.x] = m ^ (unsigned)pred;
}

// Lane masks and the lane index from special registers, as inline PTX.
//@ case lane_registers
//@ launch 1 64
//@ out u32 64
//@ out u32 64
//@ out u32 64
extern "C" __global__ void lane_registers(unsigned *lane, unsigned *lt, unsigned *ge) {
    unsigned l, a, b;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(a));
    asm("mov.u32 %0, %%lanemask_ge;" : "=r"(b));
    lane[threadIdx.x] = l;
    lt[threadIdx.x] = a;
    ge[threadIdx.x] = b;
}
