// Which reads compute-sanitizer's initcheck reports, one case a process
// (initcheck-probe.sh runs each under the tool): whether the grader may
// leave initcheck out of a kernel that allocates nothing
// (grader/src/run/sanitizer.rs, not_needed).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__device__ float module_var[128];

__global__ void shared_static(float *out) {
    __shared__ float s[128];
    if (threadIdx.x < 64) s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
__global__ void shared_dynamic(float *out) {
    extern __shared__ float s[];
    if (threadIdx.x < 64) s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
__global__ void device_var(float *out) { out[threadIdx.x] = module_var[threadIdx.x]; }
__global__ void heap(float *out) {
    __shared__ float *p;
    if (threadIdx.x == 0) p = (float *)malloc(128 * sizeof(float));
    __syncthreads();
    out[threadIdx.x] = p ? p[threadIdx.x] : -1.0f;
    __syncthreads();
    if (threadIdx.x == 0) free(p);
}
__global__ void global_read(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x]; }

int main(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "";
    float *in, *out;
    cudaMalloc(&in, 128 * 4);
    cudaMalloc(&out, 128 * 4);
    cudaMemset(out, 0, 128 * 4);
    if (!strcmp(c, "global_unwritten")) global_read<<<1, 128>>>(in, out);
    else if (!strcmp(c, "global_written")) { cudaMemset(in, 0, 512); global_read<<<1, 128>>>(in, out); }
    else if (!strcmp(c, "shared_static")) shared_static<<<1, 128>>>(out);
    else if (!strcmp(c, "shared_dynamic")) shared_dynamic<<<1, 128, 512>>>(out);
    else if (!strcmp(c, "device_var")) device_var<<<1, 128>>>(out);
    else if (!strcmp(c, "heap")) heap<<<1, 128>>>(out);
    else { printf("unknown case\n"); return 2; }
    cudaError_t e = cudaDeviceSynchronize();
    float h[128];
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    printf("%s: %s, out[0]=%g out[100]=%g\n", c, cudaGetErrorString(e), h[0], h[100]);
    return 0;
}
