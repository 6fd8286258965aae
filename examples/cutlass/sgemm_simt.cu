// CUTLASS 2.x SIMT SGEMM: cutlass::gemm::device::Gemm<float, RowMajor x3, OpClassSimt, Sm80> with its default
// configuration (128x128x8 threadblock tile, 32x64x8 warp tile, 2 stages, 256 threads).
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include sgemm_simt.cu -o sgemm_simt.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS sgemm_simt.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using Gemm = cutlass::gemm::device::Gemm<float, RM, float, RM, float, RM, float, cutlass::arch::OpClassSimt,
                                         cutlass::arch::Sm80>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 40, N = 48, K = 20;  // partial tiles: every predicate used
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(float *)sentinel_ptr(0), K}, {(float *)sentinel_ptr(1), N},
                       {(float *)sentinel_ptr(2), N}, {(float *)sentinel_ptr(3), N}, {1.5f, -0.5f});
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, 1);
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.epilogue, nullptr);
  dump_params("sgemm_simt", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount), int(sizeof(Kernel::SharedStorage)),
              M, N, K);
}
#endif
