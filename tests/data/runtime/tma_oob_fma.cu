// cp.async.bulk.tensor (TMA) tile load of a 16 x 64 half box at (c0, c1) with the NaN OOB fill, then each pair of
// halves copied out as loaded (raw) and through fma.rn.oob.f16x2 d, a, 1.0, -0.0 (fma): the elements the fill
// wrote must come out +0 (PTX ISA 9.7.4.4: .oob gives +0 where an operand is the OOB NaN); tests/test_tma.py.
// PTX: nvcc -ptx -arch=sm_90a -O3 tma_oob_fma.cu -o tma_oob_fma.sm_90a.ptx (CUDA 13.0)
#include <cuda.h>
#include <cstdint>
extern "C" __global__ void tma_oob_fma(const __grid_constant__ CUtensorMap tmap, unsigned* raw, unsigned* fma,
                                       int c0, int c1)
{
    __shared__ alignas(1024) unsigned tile[16 * 32];  // 16 rows of 64 halves, two to a word
    __shared__ alignas(8) uint64_t bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned t = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(16 * 64 * 2));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(t), "l"(reinterpret_cast<uint64_t>(&tmap)), "r"(c0), "r"(c1), "r"(b) : "memory");
    }
    __syncthreads();
    asm volatile("{\n .reg .pred P1;\n W:\n mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n @!P1 bra W;\n}" :: "r"(b));
    for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) {
        unsigned a = tile[i], d;
        asm("fma.rn.oob.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(0x3C003C00u), "r"(0x80008000u));
        raw[i] = a;
        fma[i] = d;
    }
}
