// Which vector-add kernel reaches the device-to-device copy bandwidth on this
// GPU? Times each variant with CUDA events (1 warm-up, median of 20) at
// n = 2^28 floats and prints GB/s (12 bytes per element) and the ratio to a
// cudaMemcpy D2D of the same 1 GiB (2 x bytes / time), measured in this run.
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o vv bench/probes/vecadd-variants.cu && ./vv
#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void scalar_stride(const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = a[i] + b[i];
}

__global__ void scalar_unroll4(const float* __restrict__ a, const float* __restrict__ b,
                               float* __restrict__ c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        float x0 = a[i], x1 = a[i + stride], x2 = a[i + 2 * stride], x3 = a[i + 3 * stride];
        float y0 = b[i], y1 = b[i + stride], y2 = b[i + 2 * stride], y3 = b[i + 3 * stride];
        c[i] = x0 + y0; c[i + stride] = x1 + y1; c[i + 2 * stride] = x2 + y2; c[i + 3 * stride] = x3 + y3;
    }
    for (; i < n; i += stride) c[i] = a[i] + b[i];
}

__global__ void float2_stride(const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const float2* a2 = reinterpret_cast<const float2*>(a);
    const float2* b2 = reinterpret_cast<const float2*>(b);
    float2* c2 = reinterpret_cast<float2*>(c);
    for (size_t i = t; i < n / 2; i += stride) {
        float2 x = a2[i], y = b2[i];
        c2[i] = make_float2(x.x + y.x, x.y + y.y);
    }
    for (size_t i = n / 2 * 2 + t; i < n; i += stride) c[i] = a[i] + b[i];
}

__global__ void float4_stride(const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (size_t i = t; i < n / 4; i += stride) {
        float4 x = a4[i], y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (size_t i = n / 4 * 4 + t; i < n; i += stride) c[i] = a[i] + b[i];
}

__global__ void double_one_each(const double* __restrict__ a, const double* __restrict__ b,
                                double* __restrict__ c, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

template <typename F>
float median_ms(F launch) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start); cudaEventCreate(&stop);
    launch();
    cudaDeviceSynchronize();
    std::vector<float> t;
    for (int r = 0; r < 20; r++) {
        cudaEventRecord(start); launch(); cudaEventRecord(stop); cudaEventSynchronize(stop);
        float ms; cudaEventElapsedTime(&ms, start, stop); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return (t[9] + t[10]) / 2;
}

int main() {
    const size_t n = 1ull << 28, bytes = n * sizeof(float);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, bytes)); CHECK(cudaMalloc(&b, bytes)); CHECK(cudaMalloc(&c, bytes));
    CHECK(cudaMemset(a, 0x3f, bytes)); CHECK(cudaMemset(b, 0x40, bytes));
    float copy1g = median_ms([&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice); });
    float copy512 = median_ms([&] { cudaMemcpyAsync(c, a, bytes / 2, cudaMemcpyDeviceToDevice); });
    double copy_gbs = 2.0 * bytes / (copy1g * 1e6);
    printf("copy 1 GiB  %.3f ms %.0f GB/s\ncopy 512 MiB %.3f ms %.0f GB/s\n", copy1g, copy_gbs,
           copy512, 2.0 * bytes / 2 / (copy512 * 1e6));
    auto row = [&](const char* name, int blocks, int threads, float ms) {
        double gbs = 12.0 * n / (ms * 1e6);
        printf("%-16s %8d x %4d  %.3f ms  %6.0f GB/s  %.3f x copy\n", name, blocks, threads, ms, gbs, gbs / copy_gbs);
    };
    int wave = sms * 2048 / 256;
    for (int waves : {1, 2, 4, 8, 16}) {
        int blocks = wave * waves;
        row("scalar", blocks, 256, median_ms([&] { scalar_stride<<<blocks, 256>>>(a, b, c, n); }));
        row("scalar-unroll4", blocks, 256, median_ms([&] { scalar_unroll4<<<blocks, 256>>>(a, b, c, n); }));
        row("float2", blocks, 256, median_ms([&] { float2_stride<<<blocks, 256>>>(a, b, c, n); }));
        row("float4", blocks, 256, median_ms([&] { float4_stride<<<blocks, 256>>>(a, b, c, n); }));
    }
    int all = (int)(n / 256);
    row("scalar-1-each", all, 256, median_ms([&] { scalar_stride<<<all, 256>>>(a, b, c, n); }));
    row("float4-1-each", all / 4, 256, median_ms([&] { float4_stride<<<all / 4, 256>>>(a, b, c, n); }));
    double *da = (double*)a, *db = (double*)b, *dc = (double*)c;  // n/2 doubles: same bytes
    float dms = median_ms([&] { double_one_each<<<(int)(n / 2 / 1024), 1024>>>(da, db, dc, n / 2); });
    row("double-1-each", (int)(n / 2 / 1024), 1024, dms);
    CHECK(cudaGetLastError());
    return 0;
}
