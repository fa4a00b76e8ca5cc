// Conversions: half and bfloat16 to and from float, half arithmetic, and
// the rounding modes of integer and floating-point conversions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// float to half in each rounding mode and back, over edge values.
//@ case half_from_float
//@ launch 1 64
//@ in f32 64 specials
//@ out u16 64
//@ out u16 64
//@ out u16 64
//@ out f32 64
extern "C" __global__ void half_from_float(const float *x, unsigned short *rn, unsigned short *rz,
                                           unsigned short *rd, float *back) {
    int t = threadIdx.x;
    __half h = __float2half_rn(x[t]);
    rn[t] = __half_as_ushort(h);
    rz[t] = __half_as_ushort(__float2half_rz(x[t] * 1.0001f));
    rd[t] = __half_as_ushort(__float2half_rd(-x[t] / 3.0f));
    back[t] = __half2float(h) + __half2float(__float2half_ru(x[t] * 0.001f));
}

// Half to and from integers and double.
//@ case half_integers
//@ launch 1 64
//@ in i32 64 rand -70000 70000
//@ in u16 64 bits 0 8000 3c00 bc00 7bff fbff 0001 8001 7c00 fc00 7e00 3555 4248 c0f0 0400 5a5a
//@ out u16 64
//@ out i32 64
//@ out u32 64
//@ out f64 64
extern "C" __global__ void half_integers(const int *k, const unsigned short *h, unsigned short *fromi,
                                         int *toi, unsigned *tou, double *tod) {
    int t = threadIdx.x;
    __half v = __ushort_as_half(h[t]);
    fromi[t] = __half_as_ushort(__int2half_rn(k[t] / 16));
    toi[t] = __half2int_rz(v) ^ __half2int_rn(v) << 16;
    tou[t] = __half2uint_rd(v) + __half2ushort_ru(v);
    tod[t] = (double)__half2float(v) + __half2float(__short2half_rn((short)k[t]));
}

// Half arithmetic: add, sub, mul, fma and division, scalar and half2.
//@ case half_arithmetic
//@ launch 1 64
//@ in u16 64 bits 3c00 4000 4248 3555 c500 0001 7bff 2e66 b800 4d00 6400 1400 0000 8000 4900 3e00
//@ in u16 64 bits 3800 3c00 c000 3400 4500 0400 3c00 ac00 3a00 c100 2000 8400 3c00 4000 b555 57ff
//@ out u16 64
//@ out u16 64
//@ out u16 64
//@ out u16 64
//@ out u32 32
extern "C" __global__ void half_arithmetic(const unsigned short *a, const unsigned short *b,
                                           unsigned short *sum, unsigned short *prod,
                                           unsigned short *fma, unsigned short *quot,
                                           unsigned *pairs) {
    int t = threadIdx.x;
    __half x = __ushort_as_half(a[t]), y = __ushort_as_half(b[t]);
    sum[t] = __half_as_ushort(__hadd(x, y)) ^ __half_as_ushort(__hsub(x, y)) << 1;
    prod[t] = __half_as_ushort(__hmul(x, y));
    fma[t] = __half_as_ushort(__hfma(x, y, __float2half(0.375f)));
    quot[t] = __half_as_ushort(__hdiv(x, y));
    if (t < 32) {
        __half2 p = __halves2half2(x, y);
        __half2 q = __halves2half2(__ushort_as_half(a[t + 32]), __ushort_as_half(b[t + 32]));
        __half2 r = __hfma2(p, q, __hmul2(p, p));
        pairs[t] = (unsigned)__half_as_ushort(__low2half(r)) |
                   (unsigned)__half_as_ushort(__high2half(r)) << 16;
    }
}

// Half comparisons and classification.
//@ case half_compare
//@ launch 1 64
//@ in u16 64 bits 3c00 4000 7e00 8000 0000 fc00 7c00 3c01 c000 0001 3bff 4000
//@ in u16 64 bits 4000 3c00 3c00 0000 8000 fc00 7e00 3c00 c000 8001 3c00 4000 7e00
//@ out u32 64
extern "C" __global__ void half_compare(const unsigned short *a, const unsigned short *b,
                                        unsigned *out) {
    int t = threadIdx.x;
    __half x = __ushort_as_half(a[t]), y = __ushort_as_half(b[t]);
    out[t] = __hlt(x, y) | __hle(x, y) << 1 | __heq(x, y) << 2 | __hne(x, y) << 3 |
             __hgt(x, y) << 4 | __hisnan(x) << 5 | __hisinf(x) << 6 | __hltu(x, y) << 7 |
             __hequ(x, y) << 8 | __half_as_ushort(__hmax(x, y)) << 16;
}

// bfloat16 to and from float, and arithmetic through float (nvcc 11.8 has
// bfloat16 arithmetic only for compute 8.0 and newer).
__device__ unsigned short bf16_bits(__nv_bfloat16 b) {
    unsigned short bits;
    memcpy(&bits, &b, sizeof bits);
    return bits;
}

//@ case bfloat16
//@ launch 1 64
//@ in f32 64 specials
//@ out u16 64
//@ out u16 64
//@ out f32 64
//@ out u16 64
extern "C" __global__ void bfloat16(const float *x, unsigned short *rn, unsigned short *rz,
                                    float *back, unsigned short *sum) {
    int t = threadIdx.x;
    __nv_bfloat16 b = __float2bfloat16_rn(x[t]);
    rn[t] = bf16_bits(b);
    rz[t] = bf16_bits(__float2bfloat16_rz(x[t] * 3.0f));
    back[t] = __bfloat162float(b) * 2.0f;
    __nv_bfloat16 c = __float2bfloat16(x[(t + 1) % 64]);
    float sum_f = __bfloat162float(b) + __bfloat162float(c);
    sum[t] = bf16_bits(__float2bfloat16(sum_f)) ^ bf16_bits(__float2bfloat16(sum_f * 0.1f));
}

// float to integers in each rounding mode, with saturation at the ends and
// NaN to zero.
//@ case float_to_int
//@ launch 1 64
//@ in f32 64 specials
//@ out i32 64
//@ out i32 64
//@ out u32 64
//@ out i64 64
//@ out u64 64
extern "C" __global__ void float_to_int(const float *x, int *rn, int *rdru, unsigned *ru,
                                        long long *ll, unsigned long long *ull) {
    int t = threadIdx.x;
    float v = x[t] * 0.75f;
    rn[t] = __float2int_rn(v) ^ __float2int_rz(v);
    rdru[t] = __float2int_rd(v) - __float2int_ru(v) * 3;
    ru[t] = __float2uint_rn(v) + __float2uint_rz(v);
    ll[t] = __float2ll_rd(v * 1e9f) + __float2ll_rn(v);
    ull[t] = __float2ull_ru(v * 1e12f);
}

// Integers to float and double in each rounding mode, and double to float.
//@ case int_to_float
//@ launch 1 64
//@ in i64 64 rand -9000000000000000000 9000000000000000000
//@ in f64 64 specials
//@ out f32 64
//@ out f32 64
//@ out f64 64
//@ out f32 64
extern "C" __global__ void int_to_float(const long long *k, const double *d, float *a, float *b,
                                        double *c, float *e) {
    int t = threadIdx.x;
    int k32 = (int)(k[t] >> 32);
    a[t] = __int2float_rn(k32) + __int2float_rz(k32 ^ 0x55) * 0.5f;
    b[t] = __uint2float_ru((unsigned)k32) - __int2float_rd(k32);
    c[t] = __ll2double_rn(k[t]) + __ull2double_rz((unsigned long long)k[t]) +
           __ll2double_ru(k[t] / 3) * __ll2double_rd(t);
    e[t] = __double2float_rn(d[t]) + __double2float_rz(d[t] / 3.0) + __double2float_rd(d[t] * 7.0) +
           __double2float_ru(-d[t]);
}

// Double to integers, and the bits of doubles and floats.
//@ case double_to_int
//@ launch 1 64
//@ in f64 64 specials
//@ out i32 64
//@ out i64 64
//@ out u32 64
extern "C" __global__ void double_to_int(const double *d, int *i, long long *l, unsigned *bits) {
    int t = threadIdx.x;
    double v = d[t] * 0.6;
    i[t] = __double2int_rn(v) + __double2int_rz(v) * 2 + __double2uint_ru(v) * 3;
    l[t] = __double2ll_rd(v) ^ __double2ll_rz(v * 1e10);
    bits[t] = __double2hiint(v) ^ __double2loint(v) ^ __float_as_uint((float)v);
}
