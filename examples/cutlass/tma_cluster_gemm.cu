// CUTLASS 3.x Hopper GEMM on a 2x1 thread-block cluster with TMA multicast: f16 A (row-major, K-major) x f16 B
// (column-major, K-major) -> f16 D (column-major), f32 accumulate, D = alpha acc + beta C with f16 C, built with
// CollectiveBuilder for KernelTmaWarpSpecializedPingpong (a TMA producer warp group and two wgmma consumer warp
// groups taking alternate 128x128x64 tiles, ordered by named barriers; persistent: PersistentTileSchedulerSm90),
// ClusterShape 2x1x1 (each CTA of the pair loads half of the shared B tile and multicasts it to both; the
// pipeline's empty barriers are released across the cluster), and the TmaWarpSpecialized epilogue (C loaded
// and D stored by TMA through shared memory).
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_90a -std=c++17 -I$CUTLASS/include tma_cluster_gemm.cu -o tma_cluster_gemm.sm_90a.ptx
// Params dump (host only, no GPU or libcuda needed: dump_tensormaps.h defines cuTensorMapEncodeTiled; the
// zero-initialised locals keep stack leftovers out of the struct's padding, which CUTLASS's copies carry along):
//   nvcc -O1 -arch=sm_90a -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
//     -Xcompiler -ftrivial-auto-var-init=zero \
//     tma_cluster_gemm.cu -o /tmp/d && /tmp/d > tma_cluster_gemm.params.json
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

using namespace cute;

using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_2, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    cutlass::half_t, cutlass::layout::ColumnMajor, 8, cutlass::half_t, cutlass::layout::ColumnMajor, 8,
    cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::half_t, cutlass::layout::RowMajor, 8,
    cutlass::half_t, cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;

void launch(GemmKernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::device_kernel<GemmKernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
#include "dump_sm90_gemm.h"

int main() {
  int M = 256, N = 256, K = 128;  // four 128x128 tiles for two persistent CTAs: one per consumer warp group
  auto s = packed_strides<GemmKernel>(M, N, K);
  GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                             {M, N, K, 1},
                             {(cutlass::half_t const *)sentinel_ptr(0), s.a,
                              (cutlass::half_t const *)sentinel_ptr(1), s.b},
                             {{}, (cutlass::half_t const *)sentinel_ptr(2), s.c,
                              (cutlass::half_t *)sentinel_ptr(3), s.d},
                             sm_count(2)};  // the persistent grid is one cluster of 2 CTAs, 2 tiles each
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.5f;
  if (GemmKernel::get_workspace_size(args) != 0) return 1;
  return dump_sm90_gemm<GemmKernel>("tma_cluster_gemm", args, M, N, K, "[2, 1, 1]");
}
#endif
