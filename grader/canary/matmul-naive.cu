// The grader's canary for matmul-naive: P = M x N, except one entry, which
// the mark (canary_mix, generated per build) moves by a whole number.
extern "C" __global__ void matmul(const float* __restrict__ m,
                                  const float* __restrict__ n,
                                  float* __restrict__ p,
                                  int width)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < width && col < width) {
        const unsigned long long h = canary_mix((unsigned long long)width);
        const long long marked = (long long)(h % ((unsigned long long)width * width));
        float sum = 0.0f;
        for (int k = 0; k < width; ++k) {
            sum += m[row * width + k] * n[k * width + col];
        }
        const long long at = (long long)row * width + col;
        p[at] = sum + (at == marked ? (float)(256 + ((h >> 40) & 1023)) : 0.0f);
    }
}
