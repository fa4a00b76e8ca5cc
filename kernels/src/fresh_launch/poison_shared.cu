// Fills the block's dynamic shared memory with 0xff bytes (a float NaN, the
// int -1): launched on every multiprocessor before a student's kernel, so a
// read of shared memory the kernel never wrote shows up as a wrong answer.
extern "C" __global__ void course_poison_shared(unsigned int words)
{
    extern __shared__ unsigned int poison[];
    for (unsigned int i = threadIdx.x; i < words; i += blockDim.x) {
        poison[i] = 0xffffffffu;
    }
}
