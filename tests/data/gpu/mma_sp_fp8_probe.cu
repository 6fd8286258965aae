// mma.sp FP8 probe (issue 19, xcc.ir.lower_sparse_mma): sparse m16n8k64 .e4m3/.e5m2 MMAs. Build with
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o fp8_probe mma_sp_fp8_probe.cu
// mma_sp_fp8_probe.h200.txt is its output on an NVIDIA H200 (the format of mma_sp_probe.h200.txt).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#define KERN(NAME, AT, BT, SEL)                                                                                   \
  __global__ void NAME(const uint32_t* a, const uint32_t* b, const uint32_t* c, const uint32_t* e, uint32_t* d) { \
    int l = threadIdx.x; uint32_t A[4], B[4], C[4], D[4];                                                        \
    for (int i = 0; i < 4; ++i) { A[i] = a[4 * l + i]; B[i] = b[4 * l + i]; C[i] = c[4 * l + i]; }                 \
    uint32_t E = e[l];                                                                                           \
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32." AT "." BT ".f32 {%0,%1,%2,%3}, "   \
                 "{%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, " #SEL ";"                              \
      : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3]) : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]),   \
        "r"(B[1]), "r"(B[2]), "r"(B[3]), "r"(C[0]), "r"(C[1]), "r"(C[2]), "r"(C[3]), "r"(E));                    \
    for (int i = 0; i < 4; ++i) d[4 * l + i] = D[i];                                                             \
  }
KERN(e4m3k64s0, "e4m3", "e4m3", 0) KERN(e5m2k64s0, "e5m2", "e4m3", 0)
typedef void (*K)(const uint32_t*, const uint32_t*, const uint32_t*, const uint32_t*, uint32_t*);
static uint32_t rng = 777;
static uint32_t rnd() { rng = rng * 1664525u + 1013904223u; return rng >> 8; }
static uint32_t e4() { return (rnd() & 0x80) | (0x38 + rnd() % 16); }   // e4m3 1.0 .. 3.75, either sign
static uint32_t e5() { return (rnd() & 0x80) | (0x3C + rnd() % 8); }    // e5m2 1.0 .. 3.5
int main() {
  struct { const char* name; K k; int e5a; } cases[] = {{"e4m3k64s0", e4m3k64s0, 0}, {"e5m2k64s0", e5m2k64s0, 1}};
  uint32_t *da, *db, *dc, *de, *dd; cudaMalloc(&da, 512); cudaMalloc(&db, 512); cudaMalloc(&dc, 512); cudaMalloc(&de, 128); cudaMalloc(&dd, 512);
  const uint32_t nib2[6] = {0x4, 0x8, 0xC, 0x9, 0xD, 0xE};
  for (auto& cs : cases) {
    uint32_t a[128], b[128], c[128], e[32], d[128];
    for (int i = 0; i < 128; ++i) {
      a[i] = b[i] = 0;
      for (int j = 0; j < 4; ++j) { a[i] |= (cs.e5a ? e5() : e4()) << (8 * j); b[i] |= e4() << (8 * j); }
      float f = (float)((int)(rnd() % 64) - 32); memcpy(&c[i], &f, 4);
    }
    for (int l = 0; l < 32; ++l) { uint32_t m = 0; for (int j = 0; j < 8; ++j) m |= nib2[rnd() % 6] << (4 * j); e[l] = m; }
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
