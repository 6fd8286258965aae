// Issue 19: CUDA C++ kernels that reach the rest of sm_90 through inline PTX, compiled by nvcc 13.0 with
//   nvcc -ptx -arch=sm_90a -O3 sm90_rest.cu -o sm90_rest.sm_90a.ptx
// (tests/test_isa_sm90_rest.py runs them on both of xcc's engines against numpy).
#include <cuda_fp16.h>
#include <cstdint>

// out = the transpose of each 8 x 8 tile of 16-bit elements (tile t at in + 64 t, row-major): one warp per tile,
// lane l holding elements 2(l%4), 2(l%4)+1 of row l/4 (ldmatrix's fragment), transposed with movmatrix.
extern "C" __global__ void movmatrix_tiles(const uint32_t* in, uint32_t* out, int ntiles) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= ntiles) return;
  uint32_t a = in[warp * 32 + lane], d;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a));
  out[warp * 32 + lane] = d;
}

// A cluster of two CTAs of 128 threads swaps 128 floats (and their sum) through distributed shared memory:
// each thread stores its value into the other CTA's buffer with st.async, each CTA sums its inputs into the
// other CTA's total with red.async; both complete transactions on the receiving CTA's mbarrier, which expects
// 128 * 4 + 128 * 4 bytes.  out[c * 129 + i] = what CTA c received (its partner's in[]), out[c * 129 + 128] its
// partner's sum.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_swap(const uint32_t* in, uint32_t* out) {
  __shared__ uint32_t buf[128];
  __shared__ uint32_t total;
  __shared__ alignas(8) uint64_t bar;
  unsigned rank, peer, t = threadIdx.x;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  peer = rank ^ 1;
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
  if (t == 0) {
    total = 0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(128 * 8) : "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
  uint32_t rbuf, rtot, rbar, v = in[blockIdx.x * 128 + t];
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbuf) : "r"((uint32_t)__cvta_generic_to_shared(&buf[t])), "r"(peer));
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rtot) : "r"((uint32_t)__cvta_generic_to_shared(&total)), "r"(peer));
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(b), "r"(peer));
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];"
               :: "r"(rbuf), "r"(v), "r"(rbar) : "memory");
  asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %1, [%2];"
               :: "r"(rtot), "r"(v), "r"(rbar) : "memory");
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(b) : "memory");
  out[rank * 129 + t] = buf[t];
  if (t == 0) out[rank * 129 + 128] = total;
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// D (16 x 8, f32, row-major) = A B for a 2:4 sparse A (16 x 16 f16) given compressed: ac (16 x 8 f16, row-major:
// the two non-zeros of each chunk of 4, in order) and meta (16 x 4 nibbles, i1 << 2 | i0 per chunk, row r's in
// meta[r]), and B (16 x 8 f16, column-major); one warp, mma.sp::ordered_metadata m16n8k16.
extern "C" __global__ void sparse_mma_16x8x16(const __half* ac, const uint16_t* meta, const __half* bt, float* d) {
  int l = threadIdx.x, g = l / 4, t = l % 4;
  const uint32_t* a32 = reinterpret_cast<const uint32_t*>(ac);
  const uint32_t* b32 = reinterpret_cast<const uint32_t*>(bt);
  uint32_t a0 = a32[g * 4 + t], a1 = a32[(g + 8) * 4 + t];           // row g / g + 8, chunk t
  uint32_t b0 = b32[g * 8 + t], b1 = b32[g * 8 + t + 4];             // column g, rows 2t.. / 2t + 8..
  uint32_t e = meta[g] | (uint32_t)meta[g + 8] << 16;               // every lane holds its rows' metadata
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, "
               "{%6,%7}, {%0,%1,%2,%3}, %8, 0;"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3) : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e));
  d[g * 8 + 2 * t] = c0; d[g * 8 + 2 * t + 1] = c1; d[(g + 8) * 8 + 2 * t] = c2; d[(g + 8) * 8 + 2 * t + 1] = c3;
}
