// CUTLASS 2.x implicit-GEMM conv2d weight gradient (wgrad): f16 output gradient dy (NHWC) * f16 activations x (NHWC)
// -> f32 filter gradient dw (KRSC), f32 accumulate: dw[k, r, s, c] = sum over n, p, q of dy[n, p, q, k]
// x[n, p - pad + r, q - pad + s, c] (GEMM M = K, N = R*S*C, K = N*P*Q), cutlass::conv::device::ImplicitGemmConvolution
// over DefaultConv2dWgrad with the optimized iterator, a 64x64x32 threadblock tile, 32x32x32 warp tile, mma.sync
// m16n8k16, 3 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include conv2d_wgrad.cu -o conv2d_wgrad.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS conv2d_wgrad.cu -o /tmp/d && /tmp/d
#include "cutlass/conv/conv2d_problem_size.h"
#include "cutlass/conv/conv3d_problem_size.h"
#include "cutlass/conv/device/implicit_gemm_convolution.h"
#include "cutlass/conv/kernel/default_conv2d_wgrad.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "dump_params.h"

using Conv2dWgradKernel = typename cutlass::conv::kernel::DefaultConv2dWgrad<
    cutlass::half_t, cutlass::layout::TensorNHWC, cutlass::half_t, cutlass::layout::TensorNHWC, float,
    cutlass::layout::TensorNHWC, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized>::Kernel;
using Conv = cutlass::conv::device::ImplicitGemmConvolution<Conv2dWgradKernel>;

void launch(Conv2dWgradKernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Conv2dWgradKernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  // x: 1 x 8 x 8 x 8 (NHWC), dw: 16 x 3 x 3 x 8 (KRSC), dy: 1 x 8 x 8 x 16, padding 1, stride 1, dilation 1
  cutlass::Tensor4DCoord in(1, 8, 8, 8), filt(16, 3, 3, 8), out(1, 8, 8, 16);
  cutlass::conv::Conv2dProblemSize problem(in, filt, out);
  using NHWC = cutlass::layout::TensorNHWC;
  Conv::Arguments args(problem, {(cutlass::half_t *)sentinel_ptr(0), NHWC::packed(out)},
                       {(cutlass::half_t *)sentinel_ptr(1), NHWC::packed(in)}, {(float *)sentinel_ptr(2), NHWC::packed(filt)},
                       {(float *)sentinel_ptr(3), NHWC::packed(filt)}, {1.0f, -1.0f});
  if (Conv::can_implement(args) != cutlass::Status::kSuccess) return 1;
  Conv2dWgradKernel::Params p(args, nullptr);
  Conv2dWgradKernel::ThreadblockSwizzle swz;
  dump_params("conv2d_wgrad", p, swz.get_grid_shape(p.grid_tiled_shape), dim3(32 * Conv::kWarpCount),
              int(sizeof(Conv2dWgradKernel::SharedStorage)), 16, 72, 64);
}
#endif
