// CUTLASS 2.x f64 tensor-op GEMM (DMMA): f64 A (row-major) x f64 B (column-major) -> f64 C/D (row-major),
// cutlass::gemm::device::Gemm<double, ..., OpClassTensorOp, Sm80> with a 32x32x16 threadblock tile, 16x16x16 warp
// tile, mma.sync m8n8k4 .f64, 4 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include dgemm_tensorop.cu -o dgemm_tensorop.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS dgemm_tensorop.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::Gemm<
    double, RM, double, CM, double, RM, double, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<32, 32, 16>, cutlass::gemm::GemmShape<16, 16, 16>, cutlass::gemm::GemmShape<8, 8, 4>,
    cutlass::epilogue::thread::LinearCombination<double, 1, double, double>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 4>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 48, N = 64, K = 80;  // a partial tile in M, five k-tiles
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(double *)sentinel_ptr(0), K}, {(double *)sentinel_ptr(1), K},
                       {(double *)sentinel_ptr(2), N}, {(double *)sentinel_ptr(3), N}, {1.5, -0.25});
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return 1;
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, 1);
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.epilogue, nullptr);
  dump_params("dgemm_tensorop", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K);
}
#endif
