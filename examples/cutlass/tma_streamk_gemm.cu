// CUTLASS 3.x Hopper GEMM with the stream-K tile scheduler: f16 A (row-major, K-major) x f16 B (column-major,
// K-major) -> f32 D (column-major), f32 accumulate, KernelTmaWarpSpecializedCooperative (persistent, two consumer
// warp groups) with cutlass::gemm::StreamKScheduler forced to the stream-K decomposition: three 128x128 output
// tiles of sixteen 64-deep k-tiles shared evenly by two CTAs, so that one tile is split between them and its partial
// sums meet in the workspace (reduction through global memory, ordered by barrier flags there); the TMA
// warp-specialised cooperative epilogue.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_90a -std=c++17 -I$CUTLASS/include tma_streamk_gemm.cu -o tma_streamk_gemm.sm_90a.ptx
// Params dump (host only, no GPU or libcuda needed: dump_tensormaps.h defines cuTensorMapEncodeTiled):
//   nvcc -O1 -arch=sm_90a -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
//     -Xcompiler -ftrivial-auto-var-init=zero \
//     tma_streamk_gemm.cu -o /tmp/d && /tmp/d > tma_streamk_gemm.params.json
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

using namespace cute;

using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    float, cutlass::layout::ColumnMajor, 4, float, cutlass::layout::ColumnMajor, 4,
    cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::half_t, cutlass::layout::RowMajor, 8,
    cutlass::half_t, cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue,
                                                        cutlass::gemm::StreamKScheduler>;

void launch(GemmKernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::device_kernel<GemmKernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
#include "dump_sm90_gemm.h"

int main() {
  int M = 384, N = 128, K = 1024;  // three output tiles of sixteen k-tiles for two persistent CTAs
  auto s = packed_strides<GemmKernel>(M, N, K);
  GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                             {M, N, K, 1},
                             {(cutlass::half_t const *)sentinel_ptr(0), s.a,
                              (cutlass::half_t const *)sentinel_ptr(1), s.b},
                             {{1.0f, 0.5f}, (float const *)sentinel_ptr(2), s.c, (float *)sentinel_ptr(3), s.d},
                             sm_count(2)};  // two persistent CTAs
  args.scheduler.decomposition_mode = cutlass::gemm::kernel::detail::DecompositionMode::StreamK;
  size_t workspace = GemmKernel::get_workspace_size(args);  // zeroed by the test, as initialize_workspace does
  return dump_sm90_gemm<GemmKernel>("tma_streamk_gemm", args, M, N, K, "[1, 1, 1]", sentinel_ptr(4),
                                    ", \"workspace\": " + std::to_string(workspace));
}
#endif
