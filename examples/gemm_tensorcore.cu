// Tensor-core GEMM, f16 inputs, f32 accumulation, row-major matrices:
// C (M x N, f32) = A (M x K, f16) * B (K x N, f16). M, N, K must be multiples
// of the tile shape. One warp (blockDim.x == 32) per output tile.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

// nvcuda::wmma 16x16x16. Grid (N/16, M/16).
extern "C" __global__ void gemm_wmma_f16_f32(int M, int N, int K, const __half* A,
                                             const __half* B, float* C)
{
    int tm = blockIdx.y, tn = blockIdx.x;
    if (tm * 16 >= M || tn * 16 >= N)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + (size_t)tm * 16 * K + k, K);
        wmma::load_matrix_sync(b, B + (size_t)k * N + tn * 16, N);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + (size_t)tm * 16 * N + tn * 16, c, N, wmma::mem_row_major);
}

// wmma with the accumulator loaded from C: C = A * B + C. B is column-major
// here (element (k, n) at B[n * K + k]). Grid (N/16, M/16).
__global__ void gemm_wmma_accumulate(int M, int N, int K, const __half* A, const __half* Bt,
                                     float* C)
{
    int tm = blockIdx.y, tn = blockIdx.x;
    if (tm * 16 >= M || tn * 16 >= N)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    float* ctile = C + (size_t)tm * 16 * N + tn * 16;
    wmma::load_matrix_sync(c, ctile, N, wmma::mem_row_major);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + (size_t)tm * 16 * K + k, K);
        wmma::load_matrix_sync(b, Bt + (size_t)tn * 16 * K + k, K);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(ctile, c, N, wmma::mem_row_major);
}

// Inline-asm mma.sync.m16n8k16 with ldmatrix operand loads, as CUTLASS does.
// One warp computes a 16x8 tile of C; grid (N/8, M/16). The A tile (16x16)
// and B tile (16x8) are staged in shared memory, A is loaded with
// ldmatrix.x4 and B (row-major, k x n) with ldmatrix.x2.trans to get the
// "col" operand layout.
__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__global__ void gemm_mma_m16n8k16(int M, int N, int K, const __half* A, const __half* B,
                                  float* C)
{
    __shared__ __align__(16) __half As[16][16];
    __shared__ __align__(16) __half Bs[16][8];
    int lane = threadIdx.x & 31;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
    if (m0 >= M || n0 >= N)
        return;
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        // 256 A halves and 128 B halves per tile: 8 and 4 per lane.
        for (int e = lane; e < 256; e += 32)
            As[e / 16][e % 16] = A[(size_t)(m0 + e / 16) * K + k0 + e % 16];
        for (int e = lane; e < 128; e += 32)
            Bs[e / 8][e % 8] = B[(size_t)(k0 + e / 8) * N + n0 + e % 8];
        __syncwarp();
        unsigned a0, a1, a2, a3, b0, b1;
        unsigned aaddr = smem_addr(&As[lane % 16][(lane / 16) * 8]);
        unsigned baddr = smem_addr(&Bs[lane % 16][0]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                     : "r"(aaddr));
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                     : "=r"(b0), "=r"(b1)
                     : "r"(baddr));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                     : "=f"(c0), "=f"(c1), "=f"(c2), "=f"(c3)
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1),
                       "f"(c0), "f"(c1), "f"(c2), "f"(c3));
        __syncwarp();
    }
    // Accumulator layout: c0,c1 at (lane/4, 2*(lane%4) + {0,1}); c2,c3 eight rows down.
    int r = m0 + lane / 4, c = n0 + 2 * (lane % 4);
    C[(size_t)r * N + c] = c0;
    C[(size_t)r * N + c + 1] = c1;
    C[(size_t)(r + 8) * N + c] = c2;
    C[(size_t)(r + 8) * N + c + 1] = c3;
}
