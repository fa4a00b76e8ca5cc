// Atomics of every operation, width and scope, in global and shared memory.
#include <cuda_fp16.h>
// Each output is the same whatever order the threads' atomics land in:
// integer results, and float sums of values whose every partial sum is exact.

// 32-bit integer add, sub, and the sum of the old values add returns (the
// returned values are 0..n-1 in some order).
//@ case atomic_add_i32
//@ launch 4 64
//@ in i32 256 rand -100 100
//@ inout i32 4 const 7
extern "C" __global__ void atomic_add_i32(const int *a, int *c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&c[0], a[i]);
    atomicSub(&c[1], a[i]);
    int old = atomicAdd(&c[2], 1);
    atomicAdd(&c[3], old);
}

// 64-bit unsigned add, with and without its result (a count's old values
// are 0..n-1 in some order: their sum is fixed).
//@ case atomic_add_u64
//@ launch 2 128
//@ in u64 256 rand 0 100000000000
//@ out u64 3
extern "C" __global__ void atomic_add_u64(const unsigned long long *a, unsigned long long *c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&c[0], a[i]);
    unsigned long long old = atomicAdd(&c[1], 1ull);
    atomicAdd(&c[2], old << 20);
}

// Float and double add of small integers and halves: every partial sum is
// exact, so any order gives the same bits.
//@ case atomic_add_float
//@ launch 4 64
//@ in i32 256 rand -20 20
//@ out f32 2
//@ out f64 2
extern "C" __global__ void atomic_add_float(const int *a, float *f, double *d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&f[0], (float)a[i]);
    atomicAdd(&f[1], 0.5f * (float)a[i]);
    atomicAdd(&d[0], (double)a[i]);
    atomicAdd(&d[1], 0.25 * (double)a[i]);
}

// min and max, signed and unsigned, 32 and 64 bits.
//@ case atomic_min_max
//@ launch 2 64
//@ in i32 128 rand -100000 100000
//@ inout i32 2 const 0
//@ inout u32 2 bits 7fffffff 0
//@ inout i64 2 const 0
//@ inout u64 2 bits ffffffffffffffff 0
extern "C" __global__ void atomic_min_max(const int *a, int *s, unsigned *u, long long *sl,
                                          unsigned long long *ul) {
    int v = a[blockIdx.x * blockDim.x + threadIdx.x];
    atomicMin(&s[0], v);
    atomicMax(&s[1], v);
    atomicMin(&u[0], (unsigned)v);
    atomicMax(&u[1], (unsigned)v);
    atomicMin(&sl[0], (long long)v * 1000000);
    atomicMax(&sl[1], (long long)v * 1000000);
    atomicMin(&ul[0], (unsigned long long)(long long)v);
    atomicMax(&ul[1], (unsigned long long)v << 20);
}

// and, or and xor, 32 and 64 bits.
//@ case atomic_bitwise
//@ launch 2 64
//@ in u32 128 rand 0 4294967295
//@ inout u32 3 bits ffffffff 0 0
//@ inout u64 3 bits ffffffffffffffff 0 0
extern "C" __global__ void atomic_bitwise(const unsigned *a, unsigned *w, unsigned long long *l) {
    unsigned v = a[blockIdx.x * blockDim.x + threadIdx.x];
    atomicAnd(&w[0], v | 0x10000001u);
    atomicOr(&w[1], v & 0x0f0f0f0fu);
    atomicXor(&w[2], v);
    unsigned long long wide = (unsigned long long)v << 32 | v;
    atomicAnd(&l[0], wide | 0x100000000ull);
    atomicOr(&l[1], wide & 0x00ff00ff00ff00ffull);
    atomicXor(&l[2], wide);
}

// exch and cas: each slot is claimed by exactly one thread (whichever comes
// first), so the counts are fixed; and a float maximum by a CAS loop, which
// starts from a plain read as the CUDA programming guide's own CAS loops do.
//@ case atomic_exch_cas
//@ launch 2 64
//@ in f32 128 rand -1000 1000
//@ out i32 16
//@ out u32 3
//@ out f32 1
//@ out u64 2
extern "C" __global__ void atomic_exch_cas(const float *x, int *slots, unsigned *wins,
                                           float *max, unsigned long long *wide) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int slot = i % 16;
    if (atomicCAS(&slots[slot], 0, 1) == 0) {
        atomicAdd(&wins[0], 1);
    }
    if (atomicExch(&wins[1], 5u) == 0) {
        atomicAdd(&wins[2], 100);
    }
    int *bits = (int *)max;
    int old = *bits, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= x[i] && assumed != 0) {
            break;
        }
        old = atomicCAS(bits, assumed, __float_as_int(x[i]));
    } while (old != assumed);
    if (atomicCAS(&wide[0], 0ull, 0x123456789abcdefull) == 0) {
        atomicExch(&wide[1], 0xfedcba9876543210ull);
    }
}

// inc and dec wrap at their bound: the final values depend only on counts.
//@ case atomic_inc_dec
//@ launch 3 64
//@ out u32 2
extern "C" __global__ void atomic_inc_dec(unsigned *c) {
    atomicInc(&c[0], 9u);
    atomicDec(&c[1], 13u);
}

// Block and system scopes, in global and shared memory.
//@ case atomic_scopes
//@ launch 2 64
//@ in i32 128 rand 0 50
//@ out i32 8
extern "C" __global__ void atomic_scopes(const int *a, int *c) {
    __shared__ int s[2];
    if (threadIdx.x < 2) {
        s[threadIdx.x] = 0;
    }
    __syncthreads();
    int v = a[blockIdx.x * blockDim.x + threadIdx.x];
    atomicAdd_block(&s[0], v);
    atomicMax_block(&s[1], v);
    atomicAdd_system(&c[0], v);
    atomicMax_system(&c[1], v);
    atomicOr_system(&c[2], 1 << (v % 31));
    atomicCAS_block(&c[3], 0, 1);
    atomicExch_system(&c[4], 3);
    atomicAdd_block(&c[5], 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&c[6], s[0]);
        atomicMax(&c[7], s[1]);
    }
}

// A histogram in shared memory, added into global memory per block.
//@ case shared_histogram
//@ launch 4 128
//@ in u32 512 rand 0 16
//@ out u32 16
extern "C" __global__ void shared_histogram(const unsigned *a, unsigned *bins) {
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) {
        local[threadIdx.x] = 0;
    }
    __syncthreads();
    atomicAdd(&local[a[blockIdx.x * blockDim.x + threadIdx.x]], 1u);
    __syncthreads();
    if (threadIdx.x < 16) {
        atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
    }
}

// Shared-memory atomics of 64 bits and floats.
//@ case shared_atomics_wide
//@ launch 1 128
//@ in i32 128 rand -8 8
//@ out f32 1
//@ out f64 1
//@ out u64 1
extern "C" __global__ void shared_atomics_wide(const int *a, float *f, double *d,
                                               unsigned long long *u) {
    __shared__ float sf;
    __shared__ double sd;
    __shared__ unsigned long long su;
    if (threadIdx.x == 0) {
        sf = 0.0f;
        sd = 0.0;
        su = 0;
    }
    __syncthreads();
    int v = a[threadIdx.x];
    atomicAdd(&sf, (float)v);
    atomicAdd(&sd, (double)v * 0.5);
    atomicAdd(&su, (unsigned long long)(v + 8) << 33);
    __syncthreads();
    if (threadIdx.x == 0) {
        *f = sf;
        *d = sd;
        *u = su;
    }
}

// The last block to finish sums every block's partial: each block writes
// its partial, __threadfence() makes it visible, and a counter picks the
// last block (the CUDA samples' threadFenceReduction).
//@ case last_block_sum
//@ launch 6 64
//@ in i32 384 rand -1000 1000
//@ out i32 6
//@ out u32 1
//@ out i32 1
extern "C" __global__ void last_block_sum(const int *a, int *partial, unsigned *count, int *total) {
    __shared__ int sum;
    __shared__ bool last;
    if (threadIdx.x == 0) {
        sum = 0;
    }
    __syncthreads();
    atomicAdd(&sum, a[blockIdx.x * blockDim.x + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sum;
        __threadfence();
        last = atomicInc(count, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        int s = 0;
        for (int b = 0; b < gridDim.x; b++) {
            s += ((volatile int *)partial)[b];
        }
        *total = s;
    }
}

// 16-bit atomics (compute 7.0 and newer): atomicAdd on __half with small
// integers (exact in any order), atomicCAS on unsigned short claiming slots.
//@ case atomic_half_short
//@ launch 2 64
//@ in i32 128 rand -8 8
//@ out u16 2
//@ out u16 8
//@ out u32 1
extern "C" __global__ void atomic_half_short(const int *a, __half *h, unsigned short *slots,
                                             unsigned *wins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&h[0], __int2half_rn(a[i]));
    atomicAdd(&h[1], __float2half(0.5f));
    if (atomicCAS(&slots[i % 8], (unsigned short)0, (unsigned short)(i % 8 + 1)) == 0) {
        atomicAdd(wins, 1u);
    }
}

// Warp-aggregated atomics: the active lanes elect a leader, which adds
// their count once; each lane's place is the old value plus its rank.
// Every place from 0 to the total is taken exactly once.
//@ case warp_aggregated_atomic
//@ launch 2 96
//@ in i32 192 rand 0 10
//@ out u32 1
//@ out u32 192
extern "C" __global__ void warp_aggregated_atomic(const int *a, unsigned *count, unsigned *taken) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (a[i] % 3 != 0) {
        unsigned active = __activemask();
        int leader = __ffs(active) - 1;
        int lane = threadIdx.x % 32;
        unsigned rank = __popc(active & ((1u << lane) - 1));
        unsigned base = 0;
        if (lane == leader) {
            base = atomicAdd(count, (unsigned)__popc(active));
        }
        base = __shfl_sync(active, base, leader);
        atomicAdd(&taken[base + rank], 1u);
    }
}
