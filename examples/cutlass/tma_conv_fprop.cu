// CUTLASS 3.x Hopper implicit-GEMM conv2d fprop: f16 activations (NHWC) * f16 filters (KRSC) -> f32 output (NHWC),
// f32 accumulate, cutlass::conv::collective::CollectiveBuilder for KernelImplicitTmaWarpSpecializedSm90 (the
// activation tile loaded by TMA in im2col mode, cp.async.bulk.tensor.4d ... .im2col, the filter tile by TMA tiled
// loads, a wgmma consumer warp group), a 128x64x64 tile, cluster 1x1x1, the no-smem warp-specialised epilogue.
// Compile-only in the corpus (no params dump: CUTLASS's host code for it makes its im2col tensor map with
// cuTensorMapEncodeIm2col, which examples/cutlass/dump_tensormaps.h does not record).
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_90a -std=c++17 -I$CUTLASS/include -I$CUTLASS/tools/util/include tma_conv_fprop.cu \
//     -o tma_conv_fprop.sm_90a.ptx
#include "cute/tensor.hpp"
#include "cutlass/kernel_hardware_info.hpp"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/conv/dispatch_policy.hpp"
#include "cutlass/conv/kernel/conv_universal.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"

using namespace cute;

constexpr auto kFprop = cutlass::conv::Operator::kFprop;
using TileShape = Shape<_128, _64, Shape<_64>>;
using ClusterShape = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    float, cutlass::layout::TensorNHWC, 4, float, cutlass::layout::TensorNHWC, 4,
    cutlass::epilogue::NoSmemWarpSpecialized>::CollectiveOp;

using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, kFprop, cutlass::half_t, cutlass::layout::TensorNHWC, 8,
    cutlass::half_t, cutlass::layout::TensorNHWC, 8, float, TileShape, ClusterShape,
    cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;

using ProblemShape = cutlass::conv::ConvProblemShape<kFprop, CollectiveMainloop::DispatchPolicy::NumSpatialDimensions>;
using ConvKernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, CollectiveMainloop, CollectiveEpilogue>;

void launch(ConvKernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::device_kernel<ConvKernel><<<grid, block, smem>>>(p);
}
