// CUTLASS 2.x f32 GEMM through tensor cores at f32 accuracy (3xTF32): f32 A (row-major) x f32 B (column-major) ->
// f32 C/D (row-major), each operand split into a tf32 "big" part and a tf32 "small" remainder and the product
// summed as big*big + big*small + small*big by mma.sync m16n8k8 .tf32 (arch::OpMultiplyAddFastF32); 64x64x16
// threadblock tile, 32x32x16 warp tile, 3 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include sgemm_3xtf32.cu -o sgemm_3xtf32.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS sgemm_3xtf32.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::Gemm<
    float, RM, float, CM, float, RM, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 16>, cutlass::gemm::GemmShape<32, 32, 16>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 4, 4, false, cutlass::arch::OpMultiplyAddFastF32>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 64, N = 64, K = 64;  // one tile, four k-tiles
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(float *)sentinel_ptr(0), K}, {(float *)sentinel_ptr(1), K},
                       {(float *)sentinel_ptr(2), N}, {(float *)sentinel_ptr(3), N}, {1.0f, 0.0f});
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return 1;
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, 1);
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.epilogue, nullptr);
  dump_params("sgemm_3xtf32", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K);
}
#endif
