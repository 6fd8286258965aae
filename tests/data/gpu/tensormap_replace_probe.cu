// tensormap.replace / movmatrix probe (issue 19, xcc.ir.lower_tensormap): build with
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o probe tensormap_replace_probe.cu
// and run on an sm_90 GPU; tensormap_replace_probe.h200.txt is its output on an NVIDIA H200.
// Cases: base (the map as encoded), bytes_stride (retargeted to B with a 320-byte stride), div16_stride (stride 20:
// the low 4 bits are dropped, so 16 bytes), rank0 (rank <- 0: 1-d), elemtype9 (.f64), fill1 (NaN fill).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>

struct P { uint64_t newaddr; uint32_t mode, gd0, gd1, box0, box1, tx, c0, c1; uint64_t gs; uint32_t rankv, et; };

__global__ void probe(const uint8_t* gsrc, uint8_t* gdst, float* out, P p, int* flag) {
  __shared__ alignas(128) uint8_t tm[128];
  __shared__ alignas(1024) uint8_t tile[8192];
  __shared__ alignas(8) uint64_t bar;
  int lane = threadIdx.x;
  for (int i = lane; i < 8192 / 4; i += 32) ((uint32_t*)tile)[i] = 0xDEADBEEF;
  if (lane < 16) ((uint64_t*)tm)[lane] = ((const uint64_t*)gsrc)[lane];
  __syncwarp();
  uint32_t s = (uint32_t)__cvta_generic_to_shared(tm);
  if (lane == 0 && p.mode >= 1) {
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" :: "r"(s), "l"(p.newaddr) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %1;" :: "r"(s), "r"(p.gd0) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" :: "r"(s), "r"(p.gd1) : "memory");
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" :: "r"(s), "l"(p.gs) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %1;" :: "r"(s), "r"(p.box0) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %1;" :: "r"(s), "r"(p.box1) : "memory");
  }
  if (lane == 0 && p.mode == 3)
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], %1;" :: "r"(s), "r"(p.rankv) : "memory");
  if (lane == 0 && p.mode == 4)
    asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 9;" :: "r"(s) : "memory");
  if (lane == 0 && p.mode == 5)
    asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 1;" :: "r"(s) : "memory");
  __syncwarp();
  asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
               :: "l"(gdst), "r"(s) : "memory");
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(gdst) : "memory");
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar), t = (uint32_t)__cvta_generic_to_shared(tile);
  if (lane == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(p.tx));
    if (p.mode == 3)
      asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                   :: "r"(t), "l"(gdst), "r"(p.c0), "r"(b) : "memory");
    else
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   :: "r"(t), "l"(gdst), "r"(p.c0), "r"(p.c1), "r"(b) : "memory");
  }
  __syncwarp();
  uint32_t ok = 0;
  for (int it = 0; it < 2000000 && !ok; ++it)
    asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], 0; selp.u32 %0, 1, 0, q; }" : "=r"(ok) : "r"(b));
  if (!ok && lane == 0) *flag = 1;
  for (int i = lane; i < 2048; i += 32) out[i] = ((float*)tile)[i];
}

__global__ void mm(const uint32_t* in, uint32_t* out) {
  uint32_t a = in[threadIdx.x], d;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a));
  out[threadIdx.x] = d;
}

#define CK(x) do { CUresult r_ = (x); if (r_) { printf("ERR %d at %s\n", (int)r_, #x); return 1; } } while (0)

int main() {
  cudaFree(0);
  typedef CUresult (*EncFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                            const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                            CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  void* fn = nullptr; cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) || !fn) { printf("no entry\n"); return 1; }
  EncFn cuTensorMapEncodeTiled = (EncFn)fn;
  std::vector<float> A(64 * 64), B(48 * 80);
  for (int r = 0; r < 64; ++r) for (int c = 0; c < 64; ++c) A[r * 64 + c] = r * 1000 + c;
  for (int r = 0; r < 48; ++r) for (int c = 0; c < 80; ++c) B[r * 80 + c] = 100000 + r * 1000 + c;
  float *dA, *dB, *dout; uint8_t *gsrc, *gdst; int* flag;
  cudaMalloc(&dA, A.size() * 4); cudaMalloc(&dB, B.size() * 4); cudaMalloc(&dout, 8192); cudaMalloc(&gsrc, 128);
  cudaMalloc(&gdst, 128); cudaMalloc(&flag, 4);
  cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice); cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice);
  CUtensorMap m; cuuint64_t dims[2] = {64, 64}, strides[1] = {256}; cuuint32_t box[2] = {16, 8}, es[2] = {1, 1};
  CK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dA, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  cudaMemcpy(gsrc, &m, 128, cudaMemcpyHostToDevice);
  struct Case { const char* name; P p; } cases[] = {
    {"base", {0, 0, 0, 0, 0, 0, 16 * 8 * 4, 4, 2, 0, 0, 0}},
    {"bytes_stride", {(uint64_t)dB, 1, 80, 48, 8, 4, 8 * 4 * 4, 76, 46, 320, 0, 0}},
    {"div16_stride", {(uint64_t)dB, 2, 80, 48, 8, 4, 8 * 4 * 4, 76, 46, 20, 0, 0}},
    {"rank0", {(uint64_t)dB, 3, 80, 48, 8, 4, 8 * 4, 76, 0, 320, 0, 0}},
    {"elemtype9", {(uint64_t)dB, 4, 80, 48, 8, 4, 8 * 4 * 8, 4, 2, 320, 0, 9}},
    {"fill1", {(uint64_t)dB, 5, 80, 48, 8, 4, 8 * 4 * 4, 76, 46, 320, 0, 0}},
  };
  for (auto& c : cases) {
    cudaMemset(flag, 0, 4); cudaMemset(dout, 0, 8192);
    probe<<<1, 32>>>(gsrc, gdst, dout, c.p, flag);
    cudaError_t e = cudaDeviceSynchronize();
    int f = 0; cudaMemcpy(&f, flag, 4, cudaMemcpyDeviceToHost);
    std::vector<uint32_t> o(2048); cudaMemcpy(o.data(), dout, 8192, cudaMemcpyDeviceToHost);
    printf("CASE %s err=%d timeout=%d\n", c.name, (int)e, f);
    if (e) { printf("  %s\n", cudaGetErrorString(e)); break; }
    for (int i = 0; i < 80; ++i) { float v; memcpy(&v, &o[i], 4); printf("%08x(%g) ", o[i], v); if (i % 8 == 7) printf("\n"); }
    uint8_t raw[128]; cudaMemcpy(raw, gdst, 128, cudaMemcpyDeviceToHost);
    printf("  map:"); for (int i = 0; i < 128; ++i) printf("%02x", raw[i]); printf("\n");
  }
  uint32_t in[32], outm[32]; uint32_t *di, *dm;
  for (int i = 0; i < 32; ++i) in[i] = (uint32_t)(((2 * i + 1) * 0x101u) << 16 | (2 * i) * 0x101u);
  cudaMalloc(&di, 128); cudaMalloc(&dm, 128); cudaMemcpy(di, in, 128, cudaMemcpyHostToDevice);
  mm<<<1, 32>>>(di, dm); cudaDeviceSynchronize(); cudaMemcpy(outm, dm, 128, cudaMemcpyDeviceToHost);
  printf("MOVMATRIX"); for (int i = 0; i < 32; ++i) printf(" %08x", outm[i]); printf("\n");
  return 0;
}
