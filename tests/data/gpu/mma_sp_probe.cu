// mma.sp probe (issue 19, xcc.ir.lower_sparse_mma): raw fragments in and out of sparse MMAs. Build with
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o sp_probe mma_sp_probe.cu
// and run on an sm_90 GPU; mma_sp_probe.h200.txt is its output on an NVIDIA H200 (per case: the A, B, C
// registers of lanes 0..31, 4 each, the metadata register of each lane, and the D registers).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#define KERN(NAME, ASM, NA, NB)                                                                              \
  __global__ void NAME(const uint32_t* a, const uint32_t* b, const uint32_t* c, const uint32_t* e, uint32_t* d) { \
    int l = threadIdx.x; uint32_t A[4], B[4], C[4], D[4];                                                     \
    for (int i = 0; i < 4; ++i) { A[i] = a[4 * l + i]; B[i] = b[4 * l + i]; C[i] = c[4 * l + i]; }              \
    uint32_t E = e[l];                                                                                        \
    ASM;                                                                                                      \
    for (int i = 0; i < 4; ++i) d[4 * l + i] = D[i];                                                          \
  }

#define F16K16(SEL, SP) asm volatile("mma." SP ".sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11}, %12, " #SEL ";" \
  : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3]) : "r"(A[0]), "r"(A[1]), "r"(B[0]), "r"(B[1]), "r"(C[0]), "r"(C[1]), "r"(C[2]), "r"(C[3]), "r"(E))
#define F16K32(SEL) asm volatile("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, " #SEL ";" \
  : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3]) : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(B[2]), "r"(B[3]), "r"(C[0]), "r"(C[1]), "r"(C[2]), "r"(C[3]), "r"(E))
#define S8K32(SEL) asm volatile("mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11}, %12, " #SEL ";" \
  : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3]) : "r"(A[0]), "r"(A[1]), "r"(B[0]), "r"(B[1]), "r"(C[0]), "r"(C[1]), "r"(C[2]), "r"(C[3]), "r"(E))
#define S8K64(SEL) asm volatile("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, " #SEL ";" \
  : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3]) : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(B[2]), "r"(B[3]), "r"(C[0]), "r"(C[1]), "r"(C[2]), "r"(C[3]), "r"(E))
#define TF32K8(SEL) asm volatile("mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11}, %12, " #SEL ";" \
  : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3]) : "r"(A[0]), "r"(A[1]), "r"(B[0]), "r"(B[1]), "r"(C[0]), "r"(C[1]), "r"(C[2]), "r"(C[3]), "r"(E))
#define TF32K16(SEL) asm volatile("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, " #SEL ";" \
  : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3]) : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(B[2]), "r"(B[3]), "r"(C[0]), "r"(C[1]), "r"(C[2]), "r"(C[3]), "r"(E))

KERN(f16k16s0, F16K16(0, "sp"), 2, 2) KERN(f16k16s1, F16K16(1, "sp"), 2, 2) KERN(f16k16s2, F16K16(2, "sp"), 2, 2)
KERN(f16k16s3, F16K16(3, "sp"), 2, 2) KERN(f16k16o0, F16K16(0, "sp::ordered_metadata"), 2, 2)
KERN(f16k32s0, F16K32(0), 4, 4) KERN(f16k32s1, F16K32(1), 4, 4)
KERN(s8k32s0, S8K32(0), 2, 2) KERN(s8k32s1, S8K32(1), 2, 2) KERN(s8k64s0, S8K64(0), 4, 4)
KERN(tf32k8s0, TF32K8(0), 2, 2) KERN(tf32k8s1, TF32K8(1), 2, 2) KERN(tf32k16s0, TF32K16(0), 4, 4) KERN(tf32k16s1, TF32K16(1), 4, 4)

typedef void (*K)(const uint32_t*, const uint32_t*, const uint32_t*, const uint32_t*, uint32_t*);
static uint32_t rng = 12345;
static uint32_t rnd() { rng = rng * 1664525u + 1013904223u; return rng >> 8; }
static uint16_t h(int v) {  // small integer v in -4..4 as f16
  if (v == 0) return 0; uint16_t s = v < 0 ? 0x8000 : 0; int a = v < 0 ? -v : v; int e = 0; while ((1 << (e + 1)) <= a) ++e;
  return s | (uint16_t)((e + 15) << 10) | (uint16_t)(((a - (1 << e)) << (10 - e)) & 0x3FF); }
static uint32_t f32(int v) { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); return u; }

int main() {
  struct { const char* name; K k; int kind; } cases[] = {
    {"f16k16s0", f16k16s0, 0}, {"f16k16s1", f16k16s1, 0}, {"f16k16s2", f16k16s2, 0}, {"f16k16s3", f16k16s3, 0},
    {"f16k16o0", f16k16o0, 0}, {"f16k32s0", f16k32s0, 0}, {"f16k32s1", f16k32s1, 0}, {"s8k32s0", s8k32s0, 1},
    {"s8k32s1", s8k32s1, 1}, {"s8k64s0", s8k64s0, 1}, {"tf32k8s0", tf32k8s0, 2}, {"tf32k8s1", tf32k8s1, 2},
    {"tf32k16s0", tf32k16s0, 2}, {"tf32k16s1", tf32k16s1, 2}};
  uint32_t *da, *db, *dc, *de, *dd; cudaMalloc(&da, 512); cudaMalloc(&db, 512); cudaMalloc(&dc, 512); cudaMalloc(&de, 128); cudaMalloc(&dd, 512);
  const uint32_t nib2[6] = {0x4, 0x8, 0xC, 0x9, 0xD, 0xE}, nibtf[2] = {0x4, 0xE};
  for (auto& cs : cases) {
    uint32_t a[128], b[128], c[128], e[32], d[128];
    for (int i = 0; i < 128; ++i) {
      if (cs.kind == 0) { a[i] = h((int)(rnd() % 9) - 4) | (uint32_t)h((int)(rnd() % 9) - 4) << 16; b[i] = h((int)(rnd() % 9) - 4) | (uint32_t)h((int)(rnd() % 9) - 4) << 16; c[i] = f32((int)(rnd() % 64) - 32); }
      else if (cs.kind == 1) { a[i] = rnd() ^ (rnd() << 24); b[i] = rnd() ^ (rnd() << 24); c[i] = rnd() ^ (rnd() << 24); }
      else { a[i] = f32((int)(rnd() % 9) - 4); b[i] = f32((int)(rnd() % 9) - 4); c[i] = f32((int)(rnd() % 64) - 32); }
    }
    for (int l = 0; l < 32; ++l) { uint32_t m = 0; for (int j = 0; j < 8; ++j) m |= (cs.kind == 2 ? nibtf[rnd() % 2] : nib2[rnd() % 6]) << (4 * j); e[l] = m; }
    cudaMemcpy(da, a, 512, cudaMemcpyHostToDevice); cudaMemcpy(db, b, 512, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, c, 512, cudaMemcpyHostToDevice); cudaMemcpy(de, e, 128, cudaMemcpyHostToDevice); cudaMemset(dd, 0, 512);
    cs.k<<<1, 32>>>(da, db, dc, de, dd); cudaError_t err = cudaDeviceSynchronize(); cudaMemcpy(d, dd, 512, cudaMemcpyDeviceToHost);
    printf("CASE %s %d\n", cs.name, (int)err);
    printf("A"); for (int i = 0; i < 128; ++i) printf(" %08x", a[i]); printf("\nB"); for (int i = 0; i < 128; ++i) printf(" %08x", b[i]);
    printf("\nC"); for (int i = 0; i < 128; ++i) printf(" %08x", c[i]); printf("\nE"); for (int i = 0; i < 32; ++i) printf(" %08x", e[i]);
    printf("\nD"); for (int i = 0; i < 128; ++i) printf(" %08x", d[i]); printf("\n");
  }
  return 0;
}
