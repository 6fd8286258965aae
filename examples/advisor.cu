// Kernels with one known bottleneck each, and the same kernel with that cause removed by hand: the
// advisor's test cases (tests/test_advisor.py, docs/advisor.md). The bank-conflicted transpose is
// transpose_shared.cu's transpose_shared_unpadded (fixed: transpose_shared, the padded tile).
//
// strided_copy / coalesced_copy: out[i] = in[j]; strided_copy reads with consecutive threads 32 rows
// apart (j = (i % 32) * (n / 32) + i / 32: every thread of a warp in its own sector), coalesced_copy
// with consecutive threads on consecutive elements (j = i). Needs n % 32 == 0. Block 256.
extern "C" __global__ void strided_copy(unsigned n, const float* in, float* out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned j = (i & 31u) * (n >> 5) + (i >> 5);
        out[i] = in[j];
    }
}

extern "C" __global__ void coalesced_copy(unsigned n, const float* in, float* out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned j = (i & 31u) * 0u + i;  // the same index arithmetic, consecutive
        out[i] = in[j];
    }
}

// branch_chain / branch_chain_uniform: one of eight different 16-step recurrences per thread, chosen by
// a switch on the thread's case k. branch_chain takes k from the lane (threadIdx.x % 8: all eight
// paths in every warp, run one after another), branch_chain_uniform from the warp ((threadIdx.x / 32)
// % 8: one path per warp). Block 256.
__device__ __forceinline__ float step(int k, int r, float v)
{
    switch ((k + r) & 7) {
    case 0: return v * 0.999f + 0.25f;
    case 1: return fminf(v, 4.0f) + 0.5f;
    case 2: return v * v * 0.125f;
    case 3: return fmaxf(v, -4.0f) - 0.75f;
    case 4: return v - 0.375f;
    case 5: return fabsf(v) * 0.5f;
    case 6: return v * 1.5f;
    default: return -v + 1.0f;
    }
}

template <int K>
__device__ __forceinline__ float path(float v)
{
#pragma unroll
    for (int r = 0; r < 16; ++r)
        v = step(K, r, v);
    return v;
}

__device__ __forceinline__ float chain(int k, float v)
{
    switch (k) {
    case 0: return path<0>(v);
    case 1: return path<1>(v);
    case 2: return path<2>(v);
    case 3: return path<3>(v);
    case 4: return path<4>(v);
    case 5: return path<5>(v);
    case 6: return path<6>(v);
    default: return path<7>(v);
    }
}

extern "C" __global__ void branch_chain(int n, const float* in, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = chain(threadIdx.x & 7, in[i]);
}

extern "C" __global__ void branch_chain_uniform(int n, const float* in, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = chain((threadIdx.x >> 5) & 7, in[i]);
}

// chase / chase_fewer_live: each thread follows `steps` links of `next` (j = next[j]: a chain of
// dependent, coalesced loads, latency-bound) and writes where it ended. A rarely taken path
// (wide != 0) keeps 48 loaded values live across a barrier; it sets the register count of the whole
// kernel, which limits the resident blocks per SM (fewer warps to hide the chain's latency).
// chase_fewer_live is the same kernel with the rare path combining the values in load order (each
// with its neighbour) and no barrier after the loads: few are live at once, and the register count
// is the hot path's. Block 256.
#define WIDE 48
template <bool LIVE>
__device__ __forceinline__ void chase_body(int n, int steps, int wide, const int* next, const float* in, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (wide) {  // the rare path
        float v[WIDE];
#pragma unroll
        for (int r = 0; r < WIDE; ++r)
            v[r] = in[i * WIDE + r];
        if (LIVE)
            __syncthreads();  // the loads stay before it
        float s = 0.0f;
#pragma unroll
        for (int r = 0; r < WIDE; ++r)  // LIVE: the first step needs the last value (all live at once)
            s = s * v[r] + v[LIVE ? WIDE - 1 - r : r ^ 1];
        out[i] = s;
        return;
    }
    int j = i;
    for (int t = 0; t < steps; ++t)
        j = next[j];
    out[i] = (float)j;
}

extern "C" __global__ void chase(int n, int steps, int wide, const int* next, const float* in, float* out)
{
    chase_body<true>(n, steps, wide, next, in, out);
}

extern "C" __global__ void chase_fewer_live(int n, int steps, int wide, const int* next, const float* in, float* out)
{
    chase_body<false>(n, steps, wide, next, in, out);
}

// grid_stride_scale: y[i] = a * x[i] + y[i] over n elements with a grid-stride loop. Launched with a
// grid smaller than the machine (16 blocks of 256 on 132 SMs) most SMs idle; the fix is the launch's
// grid (enough blocks to fill every SM), the kernel is unchanged. Block 256.
extern "C" __global__ void grid_stride_scale(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

// sfu_bound: four independent chains of fast exponentials per thread (MUFU.EX2 on the SFU pipe, a quarter
// of the FMA pipe's rate): the SFU pipe limits the kernel (SlowPipeLimiter). Block 256.
extern "C" __global__ void sfu_bound(int n, const float* __restrict__ x, float* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
#pragma unroll
    for (int r = 0; r < 16; ++r) {
        a = __expf(-a);
        b = __expf(-b);
        c = __expf(-c);
        d = __expf(-d);
    }
    y[i] = a + b + c + d;
}
