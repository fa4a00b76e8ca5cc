// 50 KiB of static shared memory: more than any block may have without the
// opt-in attribute, which only dynamic shared memory can use. nvcc writes
// the PTX; the driver refuses to load it. A module of its own, since the
// whole module fails to load.

//@ case static_shared_over_48k
//@ launch 1 64
//@ out f32 64
extern "C" __global__ void static_50k(float *out) {
    __shared__ float big[12800];
    big[threadIdx.x * 200] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = big[(63 - threadIdx.x) * 200];
}
