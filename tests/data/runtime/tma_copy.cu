// cp.async.bulk.tensor (TMA) tile load of a 16 x 32 float box at (c0, c1) into shared memory, then copied out;
// tests/test_tma.py.  PTX: nvcc -ptx -arch=sm_90a -O3 tma_copy.cu -o tma_copy.sm_90a.ptx (CUDA 13.0)
#include <cuda.h>
#include <cstdint>
extern "C" __global__ void tma_copy(const __grid_constant__ CUtensorMap tmap, float* out, int c0, int c1)
{
    __shared__ alignas(1024) float tile[16 * 32];  // 1024: the 128-byte swizzle pattern repeats every 1024 bytes
    __shared__ alignas(8) uint64_t bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned t = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(16 * 32 * 4));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(t), "l"(reinterpret_cast<uint64_t>(&tmap)), "r"(c0), "r"(c1), "r"(b) : "memory");
    }
    __syncthreads();
    asm volatile("{\n .reg .pred P1;\n W:\n mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n @!P1 bra W;\n}" :: "r"(b));
    for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) out[i] = tile[i];
}
