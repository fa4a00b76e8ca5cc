// Launches a GPU refuses, and their neighbours it accepts: __launch_bounds__
// (.maxntid), threads per block, grid and block dimensions, and shared
// memory per block with and without the opt-in attribute. Each refused
// launch is recorded with the driver's error code; the kernels themselves
// are trivial.

// __launch_bounds__(64): up to 64 threads, in any shape.
//@ case bounds_64_at_limit
//@ launch 2 64
//@ out u32 128
//@ case bounds_64_over
//@ launch 2 65
//@ out u32 130
//@ case bounds_64_2d
//@ launch 1 8,8
//@ out u32 64
//@ case bounds_64_2d_over
//@ launch 1 8,9
//@ out u32 72
//@ case bounds_64_under
//@ launch 4 32
//@ out u32 128
extern "C" __global__ void __launch_bounds__(64) bounded_64(unsigned *out) {
    unsigned t = (threadIdx.y * blockDim.x + threadIdx.x);
    out[blockIdx.x * blockDim.x * blockDim.y + t] = t + 1;
}

// __launch_bounds__(256, 2): a maximum and a minimum of blocks per
// multiprocessor.
//@ case bounds_256_2_at_limit
//@ launch 1 256
//@ out u32 256
//@ case bounds_256_2_over
//@ launch 1 512
//@ out u32 512
extern "C" __global__ void __launch_bounds__(256, 2) bounded_256_2(unsigned *out) {
    out[threadIdx.x] = threadIdx.x * 3;
}

// No bounds: the device's limits on block and grid dimensions. Each launch
// counts its threads and keeps the largest block and thread index.
//@ case block_1024
//@ launch 1 1024
//@ out u32 3
//@ case block_1025
//@ launch 1 1025
//@ out u32 3
//@ case block_32_32_2
//@ launch 1 32,32,2
//@ out u32 3
//@ case block_z_64
//@ launch 1 1,1,64
//@ out u32 3
//@ case block_z_65
//@ launch 1 1,1,65
//@ out u32 3
//@ case block_x_0
//@ launch 1 0
//@ out u32 3
//@ case grid_y_65535
//@ launch 1,65535 1
//@ out u32 3
//@ case grid_y_65536
//@ launch 1,65536 1
//@ out u32 3
//@ case grid_z_65536
//@ launch 1,1,65536 1
//@ out u32 3
//@ case grid_x_0
//@ launch 0 32
//@ out u32 3
extern "C" __global__ void unbounded(unsigned *out) {
    unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    atomicAdd(&out[0], 1u);
    atomicMax(&out[1], block);
    atomicMax(&out[2], t);
}

// 40 KiB of static shared memory, plus dynamic shared memory up to 48 KiB
// in all, or beyond it with the opt-in attribute.
//@ case shared_static_plus_dynamic_at_48k
//@ launch 1 64 dyn 48k
//@ out f32 64
//@ case shared_static_plus_dynamic_over_48k
//@ launch 1 64 dyn 48k+16
//@ out f32 64
//@ case shared_opt_in_to_the_maximum
//@ maxdyn optin
//@ launch 1 64 dyn optin
//@ out f32 64
//@ case shared_opt_in_past_the_maximum
//@ maxdyn optin+16
//@ launch 1 64 dyn optin+16
//@ out f32 64
//@ case shared_beyond_the_opted_size
//@ maxdyn 48k+1024
//@ launch 1 64 dyn 48k+2048
//@ out f32 64
extern "C" __global__ void static_40k(float *out) {
    __shared__ float big[10240];
    extern __shared__ float more[];
    big[threadIdx.x * 160] = threadIdx.x;
    if (threadIdx.x == 0) {
        more[0] = 1.0f;
    }
    __syncthreads();
    out[threadIdx.x] = big[(63 - threadIdx.x) * 160] + more[0];
}

// Dynamic shared memory alone, sized at each launch.
//@ case dynamic_48k
//@ launch 1 32 dyn 49152
//@ out u32 32
//@ case dynamic_48k_plus_4
//@ launch 1 32 dyn 49156
//@ out u32 32
//@ case dynamic_opt_in
//@ maxdyn 65536
//@ launch 1 32 dyn 65536
//@ out u32 32
extern "C" __global__ void dynamic_only(unsigned *out) {
    extern __shared__ unsigned pool[];
    pool[threadIdx.x * 300] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = pool[(31 - threadIdx.x) * 300] + 1;
}
