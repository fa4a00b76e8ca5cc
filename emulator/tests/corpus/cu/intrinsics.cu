// Integer intrinsics: bit counts, byte permutes, high halves of products,
// 24-bit multiplies, funnel shifts, averages, dot products and bit fields.

// __popc, __clz, __ffs and __brev, 32 and 64 bits.
//@ case bit_counts
//@ launch 1 64
//@ in u64 64 rand 0 18446744073709551615
//@ out u32 64
//@ out u32 64
//@ out u64 64
extern "C" __global__ void bit_counts(const unsigned long long *a, unsigned *narrow,
                                      unsigned *wide, unsigned long long *reversed) {
    int t = threadIdx.x;
    unsigned long long v = a[t] >> (t % 64);
    unsigned lo = (unsigned)v;
    narrow[t] = __popc(lo) | __clz(lo) << 8 | __ffs(lo) << 16 | __clz(0) << 24;
    wide[t] = __popcll(v) | __clzll(v) << 8 | __ffsll(v) << 16 | __ffs(0) << 24;
    reversed[t] = __brevll(v) ^ __brev(lo);
}

// __byte_perm with selectors of every kind, sign replication included.
//@ case byte_perm
//@ launch 1 64
//@ in u32 64 rand 0 4294967295
//@ in u32 64 rand 0 65536
//@ out u32 64
//@ out u32 64
extern "C" __global__ void byte_perm(const unsigned *a, const unsigned *s, unsigned *fixed,
                                     unsigned *variable) {
    int t = threadIdx.x;
    unsigned x = a[t], y = a[(t + 1) % 64];
    fixed[t] = __byte_perm(x, y, 0x3210) ^ __byte_perm(x, y, 0x0123) ^ __byte_perm(x, y, 0x7654) ^
               __byte_perm(x, y, 0x5140);
    variable[t] = __byte_perm(x, y, s[t]);
}

// The high halves of products, and 24-bit multiplies.
//@ case products
//@ launch 1 64
//@ in u64 64 rand 0 18446744073709551615
//@ out u32 64
//@ out i32 64
//@ out u64 64
//@ out i64 64
//@ out i32 64
extern "C" __global__ void products(const unsigned long long *a, unsigned *uhi, int *hi,
                                    unsigned long long *uhi64, long long *hi64, int *m24) {
    int t = threadIdx.x;
    unsigned long long v = a[t], w = a[(t + 7) % 64];
    uhi[t] = __umulhi((unsigned)v, (unsigned)(w >> 32));
    hi[t] = __mulhi((int)v, (int)w);
    uhi64[t] = __umul64hi(v, w);
    hi64[t] = __mul64hi((long long)v, (long long)w);
    m24[t] = __mul24((int)v, (int)(w >> 40)) + (int)__umul24((unsigned)v >> 3, (unsigned)w);
}

// Funnel shifts, wrapping and clamping.
//@ case funnel_shifts
//@ launch 1 64
//@ in u32 64 rand 0 4294967295
//@ in u32 64 iota 1
//@ out u32 64
//@ out u32 64
extern "C" __global__ void funnel_shifts(const unsigned *a, const unsigned *shift, unsigned *left,
                                         unsigned *right) {
    int t = threadIdx.x;
    unsigned lo = a[t], hi = a[(t + 3) % 64], s = shift[t];
    left[t] = __funnelshift_l(lo, hi, s) ^ __funnelshift_lc(lo, hi, s);
    right[t] = __funnelshift_r(lo, hi, s) + __funnelshift_rc(lo, hi, s);
}

// Averages, sums of absolute differences and min/max/abs.
//@ case averages
//@ launch 1 64
//@ in i32 64 rand -2147483648 2147483647
//@ out i32 64
//@ out u32 64
//@ out i32 64
extern "C" __global__ void averages(const int *a, int *avg, unsigned *sad, int *extremes) {
    int t = threadIdx.x;
    int x = a[t], y = a[(t + 1) % 64];
    avg[t] = __hadd(x, y) ^ __rhadd(x, y);
    sad[t] = __sad(x, y, 7u) + __usad((unsigned)x, (unsigned)y, 1u) + __uhadd((unsigned)x, (unsigned)y) +
             __urhadd((unsigned)x, 3u);
    extremes[t] = max(x, y) - min(x, y) / 2 + abs(x / 2) + (int)umin((unsigned)x, (unsigned)y) % 9;
}

// __dp4a and __dp2a (compute 6.1 and newer).
//@ case dot_products
//@ launch 1 32
//@ in i32 64 rand -2147483648 2147483647
//@ out i32 32
//@ out u32 32
extern "C" __global__ void dot_products(const int *a, int *s, unsigned *u) {
    int t = threadIdx.x;
    s[t] = __dp4a(a[t], a[t + 32], t) + __dp2a_lo(a[t], a[t + 32], 5) + __dp2a_hi(a[t + 32], a[t], -7);
    u[t] = __dp4a((unsigned)a[t], (unsigned)a[t + 32], 11u);
}

// Shifts and masks that nvcc turns into bit-field extracts and inserts.
//@ case bit_fields
//@ launch 1 64
//@ in u32 64 rand 0 4294967295
//@ in i32 64 rand -2147483648 2147483647
//@ out u32 64
//@ out i32 64
extern "C" __global__ void bit_fields(const unsigned *a, const int *b, unsigned *u, int *s) {
    int t = threadIdx.x;
    unsigned x = a[t];
    int y = b[t];
    unsigned field = (x >> 7) & 0x1ff;
    u[t] = (x & ~0xff000u) | (field << 12 & 0xff000u) | ((x >> (t % 20)) & 0x3f);
    s[t] = (y << 5 >> 20) + ((y >> 3) & 7) - (y >> 31);
    unsigned inserted, extracted;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(inserted) : "r"(field), "r"(x), "r"(t % 24), "r"(9));
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(extracted) : "r"(y), "r"(t % 28), "r"(t % 9 + 1));
    u[t] ^= inserted;
    s[t] ^= (int)extracted;
}

// 64-bit integer arithmetic: division, remainder, shifts and conversions.
//@ case integers_64
//@ launch 1 64
//@ in i64 64 rand -9000000000000000000 9000000000000000000
//@ in i64 64 rand -1000000 1000000
//@ out i64 64
//@ out u64 64
extern "C" __global__ void integers_64(const long long *a, const long long *b, long long *s,
                                       unsigned long long *u) {
    int t = threadIdx.x;
    long long x = a[t], y = b[t] == 0 ? 1 : b[t];
    s[t] = x / y + x % y - (x >> (t % 63)) + llabs(y) * llmin(x, y);
    unsigned long long ux = (unsigned long long)x;
    u[t] = ux / (unsigned long long)(t + 3) + (ux << (t % 64)) + (ux % 1000003ull) + ullmax(ux, 5);
}
