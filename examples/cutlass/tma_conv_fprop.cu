// CUTLASS 3.x Hopper implicit-GEMM conv2d fprop: f16 activations (NHWC) * f16 filters (KRSC) -> f32 output (NHWC),
// f32 accumulate, cutlass::conv::collective::CollectiveBuilder for KernelImplicitTmaWarpSpecializedSm90 (the
// activation tile loaded by TMA in im2col mode, cp.async.bulk.tensor.4d ... .im2col, the filter tile by TMA tiled
// loads, a wgmma consumer warp group), a 128x64x64 tile, cluster 1x1x1, the no-smem warp-specialised epilogue.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_90a -std=c++17 -I$CUTLASS/include -I$CUTLASS/tools/util/include tma_conv_fprop.cu \
//     -o tma_conv_fprop.sm_90a.ptx
// Params dump (host only, as tma_ws_gemm.cu's: dump_tensormaps.h defines cuTensorMapEncodeTiled, for the filter
// map, and cuTensorMapEncodeIm2col, for the activation map):
//   nvcc -O1 -arch=sm_90a -std=c++17 -I$CUTLASS/include -I$CUTLASS/tools/util/include -DDUMP_PARAMS \
//     -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
//     -Xcompiler -ftrivial-auto-var-init=zero \
//     tma_conv_fprop.cu -o /tmp/d && /tmp/d > tma_conv_fprop.params.json
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

#ifdef DUMP_PARAMS
#include <string>

#include "dump_params.h"
#include "dump_tensormaps.h"

// Output y (NPQK) = 1 * conv(x (NHWC), w (KRSC)) + 0.5 * z (NPQK), cross-correlation, a 3x3 filter, padding 1,
// stride 1, no dilation: N = 2 images of 6 x 6 pixels, C = 64 channels (one 64-deep k-block per filter tap), K = 64
// filters: a GEMM of M = N P Q = 72 (one partial 128-row tile, its im2col column walking from the first image into
// the second) by N = K = 64 by K = C R S = 576 (nine k-tiles), one CTA.
int main() {
  const int n = 2, h = 6, w = 6, c = 64, k = 64, r = 3, s = 3, pad = 1, stride = 1, dilation = 1;
  ProblemShape problem(cutlass::conv::Mode::kCrossCorrelation, {n, h, w, c}, {k, r, s, c}, {pad, pad}, {pad, pad},
                       {stride, stride}, {dilation, dilation}, 1);
  ConvKernel::StrideC stride_c{};
  ConvKernel::StrideD stride_d{};
  cute::for_each(cute::make_seq<cute::rank<0>(ConvKernel::StrideC{})>{}, [&](auto i) {
    cute::get<0, i>(stride_c) = problem.stride_C[ProblemShape::RankT - 2 - i];
    cute::get<0, i>(stride_d) = problem.stride_C[ProblemShape::RankT - 2 - i];
  });
  ConvKernel::Arguments args{problem,
                             {(cutlass::half_t const *)sentinel_ptr(0), (cutlass::half_t const *)sentinel_ptr(1)},
                             {{1.0f, 0.5f}, (float const *)sentinel_ptr(2), stride_c, (float *)sentinel_ptr(3),
                              stride_d}};
  if (!ConvKernel::can_implement(args)) return 1;
  ConvKernel::Params p = ConvKernel::to_underlying_arguments(args, nullptr);
  int P = problem.shape_C[1], Q = problem.shape_C[2];
  std::string members = "\"cluster\": [1, 1, 1], \"conv\": {\"n\": " + std::to_string(n) + ", \"h\": " +
                        std::to_string(h) + ", \"w\": " + std::to_string(w) + ", \"c\": " + std::to_string(c) +
                        ", \"k\": " + std::to_string(k) + ", \"r\": " + std::to_string(r) + ", \"s\": " +
                        std::to_string(s) + ", \"pad\": " + std::to_string(pad) + ", \"stride\": " +
                        std::to_string(stride) + ", \"dilation\": " + std::to_string(dilation) + ", \"p\": " +
                        std::to_string(P) + ", \"q\": " + std::to_string(Q) + "}, \"tensor_maps\": " +
                        tensor_maps_json(&p, sizeof p);
  dump_params("tma_conv_fprop", p, ConvKernel::get_grid_shape(p), ConvKernel::get_block_shape(),
              ConvKernel::SharedStorageSize, n * P * Q, k, c * r * s, members.c_str());
  return 0;
}
#endif
