// cold_path: a hot loop whose values stay live across a fix-up branch that a normal launch never takes.
// rare_fixup: per element, 24 steps of a recurrence with eight loop-invariant coefficients; when the value
// overflows (never, for inputs in [-1, 1]) a fix-up path with many temporaries rescales it and records the step.
// Under a register limit (xcc -maxrregcount / max_registers=16) the allocator must spill: with a profile of a
// normal launch, profile use splits the coefficients' live ranges around the fix-up blocks, so the spill code goes
// there and the loop keeps its registers (docs/profiles.md).

extern "C" __global__ void rare_fixup(int n, const float* x, float* y, int* flags)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    float a0 = v * 0.5f + 0.25f, a1 = v * 0.125f - 0.5f, a2 = v * v * 0.25f, a3 = 0.75f - v * 0.5f;
    float a4 = v * 0.375f, a5 = 0.5f - v * v * 0.125f, a6 = v * 0.0625f + 0.125f, a7 = 0.25f - v * 0.25f;
    float acc = v;
#pragma unroll 1
    for (int k = 0; k < 24; ++k) {
        acc = fmaf(acc, a0, a1);
        acc = fmaf(acc, a2, a3) * 0.5f;
        acc = fmaf(acc, a4, a5);
        acc = fmaf(acc, a6, a7);
        if (fabsf(acc) > 1e30f) {  // cold: rescale from a polynomial of all the coefficients
            float s0 = a0 * a1 + a2 * a3, s1 = a4 * a5 - a6 * a7, s2 = a0 * a7 + a1 * a6;
            float s3 = a2 * a5 - a3 * a4, s4 = s0 * s1 + s2 * s3, s5 = s0 * s2 - s1 * s3;
            float s6 = s4 * s5 + s0 * s3, s7 = s1 * s2 - s4 * s0;
            acc = (s4 + s5 + s6 + s7) / (1.0f + fabsf(acc));
            flags[i] = k + 1;
        }
    }
    y[i] = acc;
}
