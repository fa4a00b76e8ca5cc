// The stride / offset / group experiment of the book's GPU-model chapter, on
// today's GPUs: how the order of a warp's addresses (coalescing) and branches
// that split a warp (divergence) change a memory-bound kernel's time.
//
// Every thread owns a run of the array. Threads are taken in groups of
// `stride` consecutive threads; a group's threads take consecutive addresses
// at each step and then all jump by `stride`, so the group walks its own
// section of the array together. `offset` rotates which thread of a group
// takes which address (same addresses, out of thread order). Threads in
// alternate sets of `group` threads do different arithmetic, so a set smaller
// than a warp makes the warp run both branches.
//
//   nvcc -O3 -arch=sm_90 -o coalescing scripts/book/coalescing.cu
//   ./coalescing > docs/data/coalescing.csv
//
// Prints a CSV with `#` lines naming the device, driver and settings, in the
// form docs/data/ holds (one untimed run, then the median of 20 CUDA-event
// timings per row; GB/s counts 8 bytes per element: a read and a write).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
                         cudaGetErrorString(err_));                              \
            std::exit(3);                                                        \
        }                                                                        \
    } while (0)

__global__ void square_or_double(float* a, size_t n, int stride, int offset, int group)
{
    const size_t threads = (size_t)gridDim.x * blockDim.x;
    const size_t per_thread = n / threads;
    const size_t block_start = per_thread * blockIdx.x * blockDim.x;
    const int t = threadIdx.x;
    // The group of `stride` threads this thread belongs to owns the section
    // starting at block_start + (t / stride) * per_thread * stride.
    const size_t start = block_start + (size_t)(t / stride) * per_thread * stride
                       + (size_t)((t + offset) % stride);
    const size_t end = start + per_thread * stride;
    const bool second = (t / group) & 1;
    for (size_t i = start; i < end && i < n; i += stride) {
        if (!second) {
            a[i] = a[i] * a[i];
        } else {
            a[i] = a[i] + a[i];
        }
    }
}

struct Trial {
    int stride, offset, group;
};

int main()
{
    const size_t n = (size_t)1 << 26;  // 256 MiB of floats
    const int threads = 512, blocks = 1024, runs = 20;
    const Trial trials[] = {
        {32, 0, 512}, {16, 0, 512}, {8, 0, 512}, {4, 0, 512}, {1, 0, 512},
        {32, 1, 512}, {32, 0, 16},  {32, 0, 8},  {32, 0, 1},  {8, 1, 8},
    };

    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int driver = 0;
    CHECK(cudaDriverGetVersion(&driver));
    float* a = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    std::vector<float> ones(n, 1.0f);
    CHECK(cudaMemcpy(a, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));

    std::printf("# scripts/book/coalescing.cu: nvcc -O3 -arch=sm_90 -o coalescing scripts/book/coalescing.cu && ./coalescing\n");
    std::printf("# %s, CUDA driver %d.%d; n = 2^26 floats, %d blocks x %d threads, median of %d\n",
                prop.name, driver / 1000, driver % 1000 / 10, blocks, threads, runs);
    std::printf("stride,offset,group,ms,GB/s\n");
    for (const Trial& trial : trials) {
        std::vector<float> ms(runs);
        square_or_double<<<blocks, threads>>>(a, n, trial.stride, trial.offset, trial.group);
        CHECK(cudaGetLastError());
        for (int r = 0; r < runs; ++r) {
            CHECK(cudaEventRecord(start));
            square_or_double<<<blocks, threads>>>(a, n, trial.stride, trial.offset, trial.group);
            CHECK(cudaEventRecord(stop));
            CHECK(cudaEventSynchronize(stop));
            CHECK(cudaEventElapsedTime(&ms[r], start, stop));
        }
        std::sort(ms.begin(), ms.end());
        const float median = ms[runs / 2];
        std::printf("%d,%d,%d,%.3f,%.0f\n", trial.stride, trial.offset, trial.group, median,
                    8.0 * n / (median * 1e6));
    }
    CHECK(cudaFree(a));
    return 0;
}
