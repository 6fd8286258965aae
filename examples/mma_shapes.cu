// Warp-level matrix shapes the other examples lack, through inline PTX: mma.sync m16n8k8 (f16),
// m16n8k16 (bf16 -> f32, f16 -> f16), m16n8k32 (s8 -> s32, wrapping and .satfinite), every ldmatrix
// variant (.x1/.x2/.x4, .trans, shared and generic addresses), and wmma m16n16k16 with f16
// accumulators, a column-major A in shared memory and a column-major store.
//
// Each warp works on its own problem (warp w = global thread index / 32), so a launch of several
// warps checks that they do not mix. Fragments are loaded and stored by hand with the layouts of
// the PTX ISA (9.7.14.5.7 - 9.7.14.5.10): groupID g = lane >> 2, threadID_in_group t = lane % 4.
// Matrices are row-major unless named *t (transposed, i.e. column-major); 16-bit elements are
// passed as raw bits (unsigned short), so f16 and bf16 share the loaders.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

__device__ __forceinline__ unsigned pack16(unsigned short lo, unsigned short hi)
{
    return (unsigned)lo | ((unsigned)hi << 16);
}

__device__ __forceinline__ int warp_id() { return (blockIdx.x * blockDim.x + threadIdx.x) >> 5; }

// D (16x8 f32) = A (16x8 f16) * B (8x8 f16) + C (16x8 f32).
extern "C" __global__ void mma_m16n8k8_f16(const unsigned short* A, const unsigned short* B, const float* C,
                                           float* D)
{
    int w = warp_id(), lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const unsigned short* a = A + w * 128;
    const unsigned short* b = B + w * 64;
    const float* c = C + w * 128;
    float* d = D + w * 128;
    unsigned a0 = pack16(a[g * 8 + 2 * t], a[g * 8 + 2 * t + 1]);
    unsigned a1 = pack16(a[(g + 8) * 8 + 2 * t], a[(g + 8) * 8 + 2 * t + 1]);
    unsigned b0 = pack16(b[(2 * t) * 8 + g], b[(2 * t + 1) * 8 + g]);
    float c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1];
    float c2 = c[(g + 8) * 8 + 2 * t], c3 = c[(g + 8) * 8 + 2 * t + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                 "{%7, %8, %9, %10};\n"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(b0), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    d[g * 8 + 2 * t] = d0;
    d[g * 8 + 2 * t + 1] = d1;
    d[(g + 8) * 8 + 2 * t] = d2;
    d[(g + 8) * 8 + 2 * t + 1] = d3;
}

// The m16n8k16 A (16x16) and B (16x8) fragments of 16-bit elements.
__device__ __forceinline__ void load_ab_16816(const unsigned short* a, const unsigned short* b, int g, int t,
                                              unsigned ra[4], unsigned rb[2])
{
    ra[0] = pack16(a[g * 16 + 2 * t], a[g * 16 + 2 * t + 1]);
    ra[1] = pack16(a[(g + 8) * 16 + 2 * t], a[(g + 8) * 16 + 2 * t + 1]);
    ra[2] = pack16(a[g * 16 + 2 * t + 8], a[g * 16 + 2 * t + 9]);
    ra[3] = pack16(a[(g + 8) * 16 + 2 * t + 8], a[(g + 8) * 16 + 2 * t + 9]);
    rb[0] = pack16(b[(2 * t) * 8 + g], b[(2 * t + 1) * 8 + g]);
    rb[1] = pack16(b[(2 * t + 8) * 8 + g], b[(2 * t + 9) * 8 + g]);
}

// D (16x8 f32) = A (16x16 bf16) * B (16x8 bf16) + C (16x8 f32).
extern "C" __global__ void mma_m16n8k16_bf16(const unsigned short* A, const unsigned short* B, const float* C,
                                             float* D)
{
    int w = warp_id(), lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    unsigned ra[4], rb[2];
    load_ab_16816(A + w * 256, B + w * 128, g, t, ra, rb);
    const float* c = C + w * 128;
    float* d = D + w * 128;
    float c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1];
    float c2 = c[(g + 8) * 8 + 2 * t], c3 = c[(g + 8) * 8 + 2 * t + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%10, %11, %12, %13};\n"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                   "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    d[g * 8 + 2 * t] = d0;
    d[g * 8 + 2 * t + 1] = d1;
    d[(g + 8) * 8 + 2 * t] = d2;
    d[(g + 8) * 8 + 2 * t + 1] = d3;
}

// D (16x8 f16) = A (16x16 f16) * B (16x8 f16) + C (16x8 f16): f16 accumulators, two registers each.
extern "C" __global__ void mma_m16n8k16_f16acc(const unsigned short* A, const unsigned short* B,
                                               const unsigned short* C, unsigned short* D)
{
    int w = warp_id(), lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    unsigned ra[4], rb[2];
    load_ab_16816(A + w * 256, B + w * 128, g, t, ra, rb);
    const unsigned short* c = C + w * 128;
    unsigned short* d = D + w * 128;
    unsigned c0 = pack16(c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1]);
    unsigned c1 = pack16(c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]);
    unsigned d0, d1;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, "
                 "{%8, %9};\n"
                 : "=r"(d0), "=r"(d1)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(c0), "r"(c1));
    d[g * 8 + 2 * t] = (unsigned short)d0;
    d[g * 8 + 2 * t + 1] = (unsigned short)(d0 >> 16);
    d[(g + 8) * 8 + 2 * t] = (unsigned short)d1;
    d[(g + 8) * 8 + 2 * t + 1] = (unsigned short)(d1 >> 16);
}

// D (16x8 s32) = A (16x32 s8) * B (32x8 s8) + C (16x8 s32), once wrapping (Dw) and once with
// .satfinite (Ds). Bt is B column-major (Bt[n * 32 + k]) so that each register is one 32-bit word.
extern "C" __global__ void mma_m16n8k32_s8(const int* A, const int* Bt, const int* C, int* Dw, int* Ds)
{
    int w = warp_id(), lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int* a = A + w * 128;   // 16 rows of 8 words
    const int* b = Bt + w * 64;   // 8 columns of 8 words
    const int* c = C + w * 128;
    unsigned a0 = a[g * 8 + t], a1 = a[(g + 8) * 8 + t], a2 = a[g * 8 + t + 4], a3 = a[(g + 8) * 8 + t + 4];
    unsigned b0 = b[g * 8 + t], b1 = b[g * 8 + t + 4];
    int c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1];
    int c2 = c[(g + 8) * 8 + 2 * t], c3 = c[(g + 8) * 8 + 2 * t + 1];
    int d[8];
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%10, %11, %12, %13};\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c0), "r"(c1), "r"(c2), "r"(c3));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                 : "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c0), "r"(c1), "r"(c2), "r"(c3));
    for (int h = 0; h < 2; h++) {
        int* o = (h ? Ds : Dw) + w * 128;
        o[g * 8 + 2 * t] = d[4 * h];
        o[g * 8 + 2 * t + 1] = d[4 * h + 1];
        o[(g + 8) * 8 + 2 * t] = d[4 * h + 2];
        o[(g + 8) * 8 + 2 * t + 1] = d[4 * h + 3];
    }
}

// Every ldmatrix variant on a 32x8 tile of 16-bit elements in shared memory: lane l supplies the
// address of tile row (13 * l + 7) % 32, so each matrix's rows come from a permutation of the tile.
// Out (per warp, 18 x 32 words): x1, x2 (2), x4 (4), x1.trans, x2.trans (2), x4.trans (4), then x4
// through a generic address (4); word r * 32 + lane is register r of that lane.
extern "C" __global__ void ldmatrix_variants(const unsigned short* In, unsigned* Out)
{
    __shared__ __align__(16) unsigned short tile[4][32][8];
    int w = warp_id(), lane = threadIdx.x & 31, wl = threadIdx.x >> 5;
    for (int e = lane; e < 256; e += 32)
        tile[wl][e / 8][e % 8] = In[w * 256 + e];
    __syncwarp();
    const unsigned short* row = &tile[wl][(13 * lane + 7) % 32][0];
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(row));
    unsigned r[18];
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(s));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r[1]), "=r"(r[2]) : "r"(s));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]) : "r"(s));
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[7]) : "r"(s));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[8]), "=r"(r[9]) : "r"(s));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]) : "r"(s));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]) : "l"(row));
    for (int k = 0; k < 18; k++)
        Out[(w * 18 + k) * 32 + lane] = r[k];
}

// wmma m16n16k16 with f16 accumulators: D = A * B + C, A column-major (At[k * 16 + m]) staged in
// shared memory, B and C row-major in global memory, D stored column-major into shared memory with
// a stride of 24 and copied out column-major (D[n * 16 + m]). One warp per block (blockDim.x == 32).
__global__ void wmma_f16acc_col(const __half* At, const __half* B, const __half* C, __half* D)
{
    __shared__ __align__(32) __half as[256];
    __shared__ __align__(32) __half ds[16 * 24];
    int p = blockIdx.x, lane = threadIdx.x & 31;
    for (int e = lane; e < 256; e += 32)
        as[e] = At[p * 256 + e];
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> c;
    wmma::load_matrix_sync(a, as, 16);
    wmma::load_matrix_sync(b, B + p * 256, 16);
    wmma::load_matrix_sync(c, C + p * 256, 16, wmma::mem_row_major);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(ds, c, 24, wmma::mem_col_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32)
        D[p * 256 + e] = ds[(e / 16) * 24 + e % 16];
}
