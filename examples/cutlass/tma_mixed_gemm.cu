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
#include <string>

#include "dump_params.h"
#include "dump_tensormaps.h"

int main() {
  int M = 128, N = 256, K = 128;  // two CTAs along N, two k-tiles each
  using L = int64_t;  // packed strides (M/N, K, batch L) of K-major A and B, M-major C and D
  GemmKernel::StrideA stride_a = make_stride(L(K), _1{}, L(M) * K);
  GemmKernel::StrideB stride_b = make_stride(L(K), _1{}, L(N) * K);
  GemmKernel::StrideC stride_c = make_stride(_1{}, L(M), L(M) * N);
  GemmKernel::StrideD stride_d = make_stride(_1{}, L(M), L(M) * N);
  cutlass::KernelHardwareInfo hw;
  hw.sm_count = 132;  // not queried: no GPU here (the kernel's grid does not depend on it)
  GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                             {M, N, K, 1},
                             {(int8_t const *)sentinel_ptr(0), stride_a, (cutlass::half_t const *)sentinel_ptr(1), stride_b},
                             {{1.0f, 0.5f}, (float const *)sentinel_ptr(2), stride_c, (float *)sentinel_ptr(3), stride_d},
                             hw};
  if (!GemmKernel::can_implement(args)) return 1;
  GemmKernel::Params p = GemmKernel::to_underlying_arguments(args, nullptr);
  std::string maps = "\"cluster\": [1, 1, 1], \"tensor_maps\": " + tensor_maps_json(&p, sizeof p);
  dump_params("tma_mixed_gemm", p, GemmKernel::get_grid_shape(p), GemmKernel::get_block_shape(),
              GemmKernel::SharedStorageSize, M, N, K, maps.c_str());
}
#endif
