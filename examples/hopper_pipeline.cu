// A warp-specialised producer/consumer pipeline on Hopper (sm_90a): bulk copies (cp.async.bulk) signal
// mbarriers with transaction bytes, consumers wait on them with phase parities, and a ring of STAGES
// shared-memory buffers is recycled through "full" and "empty" barriers, as CUTLASS 3.x kernels do.
//
// hopper_rowsum: out[r] = x[r][0] + x[r][1] + ... + x[r][COLS - 1] (summed in that order), for
// ntiles * TILE_ROWS rows of COLS floats.  blockDim.x == 96: warps 0 and 1 consume (one row of a tile per
// thread), warp 2 produces (one elected lane issues the copies); block b handles tiles b, b + gridDim.x, ...
// Compile: nvcc -ptx -arch=sm_90a -O3 (cp.async.bulk and mbarrier expect_tx need sm_90).
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
