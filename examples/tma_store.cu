// TMA (cp.async.bulk.tensor) tile-mode copies of every rank on Hopper (sm_90a), through tensor maps made by
// cuTensorMapEncodeTiled: loads into shared memory (completing an mbarrier's transaction bytes), stores and
// reductions from shared memory (cp.async.bulk.commit_group / wait_group.read), and a tensor prefetch.
// The kernels move raw 32-bit words: the tensor map says what the elements are.  tests/test_tma_store.py.
//
// tma_store_box: the block copies nwords words of `in` into a shared box, then one thread prefetches and stores
//   the box at coordinates c[0 .. rank-1] (elements outside the tensor are not written).
// tma_reduce_box: as tma_store_box, but cp.reduce.async.bulk.tensor.2d with the operation `op` (0 add, 1 min,
//   2 max, 3 inc, 4 dec, 5 and, 6 or, 7 xor), in the tensor map's element type.
// tma_load_box: one thread loads the box at c[0 .. rank-1] (zeros outside the tensor), the block copies its
//   nwords words to `out`.
// tma_multicast_box (launched in clusters): CTA rank 0 of each cluster loads the 2d box at (c0, c1) into the
//   shared memory of every CTA of its cluster whose bit is set in ctaMask (.multicast::cluster); each such CTA
//   waits on its own mbarrier and copies the box to out[blockIdx.x * nwords ..].
// tma_im2col_{3,4,5}d: one thread loads the im2col column at c[0 .. rank-1] with the im2col offsets
//   o[0 .. rank-3] (.im2col, a map from cuTensorMapEncodeIm2col), the block copies its nwords words to `out`.
// Compile: nvcc -ptx -arch=sm_90a -O3 tma_store.cu -o tma_store.sm_90a.ptx (CUDA 13.0)
#include <cuda.h>  // CUtensorMap
#include <cstdint>

#define BOX_WORDS 2048

struct Coords {
    int c[5];
};

__device__ __forceinline__ unsigned smem(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint64_t map_addr(const CUtensorMap* m)
{
    return reinterpret_cast<uint64_t>(m);
}

__device__ void store_box(const CUtensorMap* m, int rank, const int* c, unsigned s)
{
    uint64_t t = map_addr(m);
    switch (rank) {
    case 1:
        asm volatile("cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%0, {%1}];" ::"l"(t), "r"(c[0]) : "memory");
        asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];"
                     ::"l"(t), "r"(c[0]), "r"(s) : "memory");
        break;
    case 2:
        asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]), "r"(s) : "memory");
        break;
    case 3:
        asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(s) : "memory");
        break;
    case 4:
        asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
        asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(s) : "memory");
        break;
    default:
        asm volatile("cp.async.bulk.prefetch.tensor.5d.L2.global.tile [%0, {%1, %2, %3, %4, %5}];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
        asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
                     ::"l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(s) : "memory");
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

#define REDUCE2D(OP)                                                                                           \
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2}], [%3];" \
                 ::"l"(t), "r"(c0), "r"(c1), "r"(s) : "memory")

__device__ void reduce_box(const CUtensorMap* m, int op, int c0, int c1, unsigned s)
{
    uint64_t t = map_addr(m);
    switch (op) {
    case 0: REDUCE2D("add"); break;
    case 1: REDUCE2D("min"); break;
    case 2: REDUCE2D("max"); break;
    case 3: REDUCE2D("inc"); break;
    case 4: REDUCE2D("dec"); break;
    case 5: REDUCE2D("and"); break;
    case 6: REDUCE2D("or"); break;
    default: REDUCE2D("xor");
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__device__ void fill_box(unsigned* box, const unsigned* in, int nwords)
{
    for (int i = threadIdx.x; i < nwords; i += blockDim.x) box[i] = in[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic-proxy writes -> the TMA unit
    __syncthreads();
}

extern "C" __global__ void tma_store_box(const __grid_constant__ CUtensorMap tmap, const unsigned* in, int nwords,
                                         int rank, Coords c)
{
    __shared__ alignas(1024) unsigned box[BOX_WORDS];
    fill_box(box, in, nwords);
    if (threadIdx.x == 0) store_box(&tmap, rank, c.c, smem(box));
}

extern "C" __global__ void tma_reduce_box(const __grid_constant__ CUtensorMap tmap, const unsigned* in, int nwords,
                                          int op, int c0, int c1)
{
    __shared__ alignas(1024) unsigned box[BOX_WORDS];
    fill_box(box, in, nwords);
    if (threadIdx.x == 0) reduce_box(&tmap, op, c0, c1, smem(box));
}

extern "C" __global__ void tma_load_box(const __grid_constant__ CUtensorMap tmap, unsigned* out, int nwords, int rank,
                                        Coords c)
{
    __shared__ alignas(1024) unsigned box[BOX_WORDS];
    __shared__ alignas(8) uint64_t bar;
    unsigned b = smem(&bar), s = smem(box);
    uint64_t t = map_addr(&tmap);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(nwords * 4));
        switch (rank) {
        case 1:
            asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2}], [%3];" ::"r"(s), "l"(t), "r"(c.c[0]), "r"(b) : "memory");
            break;
        case 2:
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2, %3}], [%4];" ::"r"(s), "l"(t), "r"(c.c[0]), "r"(c.c[1]), "r"(b) : "memory");
            break;
        case 3:
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2, %3, %4}], [%5];"
                         ::"r"(s), "l"(t), "r"(c.c[0]), "r"(c.c[1]), "r"(c.c[2]), "r"(b) : "memory");
            break;
        case 4:
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2, %3, %4, %5}], [%6];"
                         ::"r"(s), "l"(t), "r"(c.c[0]), "r"(c.c[1]), "r"(c.c[2]), "r"(c.c[3]), "r"(b) : "memory");
            break;
        default:
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2, %3, %4, %5, %6}], [%7];"
                         ::"r"(s), "l"(t), "r"(c.c[0]), "r"(c.c[1]), "r"(c.c[2]), "r"(c.c[3]), "r"(c.c[4]), "r"(b)
                         : "memory");
        }
    }
    __syncthreads();
    asm volatile("{\n .reg .pred P1;\n W:\n mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n @!P1 bra W;\n}"
                 ::"r"(b) : "memory");
    for (int i = threadIdx.x; i < nwords; i += blockDim.x) out[i] = box[i];
}

extern "C" __global__ void tma_multicast_box(const __grid_constant__ CUtensorMap tmap, unsigned* out, int nwords,
                                             unsigned short mask, int c0, int c1)
{
    __shared__ alignas(1024) unsigned box[BOX_WORDS];
    __shared__ alignas(8) uint64_t bar;
    unsigned b = smem(&bar), s = smem(box), rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    bool mine = (mask >> rank) & 1;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        if (mine) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(nwords * 4));
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (threadIdx.x == 0 && rank == 0)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                     " [%0], [%1, {%2, %3}], [%4], %5;"
                     ::"r"(s), "l"(map_addr(&tmap)), "r"(c0), "r"(c1), "r"(b), "h"(mask) : "memory");
    if (mine) {
        asm volatile("{\n .reg .pred P1;\n W:\n mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n @!P1 bra W;\n}"
                     ::"r"(b) : "memory");
        for (int i = threadIdx.x; i < nwords; i += blockDim.x) out[blockIdx.x * nwords + i] = box[i];
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

struct Offsets {
    unsigned short o[3];
};

template <int RANK>
__device__ void im2col_box(const CUtensorMap* tmap, unsigned* out, int nwords, Coords c, Offsets o)
{
    __shared__ alignas(1024) unsigned box[BOX_WORDS];
    __shared__ alignas(8) uint64_t bar;
    unsigned b = smem(&bar), s = smem(box);
    uint64_t t = map_addr(tmap);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(nwords * 4));
        switch (RANK) {
        case 3:
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2, %3, %4}], [%5], {%6};"
                         ::"r"(s), "l"(t), "r"(c.c[0]), "r"(c.c[1]), "r"(c.c[2]), "r"(b), "h"(o.o[0]) : "memory");
            break;
        case 4:
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                         ::"r"(s), "l"(t), "r"(c.c[0]), "r"(c.c[1]), "r"(c.c[2]), "r"(c.c[3]), "r"(b), "h"(o.o[0]),
                         "h"(o.o[1]) : "memory");
            break;
        default:
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], "
                         "[%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};"
                         ::"r"(s), "l"(t), "r"(c.c[0]), "r"(c.c[1]), "r"(c.c[2]), "r"(c.c[3]), "r"(c.c[4]), "r"(b),
                         "h"(o.o[0]), "h"(o.o[1]), "h"(o.o[2]) : "memory");
        }
    }
    __syncthreads();
    asm volatile("{\n .reg .pred P1;\n W:\n mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n @!P1 bra W;\n}"
                 ::"r"(b) : "memory");
    for (int i = threadIdx.x; i < nwords; i += blockDim.x) out[i] = box[i];
}

// one kernel per rank: xg1 runs 3d and 4d im2col loads (tma_im2col_5d runs on the IR interpreter)
extern "C" __global__ void tma_im2col_3d(const __grid_constant__ CUtensorMap tmap, unsigned* out, int nwords, Coords c,
                                         Offsets o)
{
    im2col_box<3>(&tmap, out, nwords, c, o);
}

extern "C" __global__ void tma_im2col_4d(const __grid_constant__ CUtensorMap tmap, unsigned* out, int nwords, Coords c,
                                         Offsets o)
{
    im2col_box<4>(&tmap, out, nwords, c, o);
}

extern "C" __global__ void tma_im2col_5d(const __grid_constant__ CUtensorMap tmap, unsigned* out, int nwords, Coords c,
                                         Offsets o)
{
    im2col_box<5>(&tmap, out, nwords, c, o);
}
