// Loads and stores of every shape: vector types, __ldg, __constant__ and
// __device__ variables, local arrays, structs passed by value, narrow
// integers with sign extension, and 2D and 3D launches.

// float2 and float4 loads and stores.
//@ case vector_float
//@ launch 1 64
//@ in f32 256 rand -4 4
//@ out f32 128
//@ out f32 256
extern "C" __global__ void vector_float(const float *a, float *pairs, float *quads) {
    int t = threadIdx.x;
    float2 p = reinterpret_cast<const float2 *>(a)[t];
    reinterpret_cast<float2 *>(pairs)[t] = make_float2(p.y * 2.0f, p.x - p.y);
    float4 q = reinterpret_cast<const float4 *>(a)[t];
    reinterpret_cast<float4 *>(quads)[t] = make_float4(q.w, q.z + 1.0f, q.y * q.x, -q.x);
}

// int4, uchar4, short2 and double2.
//@ case vector_other
//@ launch 1 32
//@ in i32 128 rand -100000 100000
//@ in u8 128 rand 0 256
//@ in f64 64 rand -1 1
//@ out i32 128
//@ out u8 128
//@ out i16 64
//@ out f64 64
extern "C" __global__ void vector_other(const int4 *a, const uchar4 *b, const double2 *d,
                                        int4 *ai, uchar4 *bo, short2 *s, double2 *dd) {
    int t = threadIdx.x;
    int4 v = a[t];
    ai[t] = make_int4(v.w, v.x + v.y, v.z ^ v.x, v.y >> 3);
    uchar4 c = b[t];
    bo[t] = make_uchar4(c.x + c.y, c.w, c.z, (unsigned char)(c.y * 3));
    s[t] = make_short2((short)(v.x / 7), (short)(c.x - 200));
    double2 e = d[t];
    dd[t] = make_double2(e.y, e.x * e.y);
}

#include <cassert>

// __ldg of scalars and vectors (the read-only path).
//@ case ldg_read_only
//@ launch 2 64
//@ in f32 512 rand 0 1
//@ in i32 128 iota
//@ out f32 128
extern "C" __global__ void ldg_read_only(const float *__restrict__ a, const int *__restrict__ k,
                                         float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 q = __ldg(reinterpret_cast<const float4 *>(a) + i);
    int j = __ldg(k + (127 - i));
    out[i] = q.x + q.y + q.z + q.w + __ldg(a + j);
}

__constant__ float coefficients[8];
__constant__ int offsets[4] = {3, -1, 4, -1};

// __constant__ memory set by the host and initialised in the source.
//@ case constant_memory
//@ launch 1 64
//@ global coefficients f32 8 iota 0.5 1
//@ in f32 64 rand -1 1
//@ out f32 64
extern "C" __global__ void constant_memory(const float *x, float *out) {
    int t = threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < 8; k++) {
        s += coefficients[k] * x[(t + k) % 64];
    }
    out[t] = s + offsets[t % 4];
}

__device__ int counter = 5;
__device__ unsigned long long stamp[2];

// __device__ variables: one initialised, one zero; read back by the host.
//@ case device_variables
//@ launch 2 32
//@ readglobal counter i32 1
//@ readglobal stamp u64 2
extern "C" __global__ void device_variables() {
    atomicAdd(&counter, 2);
    if (threadIdx.x == 0 && blockIdx.x == 1) {
        stamp[1] = 0xabcdef0123ull;
    }
}

// A local array indexed by data (so it lives in local memory).
//@ case local_array
//@ launch 1 64
//@ in i32 64 rand 0 1000
//@ out i32 64
extern "C" __global__ void local_array(const int *a, int *out) {
    int window[12];
    int t = threadIdx.x;
    for (int k = 0; k < 12; k++) {
        window[k] = a[(t + k) % 64];
    }
    int pick = a[t] % 12;
    window[pick] *= -1;
    int s = 0;
    for (int k = 0; k < 12; k++) {
        s += window[(k + pick) % 12] * (k + 1);
    }
    out[t] = s;
}

struct Params {
    float scale;
    int shift;
    double bias;
    unsigned char flags[4];
};

// A struct passed by value as a kernel parameter.
//@ case struct_parameter
//@ launch 1 32
//@ in f32 32 iota 1.5 -10
//@ raw 0000c03f07000000000000000000f03f0102030400000000
//@ out f64 32
extern "C" __global__ void struct_parameter(const float *x, Params p, double *out) {
    int t = threadIdx.x;
    out[t] = x[t] * p.scale + (t >> 1 << p.shift) + p.bias + p.flags[t % 4];
}

// Narrow integers: loads that sign- or zero-extend, stores that truncate.
//@ case narrow_integers
//@ launch 1 64
//@ in i8 64 rand -128 127
//@ in i16 64 rand -32768 32767
//@ in u16 64 rand 0 65535
//@ out i64 64
//@ out i8 64
//@ out u16 64
extern "C" __global__ void narrow_integers(const signed char *b, const short *s,
                                           const unsigned short *u, long long *wide,
                                           signed char *nb, unsigned short *nu) {
    int t = threadIdx.x;
    wide[t] = (long long)b[t] * s[t] + u[t];
    nb[t] = (signed char)(s[t] + b[t]);
    nu[t] = (unsigned short)(u[t] * 3 + s[t]);
}

// A 3D grid of 3D blocks: every index and dimension register.
//@ case three_dimensions
//@ launch 2,3,2 4,2,3
//@ out u32 288
extern "C" __global__ void three_dimensions(unsigned *out) {
    unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned i = block * blockDim.x * blockDim.y * blockDim.z + thread;
    out[i] = threadIdx.x | threadIdx.y << 4 | threadIdx.z << 8 | blockIdx.x << 12 |
             blockIdx.y << 16 | blockIdx.z << 20 | (blockDim.x * blockDim.y * blockDim.z) << 24;
}

// A grid-stride loop over more elements than threads, on a grid smaller
// than the array (the course's vecadd-anyN).
//@ case grid_stride
//@ launch 3 64
//@ in f32 1000 rand -1 1
//@ in f32 1000 rand -1 1
//@ val u64 1000
//@ out f32 1000
extern "C" __global__ void grid_stride(const float *a, const float *b, size_t n, float *c) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x) {
        c[i] = a[i] + b[i];
    }
}

// Loads and stores with cache hints: __ldcg, __ldcs, __ldca, __stcg,
// __stcs, __stwt.
//@ case cache_hints
//@ launch 1 64
//@ in f32 64 rand -1 1
//@ in f32 256 rand -1 1
//@ out f32 64
//@ out f32 256
extern "C" __global__ void cache_hints(const float *a, const float *b, float *c, float *d) {
    int t = threadIdx.x;
    float x = __ldcg(a + t) + __ldcs(a + (t + 1) % 64) + __ldca(a + (t + 2) % 64) + __ldlu(a + t);
    __stcg(c + t, x);
    float4 q = __ldcs(reinterpret_cast<const float4 *>(b) + t);
    __stcs(reinterpret_cast<float4 *>(d) + t, make_float4(q.w, q.z, q.y, x));
    __stwt(c + t, x * 2.0f);
}

// assert() that holds: the call to __assertfail is never made.
//@ case assert_holds
//@ launch 2 64
//@ in i32 128 iota
//@ val i32 128
//@ out i32 128
extern "C" __global__ void assert_holds(const int *a, int n, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    assert(a[i] == i);
    out[i] = a[i] * 2;
}
