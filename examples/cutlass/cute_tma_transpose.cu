// CuTe SM90 TMA tile copy: a tiled transpose through shared memory.  Each CTA loads a 32x64 f32 tile of a
// row-major M x N matrix with one TMA load (SM90_TMA_LOAD through an mbarrier with an expected transaction
// count), writes out = 2 in + 1 into a column-major smem tile, and stores that tile with one TMA store
// (SM90_TMA_STORE, cp.async.bulk commit/wait) into a column-major M x N matrix; partial tiles at the edges are
// zero-filled on load and clipped on store by the tensor maps.  Both copies travel in one __grid_constant__
// struct parameter (its two CUtensorMaps are made on the host by cute::make_tma_copy).
// CUTLASS 4.2.0 (headers of the nvidia-cutlass 4.2.0.0 wheel, cutlass_library/source/include), nvcc 13.0:
//   nvcc -ptx -O3 -arch=sm_90a -std=c++17 -I$CUTLASS/include cute_tma_transpose.cu -o cute_tma_transpose.sm_90a.ptx
// Params dump (host only, no GPU or libcuda needed: dump_tensormaps.h defines cuTensorMapEncodeTiled):
//   nvcc -O1 -arch=sm_90a -std=c++17 -I$CUTLASS/include -DDUMP_PARAMS -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
//     -Xcompiler -ftrivial-auto-var-init=zero \
//     cute_tma_transpose.cu -o /tmp/d && /tmp/d > cute_tma_transpose.params.json
#include "cute/tensor.hpp"
#include "cute/arch/copy_sm90_desc.hpp"
#include "cute/arch/copy_sm90_tma.hpp"
#include "cute/atom/copy_traits_sm90_tma.hpp"

using namespace cute;

using TileMN = Shape<_32, _64>;
using SmemIn = Layout<TileMN, Stride<_64, _1>>;   // row-major, as the source
using SmemOut = Layout<TileMN, Stride<_1, _32>>;  // column-major, as the destination

template <class TmaLoad, class TmaStore>
struct TmaParams {
  TmaLoad load;
  TmaStore store;
  int M, N;
};

inline auto make_params(float const *in, float *out, int M, int N) {
  Tensor g_in = make_tensor(make_gmem_ptr(in), make_layout(make_shape(M, N), make_stride(N, Int<1>{})));
  Tensor g_out = make_tensor(make_gmem_ptr(out), make_layout(make_shape(M, N), make_stride(Int<1>{}, M)));
  auto load = make_tma_copy(SM90_TMA_LOAD{}, g_in, SmemIn{});
  auto store = make_tma_copy(SM90_TMA_STORE{}, g_out, SmemOut{});
  return TmaParams<decltype(load), decltype(store)>{load, store, M, N};
}
using Params = decltype(make_params(nullptr, nullptr, 0, 0));

extern "C" __global__ void cute_tma_transpose(__grid_constant__ Params const p) {
  __shared__ alignas(128) float s_in[cosize_v<SmemIn>];
  __shared__ alignas(128) float s_out[cosize_v<SmemOut>];
  __shared__ alignas(8) uint64_t bar;
  auto coord = make_coord(blockIdx.x, blockIdx.y);
  Tensor g_in = local_tile(p.load.get_tma_tensor(make_shape(p.M, p.N)), TileMN{}, coord);
  Tensor g_out = local_tile(p.store.get_tma_tensor(make_shape(p.M, p.N)), TileMN{}, coord);
  Tensor sm_in = make_tensor(make_smem_ptr(s_in), SmemIn{});
  Tensor sm_out = make_tensor(make_smem_ptr(s_out), SmemOut{});
  auto ld = p.load.get_slice(Int<0>{});
  auto st = p.store.get_slice(Int<0>{});
  if (threadIdx.x == 0) initialize_barrier(bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    set_barrier_transaction_bytes(bar, sizeof(s_in));
    copy(p.load.with(bar), ld.partition_S(g_in), ld.partition_D(sm_in));
  }
  wait_barrier(bar, 0);
  for (int i = threadIdx.x; i < size(sm_in); i += blockDim.x) sm_out(i) = 2.0f * sm_in(i) + 1.0f;
  tma_store_fence();
  __syncthreads();
  if (threadIdx.x == 0) {
    copy(p.store, st.partition_S(sm_out), st.partition_D(g_out));
    tma_store_arrive();
    tma_store_wait<0>();
  }
}

#ifdef DUMP_PARAMS
#include <string>

#include "dump_params.h"
#include "dump_tensormaps.h"

int main() {
  int M = 48, N = 96;  // 2 x 2 tiles of 32 x 64, the last ones partial in both dimensions
  Params p = make_params((float const *)sentinel_ptr(0), (float *)sentinel_ptr(1), M, N);
  std::string maps = "\"tensor_maps\": " + tensor_maps_json(&p, sizeof p);
  dump_params("cute_tma_transpose", p, dim3((M + 31) / 32, (N + 63) / 64, 1), dim3(128), 0, M, N, 0, maps.c_str());
}
#endif
