// CUTLASS 3.x Hopper mixed-input GEMM: s8 A (row-major, K-major) x f16 B (column-major, K-major) -> f32 D
// (column-major), f32 accumulate, CollectiveBuilder's mixed-input mainloop (DirectConvert: A loaded by TMA, converted
// s8 -> f16 in registers and fed to wgmma from registers, wgmma.mma_async ... .f16.f16 with A in registers, the
// operands swapped so that the narrow one is A) for KernelTmaWarpSpecialized, a 128x128x64 tile, cluster 1x1x1, the
// no-smem warp-specialised epilogue (D = alpha acc + beta C, plain stores).
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_90a -std=c++17 -I$CUTLASS/include tma_mixed_gemm.cu -o tma_mixed_gemm.sm_90a.ptx
// Params dump (host only, no GPU or libcuda needed: dump_tensormaps.h defines cuTensorMapEncodeTiled):
//   nvcc -O1 -arch=sm_90a -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
//     -Xcompiler -ftrivial-auto-var-init=zero \
//     tma_mixed_gemm.cu -o /tmp/d && /tmp/d > tma_mixed_gemm.params.json
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

using namespace cute;

using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    float, cutlass::layout::ColumnMajor, 4, float, cutlass::layout::ColumnMajor, 4,
    cutlass::epilogue::NoSmemWarpSpecialized>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, int8_t, cutlass::layout::RowMajor, 16,
    cutlass::half_t, cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecialized>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;

void launch(GemmKernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::device_kernel<GemmKernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
#include "dump_sm90_gemm.h"

int main() {
  int M = 128, N = 256, K = 128;  // two CTAs along N, two k-tiles each
  auto s = packed_strides<GemmKernel>(M, N, K);
  GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                             {M, N, K, 1},
                             {(int8_t const *)sentinel_ptr(0), s.a, (cutlass::half_t const *)sentinel_ptr(1), s.b},
                             {{1.0f, 0.5f}, (float const *)sentinel_ptr(2), s.c, (float *)sentinel_ptr(3), s.d},
                             sm_count(132)};  // the kernel's grid does not depend on it
  return dump_sm90_gemm<GemmKernel>("tma_mixed_gemm", args, M, N, K);
}
#endif
