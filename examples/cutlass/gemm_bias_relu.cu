// CUTLASS 2.x tensor-op GEMM with a fused bias + ReLU epilogue: f16 A (row-major) x f16 B (column-major) -> f32 D
// (row-major), f32 accumulate, D = max(alpha acc + beta bias, 0) by cutlass::epilogue::thread::LinearCombinationRelu;
// the bias is a length-N row vector read as the C operand with leading dimension 0 (every row of C is the bias).
// cutlass::gemm::device::Gemm<..., OpClassTensorOp, Sm80>, 64x64x32 threadblock tile, 32x32x32 warp tile,
// mma.sync m16n8k16, 3 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include gemm_bias_relu.cu -o gemm_bias_relu.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS gemm_bias_relu.cu -o /tmp/d && /tmp/d
#include "cutlass/epilogue/thread/linear_combination_relu.h"
#include "cutlass/gemm/device/gemm.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::Gemm<
    cutlass::half_t, RM, cutlass::half_t, CM, float, RM, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombinationRelu<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 96, N = 64, K = 64;  // two threadblock tiles along M (the second partial), two k-tiles
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(cutlass::half_t *)sentinel_ptr(0), K}, {(cutlass::half_t *)sentinel_ptr(1), K},
                       {(float *)sentinel_ptr(2), 0}, {(float *)sentinel_ptr(3), N}, {1.0f, 1.0f});
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, 1);
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.epilogue, nullptr);
  dump_params("gemm_bias_relu", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K);
}
#endif
