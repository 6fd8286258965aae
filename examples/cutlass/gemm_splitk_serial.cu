// CUTLASS 2.x tensor-op GEMM with serial split-K: f16 A (row-major) x f16 B (column-major) -> f32 C/D (row-major),
// f32 accumulate, cutlass::gemm::device::Gemm<..., SplitKSerial = true>: the K extent split over blockIdx.z, the
// slices of one output tile ordered by a semaphore in global memory (ld.global.acquire.gpu spin, red/st release),
// each slice after the first adding its partial sum to D (read back as the source); 64x64x32 threadblock tile,
// 32x32x32 warp tile, mma.sync m16n8k16, 3 cp.async stages, 128 threads.
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include gemm_splitk_serial.cu -o gemm_splitk_serial.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS gemm_splitk_serial.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Gemm = cutlass::gemm::device::Gemm<
    cutlass::half_t, RM, cutlass::half_t, CM, float, RM, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 8, 8, /*SplitKSerial=*/true>;
using Kernel = Gemm::GemmKernel;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
int main() {
  int M = 64, N = 128, K = 256, slices = 4;  // two output tiles, each summed by four K slices of 64
  cutlass::gemm::GemmCoord problem(M, N, K);
  Gemm::Arguments args(problem, {(cutlass::half_t *)sentinel_ptr(0), K}, {(cutlass::half_t *)sentinel_ptr(1), K},
                       {(float *)sentinel_ptr(2), N}, {(float *)sentinel_ptr(3), N}, {1.0f, -1.0f}, slices);
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return 1;
  Gemm::ThreadblockSwizzle swz;
  auto tiled = swz.get_tiled_shape(problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN,
                                             Gemm::ThreadblockShape::kK}, slices);
  // the semaphores: one int per output tile, zeroed by the host (device::Gemm::initialize's cudaMemsetAsync)
  Kernel::Params p(args.problem_size, tiled, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
                   args.ref_C.non_const_ref(), args.ref_D, args.epilogue, (int *)sentinel_ptr(4));
  char extra[64];
  std::snprintf(extra, sizeof extra, "\"slices\": %d, \"semaphores\": %d", slices, int(tiled.m() * tiled.n()));
  dump_params("gemm_splitk_serial", p, swz.get_grid_shape(tiled), dim3(Kernel::kThreadCount),
              int(sizeof(Kernel::SharedStorage)), M, N, K, extra);
}
#endif
