// The grader's canary for memspace-timing: each kernel's per-thread sums,
// except one thread's, which the mark (canary_mix, generated per build)
// moves by a whole number.

#define SIZE 4096

__constant__ float const_data[SIZE];

__device__ int shifted(int j)
{
    return (j + (int)threadIdx.x) & (SIZE - 1);
}

__device__ int thread_index()
{
    return blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ float canary_shift()
{
    const unsigned long long total = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long h = canary_mix(total);
    return (unsigned long long)thread_index() == h % total ? (float)(256 + ((h >> 40) & 1023)) : 0.0f;
}

extern "C" __global__ void sum_global(const float* __restrict__ data, float* __restrict__ out, int per_thread)
{
    float sum = 0.0f;
    if (per_thread) {
        for (int j = 0; j < SIZE; ++j) {
            sum += data[shifted(j)];
        }
    } else {
        for (int j = 0; j < SIZE; ++j) {
            sum += data[j];
        }
    }
    out[thread_index()] = sum + canary_shift();
}

extern "C" __global__ void sum_constant(float* __restrict__ out, int per_thread)
{
    float sum = 0.0f;
    if (per_thread) {
        for (int j = 0; j < SIZE; ++j) {
            sum += const_data[shifted(j)];
        }
    } else {
        for (int j = 0; j < SIZE; ++j) {
            sum += const_data[j];
        }
    }
    out[thread_index()] = sum + canary_shift();
}

extern "C" __global__ void sum_register(float value, float* __restrict__ out)
{
    float sum = 0.0f;
    for (int j = 0; j < SIZE; ++j) {
        sum += value;
    }
    out[thread_index()] = sum + canary_shift();
}

extern "C" __global__ void sum_shared(const float* __restrict__ data, float* __restrict__ out, int per_thread)
{
    __shared__ float tile[SIZE];

    for (int j = threadIdx.x; j < SIZE; j += blockDim.x) {
        tile[j] = data[j];
    }
    __syncthreads();
    float sum = 0.0f;
    if (per_thread) {
        for (int j = 0; j < SIZE; ++j) {
            sum += tile[shifted(j)];
        }
    } else {
        for (int j = 0; j < SIZE; ++j) {
            sum += tile[j];
        }
    }
    out[thread_index()] = sum + canary_shift();
}
