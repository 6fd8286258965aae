// Transformer building blocks on f32, row-major [rows x cols] tensors.
// softmax_rows: one warp per row (blockDim.x == 32, grid rows).
// layernorm_rows / rmsnorm_rows: one block per row, blockDim.x a multiple of
//   32 and <= 1024 (e.g. 256).
// attention_row: single-head attention, one query row per block,
//   dynamic shared memory of seq floats, blockDim.x a multiple of 32.
// gelu_erf / gelu_tanh / silu: elementwise, any launch shape.
#include <math.h>

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}

// Sum over the block; every thread gets the result. Uses a 32-float scratch.
__device__ __forceinline__ float block_sum(float v, float* scratch)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int nwarps = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();  // scratch may still be read from a previous call
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    v = (lane < nwarps) ? scratch[lane] : 0.0f;
    return warp_sum(v);
}

__device__ __forceinline__ float block_max(float v, float* scratch)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int nwarps = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    v = (lane < nwarps) ? scratch[lane] : -INFINITY;
    return warp_max(v);
}

__global__ void softmax_rows(int rows, int cols, const float* x, float* y)
{
    int row = blockIdx.x;
    if (row >= rows)
        return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += 32)
        m = fmaxf(m, xr[c]);
    m = warp_max(m);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32)
        s += expf(xr[c] - m);
    s = warp_sum(s);
    float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += 32)
        yr[c] = expf(xr[c] - m) * inv;
}

__global__ void layernorm_rows(int rows, int cols, float eps, const float* x,
                               const float* gamma, const float* beta, float* y)
{
    __shared__ float scratch[32];
    int row = blockIdx.x;
    if (row >= rows)
        return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += xr[c];
    float mean = block_sum(s, scratch) / cols;
    float v = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = xr[c] - mean;
        v += d * d;
    }
    float rstd = rsqrtf(block_sum(v, scratch) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
}

__global__ void rmsnorm_rows(int rows, int cols, float eps, const float* x,
                             const float* weight, float* y)
{
    __shared__ float scratch[32];
    int row = blockIdx.x;
    if (row >= rows)
        return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        ss += xr[c] * xr[c];
    float r = 1.0f / sqrtf(block_sum(ss, scratch) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = xr[c] * r * weight[c];
}

// O[i] = softmax(scale * Q[i] . K^T) V for Q, O: [seq x d], K, V: [seq x d].
// Launch grid (seq), dynamic shared memory seq * sizeof(float).
__global__ void attention_row(int seq, int d, float scale, const float* Q, const float* K,
                              const float* V, float* O)
{
    extern __shared__ float p[];
    __shared__ float scratch[32];
    int i = blockIdx.x;
    if (i >= seq)
        return;
    const float* q = Q + (size_t)i * d;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < seq; j += blockDim.x) {
        const float* k = K + (size_t)j * d;
        float dot = 0.0f;
        for (int c = 0; c < d; ++c)
            dot += q[c] * k[c];
        dot *= scale;
        p[j] = dot;
        m = fmaxf(m, dot);
    }
    m = block_max(m, scratch);
    float s = 0.0f;
    for (int j = threadIdx.x; j < seq; j += blockDim.x) {
        float e = expf(p[j] - m);
        p[j] = e;
        s += e;
    }
    float inv = 1.0f / block_sum(s, scratch);  // block_sum's barriers also publish p[]
    for (int c = threadIdx.x; c < d; c += blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j < seq; ++j)
            acc += p[j] * V[(size_t)j * d + c];
        O[(size_t)i * d + c] = acc * inv;
    }
}

// GELU, exact form: 0.5 x (1 + erf(x / sqrt 2)).
extern "C" __global__ void gelu_erf(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
__global__ void gelu_tanh(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(u));
    }
}

// SiLU / swish: x * sigmoid(x).
__global__ void silu(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v / (1.0f + expf(-v));
    }
}
