// A deliberately large PTX input for the frontend benchmark (bench/run.py): register-tiled
// SIMT GEMM micro-kernels, templated on the tile shape and fully unrolled, as CUTLASS-style
// code makes nvcc emit. Regenerate: nvcc -ptx -arch=sm_80 -O3 large_unrolled.cu -o large_unrolled.sm_80.ptx
template <int TM, int TN, int TK>
__global__ void tile_gemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                          int m, int n, int k) {
    float acc[TM][TN] = {};
    int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * TM;
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * TN;
    for (int kk = 0; kk < k; kk += TK) {
#pragma unroll
        for (int t = 0; t < TK; ++t) {
            float av[TM], bv[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) av[i] = a[(row0 + i) * k + kk + t];
#pragma unroll
            for (int j = 0; j < TN; ++j) bv[j] = b[(kk + t) * n + col0 + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            if (row0 + i < m && col0 + j < n) c[(row0 + i) * n + col0 + j] = acc[i][j];
}

template __global__ void tile_gemm<4, 4, 8>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<8, 4, 8>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<4, 8, 8>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<8, 8, 4>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<8, 8, 8>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<2, 16, 8>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<16, 2, 8>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<4, 4, 16>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<8, 8, 16>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<4, 8, 16>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<8, 4, 16>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<4, 4, 32>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<2, 8, 32>(const float*, const float*, float*, int, int, int);
template __global__ void tile_gemm<8, 2, 32>(const float*, const float*, float*, int, int, int);
