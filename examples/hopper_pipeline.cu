// A warp-specialised producer/consumer pipeline on Hopper (sm_90a): bulk copies (cp.async.bulk) signal
// mbarriers with transaction bytes, consumers wait on them with phase parities, and a ring of STAGES
// shared-memory buffers is recycled through "full" and "empty" barriers, as CUTLASS 3.x kernels do.
//
// hopper_rowsum: out[r] = x[r][0] + x[r][1] + ... + x[r][COLS - 1] (summed in that order), for
// ntiles * TILE_ROWS rows of COLS floats.  blockDim.x == 96: warps 0 and 1 consume (one row of a tile per
// thread), warp 2 produces (one elected lane issues the copies); block b handles tiles b, b + gridDim.x, ...
// hopper_gemm (below): the same ring feeding wgmma.mma_async (a 64 x 64 f32 tile of C per block);
// hopper_tma_gemm: that GEMM loading its tiles with TMA through tensor maps (cuTensorMapEncodeTiled).
// Compile: nvcc -ptx -arch=sm_90a -O3 (cp.async.bulk and mbarrier expect_tx need sm_90, wgmma sm_90a).
#include <cuda.h>  // CUtensorMap
#include <cstdint>

#define COLS 32
#define TILE_ROWS 64
#define STAGES 3
#define CONSUMERS (2 * 32)
#define TILE_BYTES (TILE_ROWS * COLS * 4)

__device__ __forceinline__ unsigned smem(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar)
{
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)),
                 "r"(bytes) : "memory");
}

// Wait until the phase of parity `parity` of the barrier has completed (CUTLASS's ClusterBarrier::wait).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity)
{
    asm volatile("{\n\t"
                 ".reg .pred P1;\n\t"
                 "LAB_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
                 "@P1 bra DONE;\n\t"
                 "bra LAB_WAIT;\n\t"
                 "DONE:\n\t"
                 "}" ::"r"(smem(bar)),
                 "r"(parity) : "memory");
}

// Copy `bytes` from global to shared memory; the copy completes `bytes` transaction bytes on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem(dst)),
                 "l"(src), "r"(bytes), "r"(smem(bar)) : "memory");
}

// One lane of the warp is elected (CUTLASS's elect_one_sync).
__device__ __forceinline__ bool elect_one()
{
    unsigned pred = 0;
    asm volatile("{\n\t"
                 ".reg .b32 %%rx;\n\t"
                 ".reg .pred %%px;\n\t"
                 "elect.sync %%rx|%%px, %1;\n\t"
                 "selp.b32 %0, 1, 0, %%px;\n\t"
                 "}" : "=r"(pred) : "r"(0xffffffffu));
    return pred != 0;
}

extern "C" __global__ void __launch_bounds__(96) hopper_rowsum(const float* __restrict__ x, float* __restrict__ out,
                                                               int ntiles)
{
    __shared__ alignas(128) float tile[STAGES][TILE_ROWS * COLS];
    __shared__ alignas(8) uint64_t full[STAGES];   // a tile has landed (1 arrival + TILE_BYTES bytes)
    __shared__ alignas(8) uint64_t empty[STAGES];  // every consumer is done with a tile (CONSUMERS arrivals)
    int warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], CONSUMERS);
        }
    }
    __syncthreads();
    if (warp == 2) {  // the producer warp
        if (elect_one()) {
            for (int t = blockIdx.x, i = 0; t < ntiles; t += gridDim.x, ++i) {
                int s = i % STAGES;
                unsigned phase = (i / STAGES) & 1;
                mbar_wait(&empty[s], phase ^ 1);  // the first round finds every slot free
                mbar_arrive_expect_tx(&full[s], TILE_BYTES);
                bulk_load(tile[s], x + static_cast<size_t>(t) * TILE_ROWS * COLS, TILE_BYTES, &full[s]);
            }
        }
        return;
    }
    for (int t = blockIdx.x, i = 0; t < ntiles; t += gridDim.x, ++i) {  // the consumer warps
        int s = i % STAGES;
        mbar_wait(&full[s], (i / STAGES) & 1);
        const float* row = &tile[s][threadIdx.x * COLS];
        float acc = 0.0f;
        for (int j = 0; j < COLS; ++j)
            acc += row[j];
        out[static_cast<size_t>(t) * TILE_ROWS + threadIdx.x] = acc;
        mbar_arrive(&empty[s]);
    }
}


// ---------------------------------------------------------------------------------------------------
// hopper_gemm: C (M x N, f32, row-major, ldc floats per row) = A (M x K, f16) B (K x N, f16), one 64 x 64
// tile of C per block (grid (N / 64, M / 64)), K in steps of 16.  The same warp-specialised ring feeds a
// warpgroup MMA: warp 4 (threads 128-159) loads each step's A and B tiles with two bulk copies signalling
// one full barrier; warps 0-3 (one warpgroup) run wgmma.mma_async.m64n64k16.f32.f16.f16 on them from
// shared-memory descriptors.  A bulk copy moves bytes as they lie, so the host stores each 64 x 16 tile
// in wgmma's K-major, unswizzled core-matrix order: element (r, k) of a tile at byte
// (r % 8) * 16 + (r / 8) * 256 + (k % 8) * 2 + (k / 8) * 128 (LBO 128, SBO 256), tiles of A ordered
// (row tile, k step), tiles of B (its N x K transpose) ordered (column tile, k step).
#define GEMM_TILE_BYTES (64 * 16 * 2)

__device__ __forceinline__ uint64_t smem_desc(const void* tile)
{
    // start address >> 4 (bits 0-13), leading byte offset 128 >> 4 (bits 16-29), stride byte offset
    // 256 >> 4 (bits 32-45), no swizzle
    return static_cast<uint64_t>((smem(tile) & 0x3FFFF) >> 4) | (static_cast<uint64_t>(128 >> 4) << 16)
           | (static_cast<uint64_t>(256 >> 4) << 32);
}

#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])

__device__ __forceinline__ void wgmma_m64n64k16(float* d, uint64_t da, uint64_t db, int accumulate)
{
    asm volatile("{\n\t"
                 ".reg .pred p;\n\t"
                 "setp.ne.b32 p, %34, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "%32, %33, p, 1, 1, 0, 0;\n\t"
                 "}"
                 : D8(0), D8(8), D8(16), D8(24)
                 : "l"(da), "l"(db), "r"(accumulate));
}

extern "C" __global__ void __launch_bounds__(160) hopper_gemm(const unsigned short* __restrict__ a_tiles,
                                                              const unsigned short* __restrict__ b_tiles,
                                                              float* __restrict__ c, int ksteps, int ldc)
{
    __shared__ alignas(128) unsigned short a_s[STAGES][64 * 16];
    __shared__ alignas(128) unsigned short b_s[STAGES][64 * 16];
    __shared__ alignas(8) uint64_t full[STAGES];
    __shared__ alignas(8) uint64_t empty[STAGES];
    int warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 128);
        }
    }
    __syncthreads();
    const unsigned short* a_row = a_tiles + static_cast<size_t>(blockIdx.y) * ksteps * 64 * 16;
    const unsigned short* b_col = b_tiles + static_cast<size_t>(blockIdx.x) * ksteps * 64 * 16;
    if (warp == 4) {  // the producer warp
        if (elect_one()) {
            for (int k = 0; k < ksteps; ++k) {
                int s = k % STAGES;
                mbar_wait(&empty[s], ((k / STAGES) & 1) ^ 1);
                mbar_arrive_expect_tx(&full[s], 2 * GEMM_TILE_BYTES);
                bulk_load(a_s[s], a_row + k * 64 * 16, GEMM_TILE_BYTES, &full[s]);
                bulk_load(b_s[s], b_col + k * 64 * 16, GEMM_TILE_BYTES, &full[s]);
            }
        }
        return;
    }
    float d[32];
    for (int i = 0; i < 32; ++i)
        d[i] = 0.0f;
    for (int k = 0; k < ksteps; ++k) {  // the consumer warpgroup
        int s = k % STAGES;
        mbar_wait(&full[s], (k / STAGES) & 1);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        wgmma_m64n64k16(d, smem_desc(a_s[s]), smem_desc(b_s[s]), k > 0);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        mbar_arrive(&empty[s]);
    }
    // accumulator register i of thread t: row 16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2), column
    // 8 (i / 4) + 2 (t % 4) + i % 2 of the tile
    int t = threadIdx.x;
    float* tile = c + static_cast<size_t>(blockIdx.y) * 64 * ldc + blockIdx.x * 64;
    for (int i = 0; i < 32; ++i) {
        int r = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
        int col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
        tile[r * ldc + col] = d[i];
    }
}


// ---------------------------------------------------------------------------------------------------
// hopper_tma_gemm: the same GEMM with TMA (cp.async.bulk.tensor) loads from plain row-major A (M x K) and
// B^T (N x K), f16, through tensor maps the host makes with cuTensorMapEncodeTiled (dims {K, rows}, box
// {8, 64}, no swizzle): each k step loads two 64 x 8 boxes of A and two of B^T.  A box lands as 64 rows of
// 16 bytes, so the two boxes of a step are wgmma's K-major core matrices with SBO 128 (8 rows) and LBO 1024
// (the second box).  The host side is the driver API (tests/test_tma.py).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3}], [%4];" ::"r"(smem(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem(bar)) : "memory");
}

__device__ __forceinline__ uint64_t smem_desc_tma(const void* tile)
{
    // start >> 4, LBO 1024 >> 4 (the second 64 x 8 box), SBO 128 >> 4 (8 rows of 16 bytes), no swizzle
    return static_cast<uint64_t>((smem(tile) & 0x3FFFF) >> 4) | (static_cast<uint64_t>(1024 >> 4) << 16)
           | (static_cast<uint64_t>(128 >> 4) << 32);
}

extern "C" __global__ void __launch_bounds__(160) hopper_tma_gemm(const __grid_constant__ CUtensorMap a_map,
                                                                  const __grid_constant__ CUtensorMap bt_map,
                                                                  float* __restrict__ c, int ksteps, int ldc)
{
    __shared__ alignas(128) unsigned short a_s[STAGES][64 * 16];
    __shared__ alignas(128) unsigned short b_s[STAGES][64 * 16];
    __shared__ alignas(8) uint64_t full[STAGES];
    __shared__ alignas(8) uint64_t empty[STAGES];
    int warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 128);
        }
    }
    __syncthreads();
    if (warp == 4) {  // the producer warp
        if (elect_one()) {
            for (int k = 0; k < ksteps; ++k) {
                int s = k % STAGES;
                mbar_wait(&empty[s], ((k / STAGES) & 1) ^ 1);
                mbar_arrive_expect_tx(&full[s], 2 * GEMM_TILE_BYTES);
                for (int h = 0; h < 2; ++h) {
                    tma_load_2d(&a_s[s][h * 64 * 8], &a_map, 16 * k + 8 * h, 64 * blockIdx.y, &full[s]);
                    tma_load_2d(&b_s[s][h * 64 * 8], &bt_map, 16 * k + 8 * h, 64 * blockIdx.x, &full[s]);
                }
            }
        }
        return;
    }
    float d[32];
    for (int i = 0; i < 32; ++i)
        d[i] = 0.0f;
    for (int k = 0; k < ksteps; ++k) {  // the consumer warpgroup
        int s = k % STAGES;
        mbar_wait(&full[s], (k / STAGES) & 1);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        wgmma_m64n64k16(d, smem_desc_tma(a_s[s]), smem_desc_tma(b_s[s]), k > 0);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        mbar_arrive(&empty[s]);
    }
    int t = threadIdx.x;
    float* tile = c + static_cast<size_t>(blockIdx.y) * 64 * ldc + blockIdx.x * 64;
    for (int i = 0; i < 32; ++i) {
        int r = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
        int col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
        tile[r * ldc + col] = d[i];
    }
}
