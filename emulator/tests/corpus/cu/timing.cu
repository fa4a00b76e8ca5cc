// Clocks: clock(), clock64() and %globaltimer. Their values differ on every
// run and device; what a kernel may rely on (they count up) is compared.

// A busy loop between two readings of each clock.
//@ case clocks_count_up
//@ launch 2 64
//@ in f32 128 rand 0 1
//@ out u32 128
//@ out f32 128
extern "C" __global__ void clocks_count_up(const float *x, unsigned *ok, float *sink) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long start64 = clock64();
    clock_t start = clock();
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    float v = x[i];
    for (int k = 0; k < 200; k++) {
        v = v * 0.999f + 0.001f;
    }
    sink[i] = v;
    long long end64 = clock64();
    clock_t end = clock();
    unsigned long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    ok[i] = (end64 > start64) | (unsigned)(end - start > 0) << 1 | (unsigned)(t1 >= t0) << 2 |
            (unsigned)(t0 > 0) << 3;
}

// __nanosleep (compute 7.0 and newer) in a loop: a pause, nothing else.
//@ case nanosleep_pause
//@ launch 1 32
//@ out u32 32
extern "C" __global__ void nanosleep_pause(unsigned *out) {
    unsigned done = 0;
    for (int k = 0; k < 3; k++) {
        __nanosleep(100 * k);
        done += k;
    }
    out[threadIdx.x] = done + threadIdx.x;
}
