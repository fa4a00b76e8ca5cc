// Barriers and shared memory: __syncthreads with a reduction (bar.red),
// static and dynamic shared memory, 2D tiles with padding, partial tiles,
// and a generic pointer that may point to either memory.

// __syncthreads_count, __syncthreads_and and __syncthreads_or.
//@ case syncthreads_reductions
//@ launch 3 96
//@ in i32 288 rand 0 10
//@ out i32 9
extern "C" __global__ void syncthreads_reductions(const int *a, int *out) {
    int v = a[blockIdx.x * blockDim.x + threadIdx.x];
    int count = __syncthreads_count(v > 4);
    int all = __syncthreads_and(v < 9 + (int)blockIdx.x);
    int any = __syncthreads_or(v == 7 && blockIdx.x != 1);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x] = count;
        out[3 * blockIdx.x + 1] = all;
        out[3 * blockIdx.x + 2] = any;
    }
}

// The classic tree: a grid-stride sum per thread, then halves in shared
// memory with a barrier after each step.
//@ case shared_tree
//@ launch 4 128
//@ in f32 3000 rand -1 1
//@ val i32 3000
//@ out f32 4
extern "C" __global__ void shared_tree(const float *a, int n, float *partial) {
    __shared__ float cache[128];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        sum += a[i];
    }
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            cache[threadIdx.x] += cache[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = cache[0];
    }
}

// Dynamic shared memory sized at launch: a block reverses its slice.
//@ case dynamic_reverse
//@ launch 2 200 dyn 800
//@ in f32 400 iota 0.5
//@ out f32 400
extern "C" __global__ void dynamic_reverse(const float *a, float *out) {
    extern __shared__ float s[];
    int base = blockIdx.x * blockDim.x;
    s[threadIdx.x] = a[base + threadIdx.x];
    __syncthreads();
    out[base + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

// Dynamic shared memory carved into a double array and an int array, next
// to a static array.
//@ case dynamic_carved
//@ launch 1 64 dyn 768
//@ in i32 64 iota 3 -50
//@ out f64 64
//@ out i32 64
extern "C" __global__ void dynamic_carved(const int *a, double *d, int *k) {
    extern __shared__ double pool[];
    __shared__ int fixed[64];
    double *halves = pool;
    int *counts = (int *)&pool[64];
    int t = threadIdx.x;
    halves[t] = a[t] * 0.5;
    counts[t] = a[t] * a[t];
    fixed[t] = -a[t];
    __syncthreads();
    d[t] = halves[63 - t] + fixed[t];
    k[t] = counts[(t + 1) % 64] + fixed[(t + 2) % 64];
}

// A tiled transpose with a padded tile (33 columns: the padding is never
// read), on a grid that does not divide the matrix.
//@ case transpose_padded
//@ launch 2,2 32,8
//@ in f32 2000 iota
//@ val i32 50
//@ val i32 40
//@ out f32 2000
extern "C" __global__ void transpose_padded(const float *in, int rows, int cols, float *out) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        if (x < rows && y + j < cols) {
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

// A tiled matrix product whose edge tiles are partial: threads outside the
// matrix write zeros into the tiles, and the threads whose output lies
// outside the matrix compute but do not store.
//@ case matmul_partial_tiles
//@ launch 2,2 16,16
//@ in f32 625 rand -1 1
//@ in f32 625 rand -1 1
//@ val i32 25
//@ out f32 625
extern "C" __global__ void matmul_partial_tiles(const float *a, const float *b, int n, float *c) {
    __shared__ float as[16][16];
    __shared__ float bs[16][16];
    int row = blockIdx.y * 16 + threadIdx.y;
    int col = blockIdx.x * 16 + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < (n + 15) / 16; t++) {
        int ak = t * 16 + threadIdx.x;
        int bk = t * 16 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = row < n && ak < n ? a[row * n + ak] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = bk < n && col < n ? b[bk * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; k++) {
            sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        c[row * n + col] = sum;
    }
}

// The same product where the tiles are not zero-filled outside the matrix:
// a row of a tile that lies below the matrix is never written, and only the
// threads of that row (whose outputs are discarded) read it.
//@ case matmul_unwritten_rows
//@ launch 1,1 16,16
//@ in f32 100 rand -1 1
//@ in f32 100 rand -1 1
//@ val i32 10
//@ out f32 100
extern "C" __global__ void matmul_unwritten_rows(const float *a, const float *b, int n, float *c) {
    __shared__ float as[16][16];
    __shared__ float bs[16][16];
    int row = threadIdx.y, col = threadIdx.x;
    if (row < n) {
        as[row][col] = col < n ? a[row * n + col] : 0.0f;
    }
    if (col < n) {
        bs[row][col] = row < n ? b[row * n + col] : 0.0f;
    }
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < 16; k++) {
        sum += as[row][k] * bs[k][col];
    }
    if (row < n && col < n) {
        c[row * n + col] = sum;
    }
}

// A device function taking a generic pointer, called on shared and on
// global memory.
__device__ __noinline__ float sum3(const float *p) { return p[0] + p[1] + p[2]; }

//@ case generic_pointers
//@ launch 1 32
//@ in f32 34 iota 0.25
//@ out f32 64
extern "C" __global__ void generic_pointers(const float *a, float *out) {
    __shared__ float s[34];
    s[threadIdx.x] = a[threadIdx.x] * 2.0f;
    if (threadIdx.x < 2) {
        s[32 + threadIdx.x] = a[32 + threadIdx.x] * 2.0f;
    }
    __syncthreads();
    out[threadIdx.x] = sum3(&s[threadIdx.x]);
    out[32 + threadIdx.x] = sum3(&a[threadIdx.x]);
}

// Bytes and halfwords in shared memory, signed and unsigned.
//@ case shared_bytes
//@ launch 1 64
//@ in i8 64 rand -128 127
//@ out i32 64
//@ out u16 64
extern "C" __global__ void shared_bytes(const signed char *a, int *wide, unsigned short *halves) {
    __shared__ signed char b[64];
    __shared__ unsigned short h[64];
    b[threadIdx.x] = a[threadIdx.x];
    h[threadIdx.x] = (unsigned short)(a[threadIdx.x] * 300);
    __syncthreads();
    wide[threadIdx.x] = b[63 - threadIdx.x] * 1000 + b[threadIdx.x];
    halves[threadIdx.x] = h[(threadIdx.x + 5) % 64] + 1;
}
