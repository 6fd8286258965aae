// CUTLASS 2.x structured-sparse (2:4) tensor-op GEMM: f16 A (row-major, M x K/2 compressed, with its metadata E)
// x f16 B (column-major) -> f32 C/D (row-major), f32 accumulate, cutlass::gemm::device::SparseGemm<...,
// OpClassTensorOp, Sm80> with a 64x64x64 threadblock tile, 32x32x64 warp tile, mma.sp m16n8k32, 3 cp.async
// stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include gemm_sparse.cu -o gemm_sparse.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS gemm_sparse.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm_sparse.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::SparseGemm<
    cutlass::half_t, RM, cutlass::half_t, CM, float, RM, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 64>, cutlass::gemm::GemmShape<32, 32, 64>, cutlass::gemm::GemmShape<16, 8, 32>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
#include <string>

int main() {
  int M = 64, N = 128, K = 192;  // two CTAs along N, three k-tiles
  int const kSparse = Gemm::kSparse, kPerE = Gemm::kElementsPerElementE;
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(cutlass::half_t *)sentinel_ptr(0), K / kSparse},
                       {(cutlass::half_t *)sentinel_ptr(1), K}, {(float *)sentinel_ptr(2), N},
                       {(float *)sentinel_ptr(3), N},
                       {(Gemm::ElementE *)sentinel_ptr(4), Gemm::LayoutE::packed({M, K / kSparse / kPerE})},
                       {1.0f, -1.0f});
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return 1;
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, 1);
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.ref_E.non_const_ref(), args.epilogue);
  std::string extra = "\"sparse\": " + std::to_string(kSparse) + ", \"elements_per_e\": " + std::to_string(kPerE) +
                      ", \"e_bytes\": " + std::to_string(sizeof(Gemm::ElementE));
  dump_params("gemm_sparse", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K, extra.c_str());
}
#endif
