// Issue 19: the sm_80 tf32 and f64 warp-level matrix products, through inline PTX mma.sync (fragments placed by
// hand per the PTX ISA's "Matrix Fragments for mma.m16n8k8 / m16n8k4 (.tf32)" and "mma.m8n8k4 (.f64)") and
// through nvcuda::wmma (precision::tf32 m16n16k8, double m8n8k4, __nv_bfloat16 m16n16k16), compiled by nvcc 13.0 with
//   nvcc -ptx -arch=sm_80 -O3 mma_tf32_f64.cu -o mma_tf32_f64.sm_80.ptx
// (tests/test_mma_tf32_f64.py runs them on both of xcc's engines against numpy).  One warp per launch; all
// matrices row-major.
#include <mma.h>
#include <cuda_bf16.h>
#include <cstdint>
using namespace nvcuda;

__device__ __forceinline__ uint32_t bits(float x) { return __float_as_uint(x); }

// D (16 x 8) = A (16 x 8) B (8 x 8) + C (16 x 8), mma.m16n8k8 .tf32: a0 (g, t), a1 (g+8, t), a2 (g, t+4),
// a3 (g+8, t+4); b0 (t, g), b1 (t+4, g); c0..c3 (g + 8 (i/2), 2t + i%2), with g = lane/4, t = lane%4.
extern "C" __global__ void mma_tf32_k8(const float* A, const float* B, const float* C, float* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  uint32_t a0 = bits(A[g * 8 + t]), a1 = bits(A[(g + 8) * 8 + t]);
  uint32_t a2 = bits(A[g * 8 + t + 4]), a3 = bits(A[(g + 8) * 8 + t + 4]);
  uint32_t b0 = bits(B[t * 8 + g]), b1 = bits(B[(t + 4) * 8 + g]);
  float c[4], d[4];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%10,%11,%12,%13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = d[i];
}

// D (16 x 8) = A (16 x 4) B (4 x 8) + C, mma.m16n8k4 .tf32: a0 (g, t), a1 (g+8, t); b0 (t, g).
extern "C" __global__ void mma_tf32_k4(const float* A, const float* B, const float* C, float* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  uint32_t a0 = bits(A[g * 4 + t]), a1 = bits(A[(g + 8) * 4 + t]), b0 = bits(B[t * 8 + g]);
  float c[4], d[4];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
               "{%7,%8,%9,%10};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = d[i];
}

// D (8 x 8) = A (8 x 4) B (4 x 8) + C, mma.m8n8k4 .f64: a0 (g, t); b0 (t, g); c0, c1 (g, 2t + i).
extern "C" __global__ void mma_f64(const double* A, const double* B, const double* C, double* D) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  double a0 = A[g * 4 + t], b0 = B[t * 8 + g], c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], d0, d1;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
               : "=d"(d0), "=d"(d1) : "d"(a0), "d"(b0), "d"(c0), "d"(c1));
  D[g * 8 + 2 * t] = d0;
  D[g * 8 + 2 * t + 1] = d1;
}

// D (16 x 16) = A (16 x 8) B (8 x 16) + C with wmma m16n16k8 precision::tf32 (A row-major, B column-major as
// stored: B^T row-major 16 x 8, C and D row-major); the inputs are rounded to tf32 with __float_to_tf32.
extern "C" __global__ void wmma_tf32(const float* A, const float* Bt, const float* C, float* D) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
  wmma::load_matrix_sync(a, A, 8);
  wmma::load_matrix_sync(b, Bt, 8);
  wmma::load_matrix_sync(c, C, 16, wmma::mem_row_major);
  for (int i = 0; i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);
  for (int i = 0; i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 16, wmma::mem_row_major);
}

// D (8 x 8) = A (8 x 4) B (4 x 8) + C with wmma m8n8k4 double (A row-major, B row-major, C/D row-major).
extern "C" __global__ void wmma_f64(const double* A, const double* B, const double* C, double* D) {
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> c;
  wmma::load_matrix_sync(a, A, 4);
  wmma::load_matrix_sync(b, B, 8);
  wmma::load_matrix_sync(c, C, 8, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 8, wmma::mem_row_major);
}

// D (16 x 16) = A (16 x 16 bf16, row-major) B (16 x 16 bf16, column-major: B^T row-major) + C (f32, row-major)
// with wmma m16n16k16 __nv_bfloat16.
extern "C" __global__ void wmma_bf16(const __nv_bfloat16* A, const __nv_bfloat16* Bt, const float* C, float* D) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, Bt, 16);
  wmma::load_matrix_sync(c, C, 16, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 16, wmma::mem_row_major);
}
