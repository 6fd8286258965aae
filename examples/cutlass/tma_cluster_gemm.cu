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
#include <string>

#include "dump_params.h"
#include "dump_tensormaps.h"

int main() {
  int M = 256, N = 256, K = 128;  // four 128x128 tiles for two persistent CTAs: one per consumer warp group
  using L = int64_t;  // packed strides (M/N, K, batch L) of K-major A and B, M-major C and D
  GemmKernel::StrideA stride_a = make_stride(L(K), _1{}, L(M) * K);
  GemmKernel::StrideB stride_b = make_stride(L(K), _1{}, L(N) * K);
  GemmKernel::StrideC stride_c = make_stride(_1{}, L(M), L(M) * N);
  GemmKernel::StrideD stride_d = make_stride(_1{}, L(M), L(M) * N);
  cutlass::KernelHardwareInfo hw;
  hw.sm_count = 2;  // not queried (no GPU here): the persistent grid is one cluster of 2 CTAs, 2 tiles each
  GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                             {M, N, K, 1},
                             {(cutlass::half_t const *)sentinel_ptr(0), stride_a,
                              (cutlass::half_t const *)sentinel_ptr(1), stride_b},
                             {{}, (cutlass::half_t const *)sentinel_ptr(2), stride_c,
                              (cutlass::half_t *)sentinel_ptr(3), stride_d},
                             hw};
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.5f;
  if (!GemmKernel::can_implement(args) || GemmKernel::get_workspace_size(args) != 0) return 1;
  GemmKernel::Params p = GemmKernel::to_underlying_arguments(args, nullptr);
  std::string maps = "\"cluster\": [2, 1, 1], \"tensor_maps\": " + tensor_maps_json(&p, sizeof p);
  dump_params("tma_cluster_gemm", p, GemmKernel::get_grid_shape(p), GemmKernel::get_block_shape(),
              GemmKernel::SharedStorageSize, M, N, K, maps.c_str());
}
#endif
