// CUTLASS 2.x strided-batched tensor-op GEMM: for each batch b, D_b = alpha A_b B_b + beta C_b with f16 A
// (column-major) x f16 B (row-major) -> f32 C/D (row-major), f32 accumulate;
// cutlass::gemm::device::GemmBatched<..., OpClassTensorOp, Sm80> with a 64x64x32 threadblock tile, 32x32x32 warp
// tile, mma.sync 16x8x16 (ldmatrix .trans for the M- and N-major operands), 3 cp.async stages, 128 threads, the
// batch index in blockIdx.z (GemmBatchedIdentityThreadblockSwizzle).
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include gemm_batched.cu -o gemm_batched.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS gemm_batched.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm_batched.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::GemmBatched<
    cutlass::half_t, CM, cutlass::half_t, RM, float, RM, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle, 3>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 56, N = 64, K = 64, batches = 3;  // a partial tile in M, two k-tiles, three batches (blockIdx.z)
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(cutlass::half_t *)sentinel_ptr(0), M}, int64_t(M) * K,
                       {(cutlass::half_t *)sentinel_ptr(1), N}, int64_t(K) * N,
                       {(float *)sentinel_ptr(2), N}, int64_t(M) * N, {(float *)sentinel_ptr(3), N}, int64_t(M) * N,
                       {2.0f, -1.0f}, batches);
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, batches);
  Kernel::Params p{args.problem_size, tiled, args.ref_A.non_const_ref(), args.stride_A,
                   args.ref_B.non_const_ref(), args.stride_B, args.ref_C.non_const_ref(), args.stride_C,
                   args.ref_D, args.stride_D, args.epilogue, args.batch_count};
  char extra[32];
  std::snprintf(extra, sizeof extra, "\"batches\": %d", batches);
  dump_params("gemm_batched", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K, extra);
}
#endif
