// CUTLASS 3.x Hopper GEMM with a fused epilogue (epilogue visitor tree): f16 A (row-major, K-major) x f16 B (column-major,
// K-major) -> f16 D (column-major), f32 accumulate, D = ReLU(alpha acc + beta C + bias[m]) with a per-row f16 bias,
// cutlass::epilogue::fusion::LinCombPerRowBiasEltAct through the TMA warp-specialised cooperative epilogue (C and D
// by TMA through shared memory), KernelTmaWarpSpecializedCooperative (persistent, two consumer warp groups), a
// 128x128x64 tile, cluster 1x1x1.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_90a -std=c++17 -I$CUTLASS/include tma_evt_gemm.cu -o tma_evt_gemm.sm_90a.ptx
// Params dump (host only, no GPU or libcuda needed: dump_tensormaps.h defines cuTensorMapEncodeTiled):
//   nvcc -O1 -arch=sm_90a -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
//     -Xcompiler -ftrivial-auto-var-init=zero \
//     tma_evt_gemm.cu -o /tmp/d && /tmp/d > tma_evt_gemm.params.json
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
using Fusion = cutlass::epilogue::fusion::LinCombPerRowBiasEltAct<cutlass::epilogue::thread::ReLu, cutlass::half_t,
                                                                  float, cutlass::half_t>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    cutlass::half_t, cutlass::layout::ColumnMajor, 8, cutlass::half_t, cutlass::layout::ColumnMajor, 8,
    cutlass::epilogue::TmaWarpSpecializedCooperative, Fusion>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::half_t, cutlass::layout::RowMajor, 8,
    cutlass::half_t, cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;

void launch(GemmKernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::device_kernel<GemmKernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
#include <string>

#include "dump_params.h"
#include "dump_tensormaps.h"

int main() {
  int M = 256, N = 256, K = 128;  // four 128x128 tiles for two persistent CTAs, two k-tiles each
  using L = int64_t;  // packed strides (M/N, K, batch L) of K-major A and B, M-major C and D
  GemmKernel::StrideA stride_a = make_stride(L(K), _1{}, L(M) * K);
  GemmKernel::StrideB stride_b = make_stride(L(K), _1{}, L(N) * K);
  GemmKernel::StrideC stride_c = make_stride(_1{}, L(M), L(M) * N);
  GemmKernel::StrideD stride_d = make_stride(_1{}, L(M), L(M) * N);
  cutlass::KernelHardwareInfo hw;
  hw.sm_count = 2;  // not queried: no GPU here; two SMs, so that each persistent CTA takes two tiles
  GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                             {M, N, K, 1},
                             {(cutlass::half_t const *)sentinel_ptr(0), stride_a,
                              (cutlass::half_t const *)sentinel_ptr(1), stride_b},
                             {{}, (cutlass::half_t const *)sentinel_ptr(2), stride_c, (cutlass::half_t *)sentinel_ptr(3),
                              stride_d},
                             hw};
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.5f;
  args.epilogue.thread.bias_ptr = (cutlass::half_t const *)sentinel_ptr(4);
  if (!GemmKernel::can_implement(args)) return 1;
  GemmKernel::Params p = GemmKernel::to_underlying_arguments(args, nullptr);
  std::string maps = "\"cluster\": [1, 1, 1], \"tensor_maps\": " + tensor_maps_json(&p, sizeof p);
  dump_params("tma_evt_gemm", p, GemmKernel::get_grid_shape(p), GemmKernel::get_block_shape(),
              GemmKernel::SharedStorageSize, M, N, K, maps.c_str());
}
#endif
