// FP8 GEMM on tensor cores (sm_89+): D = A B with A (M x K) and B (K x N) in e4m3, accumulated in f32.
// Each warp computes one 16x8 tile of D with mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (inline PTX),
// loading its fragments straight from global memory as the PTX ISA lays them out for 8-bit types
// (9.7.14.5.10): A row-major, B given transposed (Bt, N x K row-major), so each fragment register is 4
// consecutive bytes.  M a multiple of 16, N of 8, K of 32.  Build: nvcc -ptx -arch=sm_90a -O3 fp8_gemm.cu
#include <cuda_fp8.h>
#include <stdint.h>

extern "C" __global__ void fp8_gemm(int M, int N, int K, const __nv_fp8_e4m3 *A, const __nv_fp8_e4m3 *Bt,
                                    float *D) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    int tiles_n = N / 8;
    if (warp >= (M / 16) * tiles_n) return;  // whole warps only: mma.sync needs all 32 lanes
    int m0 = (warp / tiles_n) * 16, n0 = (warp % tiles_n) * 8;
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += 32) {
        uint32_t a[4], b[2];
        for (int j = 0; j < 4; ++j)
            a[j] = *reinterpret_cast<const uint32_t *>(A + (m0 + g + 8 * (j & 1)) * K + k0 + 4 * t + 16 * (j >> 1));
        for (int j = 0; j < 2; ++j)
            b[j] = *reinterpret_cast<const uint32_t *>(Bt + (n0 + g) * K + k0 + 4 * t + 16 * j);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    for (int i = 0; i < 4; ++i)
        D[(m0 + g + 8 * (i >> 1)) * N + n0 + 2 * t + (i & 1)] = c[i];
}
