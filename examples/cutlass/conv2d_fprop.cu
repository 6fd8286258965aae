// CUTLASS 2.x implicit-GEMM conv2d forward propagation: f16 activations (NHWC) * f16 filters (KRSC) -> f32 output
// (NHWC), f32 accumulate, cutlass::conv::device::ImplicitGemmConvolution over DefaultConv2dFprop with the optimized
// iterator, a 64x64x32 threadblock tile, 32x32x32 warp tile, mma.sync 16x8x16, 3 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include conv2d_fprop.cu -o conv2d_fprop.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS conv2d_fprop.cu -o /tmp/d && /tmp/d
#include "cutlass/conv/conv2d_problem_size.h"
#include "cutlass/conv/conv3d_problem_size.h"
#include "cutlass/conv/device/implicit_gemm_convolution.h"
#include "cutlass/conv/kernel/default_conv2d_fprop.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "dump_params.h"

using Conv2dFpropKernel = typename cutlass::conv::kernel::DefaultConv2dFprop<
    cutlass::half_t, cutlass::layout::TensorNHWC, cutlass::half_t, cutlass::layout::TensorNHWC, float,
    cutlass::layout::TensorNHWC, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized>::Kernel;
using Conv = cutlass::conv::device::ImplicitGemmConvolution<Conv2dFpropKernel>;

void launch(Conv2dFpropKernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Conv2dFpropKernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  // x: 1 x 6 x 6 x 8 (NHWC), w: 16 x 3 x 3 x 8 (KRSC), y: 1 x 6 x 6 x 16, padding 1, stride 1, dilation 1
  cutlass::Tensor4DCoord in(1, 6, 6, 8), filt(16, 3, 3, 8), out(1, 6, 6, 16);
  cutlass::conv::Conv2dProblemSize problem(in, filt, out);
  using NHWC = cutlass::layout::TensorNHWC;
  Conv::Arguments args(problem, {(cutlass::half_t *)sentinel_ptr(0), NHWC::packed(in)},
                       {(cutlass::half_t *)sentinel_ptr(1), NHWC::packed(filt)}, {(float *)sentinel_ptr(2), NHWC::packed(out)},
                       {(float *)sentinel_ptr(3), NHWC::packed(out)}, {1.0f, -1.0f});
  Conv2dFpropKernel::Params p(args, nullptr);
  Conv2dFpropKernel::ThreadblockSwizzle swz;
  dump_params("conv2d_fprop", p, swz.get_grid_shape(p.grid_tiled_shape), dim3(32 * Conv::kWarpCount),
              int(sizeof(Conv2dFpropKernel::SharedStorage)), 36, 16, 72);
}
#endif
