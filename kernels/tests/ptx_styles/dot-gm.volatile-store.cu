// expect: every need
// dot-gm storing through a volatile pointer (st.volatile.global).
extern "C" __global__ void dot(const float* a, const float* b, float* c, size_t n)
{
    volatile float* products = c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        products[i] = a[i] * b[i];
    }
}
