// CUTLASS 2.x tf32 tensor-op GEMM: f32 A (row-major) x f32 B (column-major) -> f32 C/D (row-major), the inputs
// rounded to tf32 and multiplied by mma.sync m16n8k8 .tf32 (the default OpMultiplyAdd for f32 tensor ops), f32
// accumulate, cutlass::gemm::device::Gemm<float, ..., OpClassTensorOp, Sm80>, 64x64x32 threadblock tile, 32x32x32
// warp tile, 3 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include tf32gemm_tensorop.cu -o tf32gemm_tensorop.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS tf32gemm_tensorop.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::Gemm<
    float, RM, float, CM, float, RM, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 64, N = 96, K = 96;  // two CTAs along N (the second partial), three k-tiles
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(float *)sentinel_ptr(0), K}, {(float *)sentinel_ptr(1), K},
                       {(float *)sentinel_ptr(2), N}, {(float *)sentinel_ptr(3), N}, {2.0f, 1.0f});
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return 1;
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, 1);
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.epilogue, nullptr);
  dump_params("tf32gemm_tensorop", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K);
}
#endif
