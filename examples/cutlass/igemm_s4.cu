// CUTLASS 2.x int4 tensor-op GEMM: s4 A (row-major) x s4 B (column-major) -> s32 C/D (row-major), s32 accumulate,
// cutlass::gemm::device::Gemm<cutlass::int4b_t, ..., OpClassTensorOp, Sm80> with a 64x64x128 threadblock tile,
// 32x32x128 warp tile, mma.sync m16n8k64 .s4 (OpMultiplyAddSaturate: .satfinite), 3 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include igemm_s4.cu -o igemm_s4.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS igemm_s4.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::Gemm<
    cutlass::int4b_t, RM, cutlass::int4b_t, CM, int32_t, RM, int32_t, cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 128>, cutlass::gemm::GemmShape<32, 32, 128>, cutlass::gemm::GemmShape<16, 8, 64>,
    cutlass::epilogue::thread::LinearCombination<int32_t, 4, int32_t, int32_t>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 64, N = 64, K = 384;  // one tile, three k-tiles
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(cutlass::int4b_t *)sentinel_ptr(0), K}, {(cutlass::int4b_t *)sentinel_ptr(1), K},
                       {(int32_t *)sentinel_ptr(2), N}, {(int32_t *)sentinel_ptr(3), N}, {1, 1});
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return 1;
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, 1);
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.epilogue, nullptr);
  dump_params("igemm_s4", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K);
}
#endif
