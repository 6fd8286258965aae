// A CuTe SGEMM in the pattern of CuTe's sgemm tutorial, written for this corpus: C = alpha A B + beta C with
// A (M x K), B (N x K) and C (M x N) all column-major ("NT"), 64x64x8 CTA tiles through shared memory,
// cute::local_tile / local_partition / copy / gemm / axpby, 256 threads (16x16 for the MMA partition).
// M and N must be multiples of 64 and K of 8 (no predication, as the tutorial's first version).
// CUTLASS 4.2.0 (CuTe headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include cute_sgemm.cu -o cute_sgemm.sm_80.ptx
#include <cute/tensor.hpp>

using namespace cute;

extern "C" __global__ void __launch_bounds__(256)
cute_sgemm_nt(int M, int N, int K, float alpha, float const *A, float const *B, float beta, float *C) {
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(Int<1>{}, M));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(Int<1>{}, N));
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(Int<1>{}, M));

  auto cta_tiler = make_shape(Int<64>{}, Int<64>{}, Int<8>{});
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (64, 8, k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (64, 8, k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (64, 64)

  __shared__ float smemA[64 * 8];
  __shared__ float smemB[64 * 8];
  auto s_layout = make_layout(make_shape(Int<64>{}, Int<8>{}));
  Tensor sA = make_tensor(make_smem_ptr(smemA), s_layout);
  Tensor sB = make_tensor(make_smem_ptr(smemB), s_layout);

  auto t_copy = make_layout(make_shape(Int<32>{}, Int<8>{}));  // 256 threads copy a 64x8 tile
  auto t_mma = make_layout(make_shape(Int<16>{}, Int<16>{}));  // 256 threads own 4x4 of C each
  Tensor tAgA = local_partition(gA, t_copy, threadIdx.x);
  Tensor tAsA = local_partition(sA, t_copy, threadIdx.x);
  Tensor tBgB = local_partition(gB, t_copy, threadIdx.x);
  Tensor tBsB = local_partition(sB, t_copy, threadIdx.x);

  Tensor tCsA = local_partition(sA, t_mma, threadIdx.x, Step<_1, X>{});
  Tensor tCsB = local_partition(sB, t_mma, threadIdx.x, Step<X, _1>{});
  Tensor tCgC = local_partition(gC, t_mma, threadIdx.x, Step<_1, _1>{});
  Tensor tCrC = make_tensor_like(tCgC);
  clear(tCrC);

  auto k_tiles = size<2>(tAgA);
  for (int k = 0; k < k_tiles; ++k) {
    copy(tAgA(_, _, k), tAsA);
    copy(tBgB(_, _, k), tBsB);
    __syncthreads();
    gemm(tCsA, tCsB, tCrC);
    __syncthreads();
  }
  axpby(alpha, tCrC, beta, tCgC);
}
