// Frontend test kernel: inline asm blocks, shuffles, atomics, __ldg, printf,
// a __noinline__ device function and a struct passed by value.
#include <cstdio>

struct Params {
    float scale;
    int n;
    double bias[4];
    const float *src;
};

__device__ __noinline__ float combine(float a, float b, int k) {
    return k & 1 ? a * b : a + b;
}

__device__ int pred_to_int(int y) {
    int x;
    asm("{ .reg .pred p; setp.ne.b32 p, %1, 0; selp.b32 %0, 1, 0, p; }" : "=r"(x) : "r"(y));
    return x;
}

__global__ void features(Params p, float *out, int *counter) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    float v = __ldg(p.src + i) * p.scale + (float)p.bias[i & 3];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    v = combine(v, __shfl_xor_sync(0xffffffffu, v, 1), i);
    if ((threadIdx.x & 31) == 0) {
        int slot = atomicAdd(counter, pred_to_int(i));
        atomicMax(counter + 1, slot);
        atomicCAS(counter + 2, 0, slot);
        printf("block %d lane %d value %f\n", blockIdx.x, threadIdx.x, v);
    }
    out[i] = v;
}
