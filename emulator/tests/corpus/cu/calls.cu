// Device functions, inlined and not (PTX `call` with `.param` arguments and
// results), and printf from a kernel (a call to vprintf).
#include <cstdio>

__device__ __forceinline__ float axpy(float a, float x, float y) { return a * x + y; }

__device__ __noinline__ float add(float a, float b) { return a + b; }

// vecadd with the addition in a __noinline__ function, and an inlined one.
//@ case noinline_vecadd
//@ launch 3 100
//@ in f32 300 rand -10 10
//@ in f32 300 rand -10 10
//@ val i32 300
//@ out f32 300
//@ out f32 300
extern "C" __global__ void noinline_vecadd(const float *a, const float *b, int n, float *c,
                                           float *d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = add(a[i], b[i]);
        d[i] = axpy(2.0f, a[i], b[i]);
    }
}

struct Pair {
    int lo;
    int hi;
};

__device__ __noinline__ Pair min_max(const int *p, int n) {
    Pair r = {p[0], p[0]};
    for (int k = 1; k < n; k++) {
        r.lo = min(r.lo, p[k]);
        r.hi = max(r.hi, p[k]);
    }
    return r;
}

__device__ __noinline__ long long weigh(Pair pair, long long scale, unsigned char tag) {
    return (pair.hi - pair.lo) * scale + tag;
}

__device__ __noinline__ double mean(const double *p, int n) {
    double s = 0.0;
    for (int k = 0; k < n; k++) {
        s += p[k];
    }
    return s / n;
}

// Functions that return a struct, take one by value, take 8-, 1- and 4-byte
// arguments, and call one another.
//@ case noinline_mixed
//@ launch 1 32
//@ in i32 64 rand -500 500
//@ in f64 64 rand 0 100
//@ out i64 32
//@ out f64 32
extern "C" __global__ void noinline_mixed(const int *a, const double *x, long long *w,
                                          double *m) {
    int t = threadIdx.x;
    Pair p = min_max(a + t, 8);
    w[t] = weigh(p, 1000003LL, (unsigned char)(t * 9));
    m[t] = mean(x + t, 5 + t % 4);
}

__device__ __noinline__ int depth3(int x) { return x * 3 + 1; }
__device__ __noinline__ int depth2(int x) { return depth3(x) + depth3(x + 1); }
__device__ __noinline__ int depth1(int x) { return depth2(x) * depth2(x - 1); }

// Calls three deep, and a function called from two places in a loop.
//@ case noinline_nested
//@ launch 1 64
//@ in i32 64 iota 1 -30
//@ out i32 64
extern "C" __global__ void noinline_nested(const int *a, int *out) {
    int v = a[threadIdx.x];
    int acc = 0;
    for (int k = 0; k < 3; k++) {
        acc += depth1(v + k);
        acc ^= depth3(acc);
    }
    out[threadIdx.x] = acc;
}

// A function with a local array (its own stack frame) and a pointer
// argument it writes through.
__device__ __noinline__ void histogram4(const int *p, int n, int *bins) {
    int local[4] = {0, 0, 0, 0};
    for (int k = 0; k < n; k++) {
        local[p[k] & 3]++;
    }
    for (int k = 0; k < 4; k++) {
        bins[k] = local[k];
    }
}

//@ case noinline_local_array
//@ launch 1 32
//@ in i32 64 rand 0 1000
//@ out i32 128
extern "C" __global__ void noinline_local_array(const int *a, int *bins) {
    histogram4(a + threadIdx.x, 16 + threadIdx.x % 16, bins + 4 * threadIdx.x);
}

// printf from a kernel: integers, characters, strings and floats.
//@ case printf_basic
//@ launch 2 4
//@ in f32 8 iota 1.25 -3
extern "C" __global__ void printf_basic(const float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    printf("block %d thread %d: x = %f, x^2 = %.3e, %s\n", blockIdx.x, threadIdx.x, x[i],
           x[i] * x[i], x[i] < 0.0f ? "negative" : "not negative");
}

// printf's conversions: widths, precisions, flags, lengths, and %%.
//@ case printf_formats
//@ launch 1 3
//@ in i64 3 bits 0 ffffffffffffffff 123456789abcdef
//@ in f64 3 bits 0 7ff0000000000000 3fb999999999999a
extern "C" __global__ void printf_formats(const long long *k, const double *d) {
    int t = threadIdx.x;
    printf("[%5d|%-5d|%05d|%+d|%x|%X|%#o|%c]\n", t * 7 - 3, t, t * 11, t, 255 * t + 10,
           48879 * t, 8 * t + 1, 'A' + t);
    printf("[%lld|%llu|%llx|%u]\n", k[t], (unsigned long long)k[t], k[t], (unsigned)-t);
    printf("[%g|%e|%.2f|%10.4f|%-9.1e|%G]\n", d[t], d[t], d[t], d[t] + t, d[t] - t, d[t] * 1e6);
    printf("[%s|%.3s|%8s] 100%% done\n", "text", "truncated", t == 1 ? "one" : "other");
}

__device__ __noinline__ void say(int x, float y) { printf("say %d %.2f\n", x, y); }

// printf inside a __noinline__ function, and only from some threads.
//@ case printf_in_function
//@ launch 1 40
extern "C" __global__ void printf_in_function() {
    if (threadIdx.x % 7 == 3) {
        say(threadIdx.x, threadIdx.x / 4.0f);
    }
}
