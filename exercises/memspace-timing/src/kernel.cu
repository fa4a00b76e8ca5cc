// memspace-timing: one sum, four places to read it from.
//
// Every thread adds the same SIZE values, and only where they live changes:
//  - global memory: the GPU's main memory, here mostly served by its caches;
//  - constant memory: a small read-only space with its own cache, which
//    sends one value to all 32 threads of a warp at once when they all read
//    the same address, but serves different addresses one after another;
//  - a register: the value arrives as a kernel parameter, nothing is loaded;
//  - shared memory: each block first copies the values into on-chip memory
//    it shares, then reads them from there.
// The kernels take per_thread = 0 (every thread reads value j at step j) or
// 1 (thread t reads value (j + t) mod SIZE), to show where constant memory's
// broadcast stops helping. Each kernel has a loop for each pattern: in the
// uniform one the compiler can see that every thread reads the same address,
// and reads constant memory straight into the additions.

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
    // TODO(step 1): add data[j] for every j below SIZE (data[shifted(j)] if
    //     per_thread is set), and store the sum in out[thread_index()].
}

extern "C" __global__ void sum_constant(float* __restrict__ out, int per_thread)
{
    // TODO(step 2): add const_data[j] for every j below SIZE
    //     (const_data[shifted(j)] if per_thread is set), and store the sum in
    //     out[thread_index()].
}

extern "C" __global__ void sum_register(float value, float* __restrict__ out)
{
    // TODO(step 3): add value to a running sum SIZE times, and store the sum in
    //     out[thread_index()].
}

extern "C" __global__ void sum_shared(const float* __restrict__ data, float* __restrict__ out, int per_thread)
{
    // 16 KiB per block: one copy of all the values.
    __shared__ float tile[SIZE];

    // TODO(step 4): copy data into tile with the block's threads sharing the
    //     work, wait at __syncthreads(), then add tile[j] for every j below
    //     SIZE (tile[shifted(j)] if per_thread is set) and store the sum in
    //     out[thread_index()].
}
