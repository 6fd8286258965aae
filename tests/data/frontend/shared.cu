// Frontend test kernel: shared/constant/global variables with initialisers,
// extern shared memory, function pointers (call through a prototype) and tensor cores.
#include <mma.h>
using namespace nvcuda;

__constant__ float coeffs[8] = {1.0f, 0.5f, 0.25f, 0.125f, -1.0f, 2.0f, 3.0f, 4.0f};
__device__ int table[2][3] = {{1, 2, 3}, {4, 5, 6}};
__device__ int *table_ptr = &table[0][0];

typedef float (*unary_fn)(float);
__device__ __noinline__ float twice(float x) { return 2.0f * x; }
__device__ __noinline__ float square(float x) { return x * x; }
__device__ unary_fn fns[2] = {twice, square};

__global__ void __launch_bounds__(256, 2) stencil(const float *in, float *out, int n, int which) {
    extern __shared__ float tile[];
    __shared__ float halo[2][32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    if (threadIdx.x < 32) halo[threadIdx.x & 1][threadIdx.x] = in[(i + 256) % n];
    __syncthreads();
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += coeffs[k] * tile[(threadIdx.x + k) & 255];
    acc += halo[1][threadIdx.x & 31] + *table_ptr;
    if (i < n) out[i] = fns[which & 1](acc);
}

__global__ void wmma_gemm(const half *a, const half *b, float *c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
