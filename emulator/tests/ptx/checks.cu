// Kernels for the emulator's tests: correct ones with known results, and
// mutants with one fault each. Rebuild checks.ptx with
//   nvcc -ptx -lineinfo -arch=compute_75 checks.cu -o checks.ptx
#include <cassert>
#include <cstdio>

extern "C" __global__ void shared_race(const float *a, float *out) {
    __shared__ float cache[64];
    int t = threadIdx.x;
    cache[t] = a[t];
    // Missing __syncthreads(): thread t reads cache[t + s] while its owner
    // may not have written it yet.
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) cache[t] += cache[t + s];
    }
    if (t == 0) out[blockIdx.x] = cache[0];
}

extern "C" __global__ void global_conflict(const float *a, float *c) {
    if (threadIdx.x == 0) *c += a[blockIdx.x];
}

extern "C" __global__ void out_of_bounds(const float *a, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + (float)n;
}

extern "C" __global__ void misaligned(const float *a, float *c) {
    const float *shifted = (const float *)((const char *)a + 2);
    c[threadIdx.x] = shifted[threadIdx.x];
}

extern "C" __global__ void divergent_barrier(float *c) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 16) {
        __syncthreads();
        c[threadIdx.x] = s[threadIdx.x];
    } else {
        __syncthreads();
        c[threadIdx.x] = 2 * s[threadIdx.x];
    }
}

extern "C" __global__ void warp_sum(const int *a, int *sums, unsigned *ballots) {
    int v = a[blockIdx.x * blockDim.x + threadIdx.x];
    unsigned ballot = __ballot_sync(0xffffffff, v % 2 == 1);
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    if (threadIdx.x % 32 == 0) {
        sums[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
        ballots[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = ballot;
    }
}

extern "C" __global__ void atomics(const int *a, int *out) {
    int v = a[blockIdx.x * blockDim.x + threadIdx.x];
    atomicAdd(&out[0], v);
    atomicMax(&out[1], v);
    atomicMin(&out[2], v);
    atomicOr(&out[3], 1 << (v % 31));
}

extern "C" __global__ void math(const float *x, float *out, int *iout) {
    int i = threadIdx.x;
    float v = x[i];
    out[4 * i] = sqrtf(v);
    out[4 * i + 1] = __fdiv_rd(1.0f, v);
    out[4 * i + 2] = fminf(v, 2.0f) * __int_as_float(0x3f800000);
    out[4 * i + 3] = (float)(int)v / 3.0f;
    iout[2 * i] = (int)v % 7 - (i >> 1);
    iout[2 * i + 1] = __float2int_rn(v * 2.5f) ^ __popc(i);
}

extern "C" __global__ void prints(float *c) {
    printf("hello %f from %d\n", c[0], threadIdx.x);
}

// The last steps of a tree without __syncwarp(): lane t reads v[t + s]
// while lane t + s may not have written it yet (a race in the CUDA memory
// model, whatever a warp's lockstep made of it on older GPUs).
extern "C" __global__ void warp_tail_unsynced(const float *a, float *out) {
    __shared__ float cache[64];
    int t = threadIdx.x;
    cache[t] = a[t];
    __syncthreads();
    if (t < 32) {
        volatile float *v = cache;
        for (int s = 32; s > 0; s /= 2) {
            if (t < s) v[t] += v[t + s];
        }
    }
    if (t == 0) out[0] = cache[0];
}

// Lanes of one warp adding into one global word with a plain +=.
extern "C" __global__ void warp_global_race(const int *a, int *c) {
    *c += a[threadIdx.x];
}

// A tree that reads past the part of shared memory the block wrote (only
// blockDim.x of 64 elements), into the sum that reaches global memory.
extern "C" __global__ void unwritten_shared_sum(const float *a, float *out) {
    __shared__ float cache[64];
    int t = threadIdx.x;
    cache[t] = a[t];
    __syncthreads();
    for (int s = 32; s > 0; s /= 2) {
        if (t < s) cache[t] += cache[t + s];
        __syncthreads();
    }
    if (t == 0) out[0] = cache[0];
}

// Reads an output buffer the host never filled.
extern "C" __global__ void accumulate(const float *a, float *sum) {
    sum[threadIdx.x] += a[threadIdx.x];
}

extern "C" __global__ void texture_fetch(cudaTextureObject_t t, float *out) {
    out[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x);
}

__device__ __noinline__ int fibonacci(int n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

extern "C" __global__ void recursion(int *out) { out[threadIdx.x] = fibonacci(threadIdx.x); }

extern "C" __global__ void asserts(const int *a, int n) {
    assert(a[threadIdx.x] < n);
}

extern "C" __global__ void __launch_bounds__(32) bounded(int *out) { out[threadIdx.x] = 1; }

// Every thread stores to one word: one value (redundant work, whatever
// the order), or each its own (which stays depends on the order).
extern "C" __global__ void one_word(float *c, int own) {
    c[0] = own ? (float)threadIdx.x : 1.0f;
}

// The tree with a second __syncthreads() inside its if (undefined
// behaviour, which an H200 runs to the right sum): the lanes past the if
// wait where their warp reconverges.
extern "C" __global__ void barrier_in_if(const float *a, float *out) {
    __shared__ float cache[64];
    int t = threadIdx.x;
    cache[t] = a[t];
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) {
            cache[t] += cache[t + half];
            __syncthreads();
        }
        __syncthreads();
    }
    if (t == 0) out[0] = cache[0];
}

// The warp tail through a pointer that may be shared or global memory
// (`shared` is 1): generic loads and stores, which reach shared memory.
extern "C" __global__ void generic_warp_tail(const float *a, float *out, float *elsewhere,
                                             int shared) {
    __shared__ float cache[64];
    int t = threadIdx.x;
    cache[t] = a[t];
    __syncthreads();
    volatile float *v = shared ? cache : elsewhere;
    if (t < 32) {
        for (int s = 32; s > 0; s /= 2) {
            if (t < s) v[t] += v[t + s];
        }
    }
    if (t == 0) out[0] = v[0];
}
