// CUTLASS 2.x grouped GEMM: a list of independent problems (each its own M, N, K, pointers and leading
// dimensions, read from device arrays) D_i = alpha A_i B_i + beta C_i, f16 A (row-major) x f16 B (column-major)
// -> f32 C/D (row-major), f32 accumulate; cutlass::gemm::device::GemmGrouped over DefaultGemmGrouped with
// OpClassTensorOp/Sm80, a 64x64x32 tile, 32x32x32 warp tile, mma.sync 16x8x16, 3 cp.async stages, 128 threads.
// A fixed number of CTAs walks all problems' tiles (GemmGroupedProblemVisitor, GroupScheduleMode::kDeviceOnly:
// the schedule is computed on the device, by warp-wide prefix sums over the problem sizes).
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_80 -std=c++17 -I$CUTLASS/include gemm_grouped.cu -o gemm_grouped.sm_80.ptx
// Params dump (host only, no GPU needed):
//   nvcc -O1 -arch=sm_80 -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS gemm_grouped.cu -o /tmp/d && /tmp/d
#include "cutlass/gemm/device/gemm_grouped.h"
#include "cutlass/gemm/kernel/default_gemm_grouped.h"
#include "dump_params.h"

using RM = cutlass::layout::RowMajor;
using CM = cutlass::layout::ColumnMajor;
using Kernel = cutlass::gemm::kernel::DefaultGemmGrouped<
    cutlass::half_t, RM, cutlass::ComplexTransform::kNone, 8, cutlass::half_t, CM, cutlass::ComplexTransform::kNone, 8,
    float, RM, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, 3,
    cutlass::gemm::kernel::GroupScheduleMode::kDeviceOnly>::GemmKernel;
using Gemm = cutlass::gemm::device::GemmGrouped<Kernel>;

void launch(Kernel::Params const &p, dim3 grid, dim3 block, int smem) {
  cutlass::Kernel<Kernel><<<grid, block, smem>>>(p);
}

#ifdef DUMP_PARAMS
#include <new>
#include <string>

int main() {
  // Three problems, 1 + 2 + 2 tiles of 64x64, partial tiles in M and N, for 2 CTAs that loop over them.
  // Device arrays (sentinels): 0 problem sizes (GemmCoord: m, n, k as int32), 1-4 pointers to each problem's
  // A, B, C, D, 5-8 leading dimensions (int64) of A, B, C, D.
  cutlass::gemm::GemmCoord problems[3] = {{64, 64, 64}, {96, 40, 48}, {32, 128, 96}};
  int count = 3, ctas = 2;
  Kernel::Arguments args((cutlass::gemm::GemmCoord *)sentinel_ptr(0), count, ctas, {1.0f, -0.5f},
                         (cutlass::half_t **)sentinel_ptr(1), (cutlass::half_t **)sentinel_ptr(2),
                         (float **)sentinel_ptr(3), (float **)sentinel_ptr(4), (int64_t *)sentinel_ptr(5),
                         (int64_t *)sentinel_ptr(6), (int64_t *)sentinel_ptr(7), (int64_t *)sentinel_ptr(8),
                         problems);
  alignas(Kernel::Params) static unsigned char storage[sizeof(Kernel::Params)];  // zeros: padding stays zero
  Kernel::Params &p = *new (storage) Kernel::Params(args);
  std::string extra = "\"problems\": [";
  for (int i = 0; i < count; ++i)
    extra += std::string(i ? ", [" : "[") + std::to_string(problems[i].m()) + ", " +
             std::to_string(problems[i].n()) + ", " + std::to_string(problems[i].k()) + "]";
  extra += "]";
  dump_params("gemm_grouped", p, dim3(ctas), dim3(Kernel::kThreadCount), int(sizeof(Kernel::SharedStorage)), 0, 0,
              0, extra.c_str());
}
#endif
