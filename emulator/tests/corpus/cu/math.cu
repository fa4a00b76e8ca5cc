// Math functions and rounding modes. IEEE operations (add, mul, fma, div,
// sqrt, rcp in a named rounding) and the library functions built from them
// must give the GPU's bits exactly. The GPU's approximate instructions
// (ex2.approx, lg2.approx, sin.approx, cos.approx, rsqrt.approx, rcp.approx,
// div.approx) are implementation-defined: outputs that pass through them are
// compared within a stated tolerance (the PTX ISA's error bound for the
// instruction, in ulps of the result, or absolute for sin and cos).

// Square roots: sqrtf and __fsqrt_* are IEEE (exact); rsqrtf is
// rsqrt.approx (PTX ISA: relative error 2^-22.9, so within 2 ulps).
//@ case sqrt_family
//@ launch 1 64
//@ in f32 64 specials
//@ out f32 64
//@ out f32 64
//@ out f32 64 tol ulp 2
//@ out f64 64
extern "C" __global__ void sqrt_family(const float *x, float *rn, float *directed, float *rsq,
                                       double *d) {
    int t = threadIdx.x;
    float v = fabsf(x[t]);
    rn[t] = sqrtf(v) + __fsqrt_rn(v * 3.0f);
    directed[t] = __fsqrt_rz(v) - __fsqrt_ru(v * 0.1f) + __fsqrt_rd(v + 1.0f);
    rsq[t] = rsqrtf(v + 0.5f);
    d[t] = sqrt((double)v * 3.0) + __dsqrt_rd((double)v) - __dsqrt_ru((double)v + 2.0);
}

// The four basic operations in every rounding mode, and fused multiply-add.
//@ case rounding_modes
//@ launch 1 64
//@ in f32 64 specials
//@ in f32 64 rand -3 3
//@ out f32 64
//@ out f32 64
//@ out f32 64
//@ out f32 64
extern "C" __global__ void rounding_modes(const float *a, const float *b, float *add, float *mul,
                                          float *div, float *fma) {
    int t = threadIdx.x;
    float x = a[t], y = b[t];
    add[t] = __fadd_rn(x, y) - __fadd_rz(x, y) + __fadd_ru(x, y) * 2.0f - __fadd_rd(x, y) +
             __fsub_ru(x, y);
    mul[t] = __fmul_rn(x, y) + __fmul_rz(x, y) - __fmul_ru(x, y) * 0.5f + __fmul_rd(x, y);
    div[t] = __fdiv_rn(x, y) - __fdiv_rz(x, y) + __fdiv_ru(y, x) + __fdiv_rd(1.0f, y) +
             __frcp_rn(y) - __frcp_rz(x) + __frcp_ru(y) + __frcp_rd(y);
    fma[t] = fmaf(x, y, 1.0f) + __fmaf_rz(x, y, -x) + __fmaf_ru(y, y, x) - __fmaf_rd(x, x, y) +
             __fmaf_rn(x, 3.0f, y);
}

// Division: x / y is IEEE; __fdividef is div.approx (PTX ISA: 2 ulps).
//@ case divisions
//@ launch 1 64
//@ in f32 64 specials
//@ in f32 64 rand -100 100
//@ out f32 64
//@ out f32 64 tol ulp 2
//@ out f64 64
extern "C" __global__ void divisions(const float *a, const float *b, float *ieee, float *fast,
                                     double *d) {
    int t = threadIdx.x;
    float x = a[t], y = b[t];
    ieee[t] = x / y + 1.0f / y;
    fast[t] = __fdividef(y, x + 7.0f);
    d[t] = (double)x / (double)y + 1.0 / (double)x + __drcp_rn((double)y) + __ddiv_rz(y, 3.0);
}

// Exponentials: expf and exp2f use ex2.approx (PTX ISA: 2 ulps over the
// full range); __expf adds the rounding of its scaling (4 ulps).
//@ case exponentials
//@ launch 1 64
//@ in f32 64 rand -20 20
//@ out f32 64 tol ulp 2
//@ out f32 64 tol ulp 2
//@ out f32 64 tol ulp 4
//@ out f32 64 tol ulp 2
extern "C" __global__ void exponentials(const float *x, float *e, float *e2, float *fast,
                                        float *e10) {
    int t = threadIdx.x;
    float v = x[t];
    e[t] = expf(v);
    e2[t] = exp2f(v * 0.5f);
    fast[t] = __expf(v);
    e10[t] = exp10f(v * 0.25f) + expm1f(v * 0.01f);
}

// Logarithms: logf, log2f, log10f and log1pf are built from IEEE
// operations (exact); __logf is lg2.approx scaled (PTX ISA: absolute error
// 2^-22 for lg2, so within 2e-6).
//@ case logarithms
//@ launch 1 64
//@ in f32 64 rand 0.001 1000
//@ out f32 64
//@ out f32 64
//@ out f32 64
//@ out f32 64 tol abs 0.000002
extern "C" __global__ void logarithms(const float *x, float *ln, float *l2, float *l10,
                                      float *fast) {
    int t = threadIdx.x;
    float v = x[t];
    ln[t] = logf(v) + log1pf(v * 0.01f);
    l2[t] = log2f(v);
    l10[t] = log10f(v);
    fast[t] = __logf(v);
}

// Trigonometry: sinf, cosf and sincosf (with their range reduction) are
// built from IEEE operations; tanf takes a reciprocal with rcp.approx (2
// ulps); __sinf and __cosf are sin.approx and cos.approx (PTX ISA:
// absolute error 2^-20.9 on -pi..pi).
//@ case trigonometry
//@ launch 1 64
//@ in f32 64 rand -3.14159 3.14159
//@ in f32 64 specials
//@ out f32 64
//@ out f32 64 tol ulp 2
//@ out f32 64 tol abs 0.000002
//@ out f32 64
extern "C" __global__ void trigonometry(const float *x, const float *big, float *sc, float *tn,
                                        float *fast, float *reduced) {
    int t = threadIdx.x;
    float v = x[t], s, c;
    sincosf(v, &s, &c);
    sc[t] = sinf(v) * 3.0f + cosf(v) + s - c * 0.5f;
    tn[t] = tanf(v * 0.4f) + sinpif(v) + cospif(v * 0.5f);
    fast[t] = __sinf(v) + __cosf(v);
    reduced[t] = sinf(big[t]) + cosf(big[t] * 0.5f);
}

// Powers, roots and hyperbolics.
//@ case powers
//@ launch 1 64
//@ in f32 64 rand 0.01 20
//@ in f32 64 rand -4 4
//@ out f32 64 tol ulp 2
//@ out f32 64 tol ulp 2
//@ out f32 64 tol ulp 2
extern "C" __global__ void powers(const float *x, const float *y, float *pw, float *roots,
                                  float *hyper) {
    int t = threadIdx.x;
    pw[t] = powf(x[t], y[t]);
    roots[t] = cbrtf(x[t] * y[t]) + hypotf(x[t], y[t]);
    hyper[t] = tanhf(y[t]) + sinhf(y[t] * 0.5f) - coshf(y[t] * 0.25f);
}

// More of the library: inverse trigonometry and the error function reach
// rcp.approx, rsqrt.approx and ex2.approx (2 ulps of terms up to about 2,
// which cancel: 1e-6 absolute); rounding and classification are exact.
//@ case library_functions
//@ launch 1 64
//@ in f32 64 rand -0.99 0.99
//@ in f32 64 specials
//@ out f32 64 tol abs 0.000001
//@ out f32 64 tol abs 0.000001
//@ out f32 64
//@ out u32 64
extern "C" __global__ void library_functions(const float *x, const float *s, float *inverse,
                                             float *err, float *rounding, unsigned *classes) {
    int t = threadIdx.x;
    float v = x[t], w = s[t];
    inverse[t] = asinf(v) + acosf(v) * 0.5f + atanf(v * 10.0f) - atan2f(v, w + 0.5f);
    err[t] = erff(v * 2.0f) + erfcf(v);
    rounding[t] = truncf(w) + roundf(w * 0.5f) - rintf(w * 1.5f) + floorf(w) * 2.0f + ceilf(-w) +
                  fmodf(w, 2.5f) + copysignf(1.0f, -w) + fminf(w, 0.5f) - fmaxf(w, -0.5f) +
                  fdimf(w, 1.0f) + __saturatef(w);
    int e;
    float m = frexpf(w, &e);
    classes[t] = isnan(w) | isinf(w) << 1 | isfinite(w) << 2 | signbit(w) << 3 |
                 (unsigned)(e & 0xff) << 8 | __float_as_uint(ldexpf(m, 3)) >> 16 << 16;
}

// Double precision: IEEE operations in each rounding mode, fma, and the
// library functions, which take first guesses from ex2.approx, lg2.approx
// and rcp.approx and correct them in IEEE double: their bits are exact.
//@ case doubles
//@ launch 1 64
//@ in f64 64 specials
//@ in f64 64 rand -10 10
//@ out f64 64
//@ out f64 64
//@ out f64 64
extern "C" __global__ void doubles(const double *a, const double *b, double *ops, double *fn,
                                   double *more) {
    int t = threadIdx.x;
    double x = a[t], y = b[t];
    ops[t] = __dadd_rz(x, y) + __dadd_ru(x, y) - __dmul_rd(x, y) + __dmul_ru(y, y) +
             __fma_rz(x, y, 1.0) + fma(x, y, -x) - __dsub_rn(y, x) + __ddiv_ru(x, y);
    fn[t] = exp(y) + log(fabs(y) + 1.0) * 2.0 + sin(y) - cos(y * 3.0) + tan(y * 0.1);
    more[t] = pow(fabs(y), 0.75) + cbrt(y) + atan2(y, x) + erf(y * 0.3) + tanh(y) + log2(fabs(x) + 1.5);
}
