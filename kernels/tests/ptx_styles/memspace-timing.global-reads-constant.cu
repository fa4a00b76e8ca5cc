// expect: lacks DataFrom(Global)
// Wrong: the global kernel sums constant memory.

#define SIZE 4096

// Filled by the host through the module's symbol "const_data".
__constant__ float const_data[SIZE];

// The value a thread reads at step j in the per-thread pattern. SIZE is a
// power of two, so the mask wraps around the end.
__device__ int shifted(int j)
{
    return (j + (int)threadIdx.x) & (SIZE - 1);
}

// The thread's place in out: one sum per thread of the grid.
__device__ int thread_index()
{
    return blockIdx.x * blockDim.x + threadIdx.x;
}

extern "C" __global__ void sum_global(const float* __restrict__ data, float* __restrict__ out, int per_thread)
{
    // Step 1: add data[j] for every j below SIZE (data[shifted(j)] if
    //     per_thread is set), and store the sum in out[thread_index()].
    float sum = 0.0f;
    if (per_thread) {
        for (int j = 0; j < SIZE; ++j) {
            sum += data[shifted(j)];
        }
    } else {
        for (int j = 0; j < SIZE; ++j) {
            sum += const_data[j];
        }
    }
    out[thread_index()] = sum;
}

extern "C" __global__ void sum_constant(float* __restrict__ out, int per_thread)
{
    // Step 2: add const_data[j] for every j below SIZE (const_data[shifted(j)]
    //     if per_thread is set), and store the sum in out[thread_index()].
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
    out[thread_index()] = sum;
}

extern "C" __global__ void sum_register(float value, float* __restrict__ out)
{
    // Step 3: add value to a running sum SIZE times, and store the sum in
    //     out[thread_index()].
    float sum = 0.0f;
    for (int j = 0; j < SIZE; ++j) {
        sum += value;
    }
    out[thread_index()] = sum;
}

extern "C" __global__ void sum_shared(const float* __restrict__ data, float* __restrict__ out, int per_thread)
{
    // 16 KiB per block: one copy of all the values.
    __shared__ float tile[SIZE];

    // Step 4: copy data into tile with the block's threads sharing the work,
    //     wait at __syncthreads(), then add tile[j] for every j below SIZE
    //     (tile[shifted(j)] if per_thread is set) and store the sum in
    //     out[thread_index()].
    for (int j = threadIdx.x; j < SIZE; j += blockDim.x) {
        tile[j] = data[j];
    }
    // No thread may read the tile before every thread has written its part.
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
    out[thread_index()] = sum;
}
