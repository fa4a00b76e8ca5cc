// Kernels whose hardware counters can be worked out by hand, for the
// emulator's counters (tests/counters.rs) and for the same counters from
// `ncu` on a GPU (bench/harness/counters-vs-ncu.sh). Every block is 32 or
// more whole warps of threads. Rebuild counters.ptx in this folder with
//   nvcc -ptx -lineinfo -arch=compute_75 counters.cu -o counters.ptx
// and its `.file 1` line made "counters.cu" (nvcc writes the full path).

// Lane i reads word i: a warp's 32 words are 128 bytes, 4 sectors.
extern "C" __global__ void coalesced_copy(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

// Lane i reads word 32 i: each lane its own sector, 32 a request.
extern "C" __global__ void strided_copy(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[32 * i];
}

// Lane i reads 16 bytes at 16 i: 512 bytes, 16 sectors a request.
extern "C" __global__ void vector_copy(const float4 *in, float4 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

// A 32x32 tile written by rows (lane i to column i: conflict-free), then
// read down a column (lane i to row i: every lane in bank 0, 32 ways).
extern "C" __global__ void shared_column(float *out) {
    __shared__ float tile[32][32];
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    for (int row = warp; row < 32; row += blockDim.x / 32) {
        tile[row][lane] = row * 32 + lane;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[lane][warp % 32];
}

// The same with a padded row: lane i's word of the column is in bank
// (33 i) mod 32 = i mod 32, so one way.
extern "C" __global__ void shared_padded_column(float *out) {
    __shared__ float tile[32][33];
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    for (int row = warp; row < 32; row += blockDim.x / 32) {
        tile[row][lane] = row * 32 + lane;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[lane][warp % 32];
}

// Every lane reads one shared word: a broadcast, one wavefront.
extern "C" __global__ void shared_broadcast(float *out) {
    __shared__ float values[32];
    if (threadIdx.x < 32) {
        values[threadIdx.x] = threadIdx.x;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = values[5];
}

// Odd lanes loop, even lanes wait: the loop's instructions run with 16 of
// 32 lanes.
extern "C" __global__ void divergent(float *out, int iterations) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i;
    if (threadIdx.x % 2) {
        for (int k = 0; k < iterations; ++k) {
            v = v * 0.5f + 1.0f;
        }
    }
    out[i] = v;
}
