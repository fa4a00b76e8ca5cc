// Does a kernel that fills shared memory with 0xff leave it for the next
// kernel of the same process, in every block slot of every multiprocessor?
// (The course's shared-memory poison: kernels/src/fresh_launch.rs.)
// Each case runs in a process of its own, so no case sees an earlier one's
// poison. On a GPU machine:
//   nvcc -arch=sm_90 -o probe bench/probes/poison_probe.cu
//   for c in 0 1 2 3 4 5 6 7; do ./probe $c; done
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
extern "C" __global__ void poison(unsigned words) {
    extern __shared__ unsigned p[];
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) p[i] = 0xffffffffu;
}
__global__ void reader_dynamic(int* out, int words) {
    extern __shared__ unsigned s[];
    if (threadIdx.x == 0) { int bad = 0; for (int i = 0; i < words; i++) bad += s[i] == 0xffffffffu; out[blockIdx.x] = bad; }
}
template <int WORDS>
__global__ void reader_static(int* out) {
    __shared__ unsigned s[WORDS];
    if (threadIdx.x == 0) { int bad = 0; for (int i = 0; i < WORDS; i++) bad += s[i] == 0xffffffffu; out[blockIdx.x] = bad; }
}
static int* d; static int h[1 << 16];
static void report(const char* what, int blocks, int words) {
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, blocks * sizeof(int), cudaMemcpyDeviceToHost);
    int full = 0, some = 0;
    for (int b = 0; b < blocks; b++) { full += h[b] == words; some += h[b] > 0; }
    printf("%-58s blocks %5d: all words poisoned in %5d, some in %5d (%s)\n", what, blocks, full, some, cudaGetErrorString(cudaGetLastError()));
}
// As kernels/src/fresh_launch.rs launches it on an H100 (228 KiB a
// multiprocessor): 5 blocks of 44.5 KiB and 128 threads each, twice over;
// here with the carveout asked at 100% shared memory, which case 7 leaves
// out (on an H100 on 2026-11-27 the two gave the same).
static void poison_as_the_course(int sms) {
    cudaFuncSetAttribute(poison, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    poison<<<sms * 10, 128, 45568>>>(45568 / 4);
}
int main(int argc, char** argv) {
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaMalloc(&d, sizeof(h));
    int blocks = sms * 4;
    switch (argc > 1 ? atoi(argv[1]) : 0) {
    case 0: reader_dynamic<<<blocks, 256, 1024>>>(d, 256); report("fresh process, dynamic 1 KiB", blocks, 256); break;
    case 1: poison_as_the_course(sms); reader_dynamic<<<blocks, 256, 1024>>>(d, 256); report("dynamic 1 KiB, 4 blocks a multiprocessor", blocks, 256); break;
    case 2: poison_as_the_course(sms); reader_static<256><<<blocks, 256>>>(d); report("static 1 KiB, 4 blocks a multiprocessor", blocks, 256); break;
    case 3: poison_as_the_course(sms); reader_static<8192><<<blocks, 256>>>(d); report("static 32 KiB, 4 blocks a multiprocessor", blocks, 8192); break;
    case 4: poison_as_the_course(sms); reader_static<8192><<<sms * 6, 64>>>(d); report("static 32 KiB, 6 blocks a multiprocessor", sms * 6, 8192); break;
    case 5: poison_as_the_course(sms); reader_dynamic<<<sms * 16, 1024, 4096>>>(d, 1024); report("dynamic 4 KiB, 1024 threads", sms * 16, 1024); break;
    case 6: poison_as_the_course(sms); reader_dynamic<<<sms * 64, 32, 128>>>(d, 32); report("dynamic 128 B, 32 threads", sms * 64, 32); break;
    case 7: poison<<<sms * 10, 128, 45568>>>(45568 / 4); reader_static<8192><<<blocks, 256>>>(d); report("static 32 KiB, 4 a multiprocessor, no carveout set", blocks, 8192); break;
    }
    return 0;
}
