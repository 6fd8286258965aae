// A CuTe tensor-core HGEMM written for this corpus: C = A B^T with f16 A (M x K) and B (N x K), both K-major
// ("TN"), f32 C (M x N, row-major), f32 accumulate.  64x64x32 CTA tiles, 128 threads; global -> shared by a
// TiledCopy of 16-byte cp.async (SM80_CP_ASYNC_CACHEALWAYS), two k-tiles in flight (cp.async.wait_group 1),
// into Swizzle<2,3,3>-permuted shared tiles; shared -> registers by ldmatrix.x4 (SM75_U32x4_LDSM_N) copies
// retiled to the TiledMMA's fragments (make_tiled_copy_A/B, retile_D); mma.sync m16n8k16 on a 2x2 warp grid.
// M and N must be multiples of 64 and K of 32 (no predication).
// CUTLASS 4.2.0 (CuTe headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include cute_hgemm_ldsm.cu -o cute_hgemm_ldsm.sm_80.ptx
#include <cute/tensor.hpp>

using namespace cute;

extern "C" __global__ void __launch_bounds__(128)
cute_hgemm_tn(int M, int N, int K, half_t const *A, half_t const *B, float *C) {
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, Int<1>{}));
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));

  auto cta_tiler = make_shape(Int<64>{}, Int<64>{}, Int<32>{});
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (64, 32, k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (64, 32, k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (64, 64)

  // Shared tiles: 8x32 K-major atoms with the 16-byte chunks XOR-swizzled by row, two stages.
  auto atom = composition(Swizzle<2, 3, 3>{}, make_layout(make_shape(Int<8>{}, Int<32>{}),
                                                          make_stride(Int<32>{}, Int<1>{})));
  auto s_layout = tile_to_shape(atom, make_shape(Int<64>{}, Int<32>{}, Int<2>{}));
  __shared__ alignas(128) half_t smemA[64 * 32 * 2];
  __shared__ alignas(128) half_t smemB[64 * 32 * 2];
  Tensor sA = make_tensor(make_smem_ptr(smemA), s_layout);  // (64, 32, 2)
  Tensor sB = make_tensor(make_smem_ptr(smemB), s_layout);

  // Global -> shared: 128 threads as 32 rows x 4 chunks of 8 halves (16 bytes each).
  auto g2s = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, half_t>{},
                             make_layout(make_shape(Int<32>{}, Int<4>{}), make_stride(Int<4>{}, Int<1>{})),
                             make_layout(make_shape(Int<1>{}, Int<8>{})));
  auto thr_g2s = g2s.get_slice(threadIdx.x);
  Tensor tAgA = thr_g2s.partition_S(gA);  // (CPY, CPY_M, CPY_K, k)
  Tensor tAsA = thr_g2s.partition_D(sA);  // (CPY, CPY_M, CPY_K, stage)
  Tensor tBgB = thr_g2s.partition_S(gB);
  Tensor tBsB = thr_g2s.partition_D(sB);

  // The MMA: 2x2 warps of m16n8k16, each warp 32x32 of C.
  TiledMMA mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, make_layout(make_shape(Int<2>{}, Int<2>{}, Int<1>{})),
                                Tile<_32, _32, _16>{});
  auto thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));  // (MMA, MMA_M, MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  // Shared -> registers with ldmatrix, laid out for the MMA's fragments.
  auto s2r_a = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);
  auto s2r_b = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);
  auto thr_s2r_a = s2r_a.get_slice(threadIdx.x);
  auto thr_s2r_b = s2r_b.get_slice(threadIdx.x);
  Tensor tXsA = thr_s2r_a.partition_S(sA);  // (CPY, CPY_M, CPY_K, stage)
  Tensor tXrA = thr_s2r_a.retile_D(tCrA);
  Tensor tXsB = thr_s2r_b.partition_S(sB);
  Tensor tXrB = thr_s2r_b.retile_D(tCrB);

  int k_tiles = size<3>(tAgA);
  copy(g2s, tAgA(_, _, _, 0), tAsA(_, _, _, 0));  // prologue: k-tile 0 into stage 0
  copy(g2s, tBgB(_, _, _, 0), tBsB(_, _, _, 0));
  cp_async_fence();
  for (int k = 0; k < k_tiles; ++k) {
    int stage = k & 1;
    if (k + 1 < k_tiles) {  // k-tile k + 1 into the other stage while k is computed
      copy(g2s, tAgA(_, _, _, k + 1), tAsA(_, _, _, stage ^ 1));
      copy(g2s, tBgB(_, _, _, k + 1), tBsB(_, _, _, stage ^ 1));
    }
    cp_async_fence();
    cp_async_wait<1>();  // all but the newest group: k-tile k has landed
    __syncthreads();
    CUTE_UNROLL
    for (int kk = 0; kk < size<2>(tCrA); ++kk) {
      copy(s2r_a, tXsA(_, _, kk, stage), tXrA(_, _, kk));
      copy(s2r_b, tXsB(_, _, kk, stage), tXrB(_, _, kk));
      gemm(mma, tCrA(_, _, kk), tCrB(_, _, kk), tCrC);
    }
    __syncthreads();  // stage is overwritten by the copy issued in the next iteration
  }
  copy(tCrC, tCgC);
}
