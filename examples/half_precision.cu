// fp16 / bf16 conversions and packed arithmetic (cuda_fp16.h, cuda_bf16.h).
// All kernels are elementwise; n counts scalar elements (n2 counts __half2
// pairs for the packed kernel).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void f32_to_f16(int n, const float* x, __half* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __float2half_rn(x[i]);
}

__global__ void f16_to_f32_scale(int n, float s, const __half* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __half2float(x[i]) * s;
}

// Packed f16x2: y = a * x + y on pairs, then relu via __hmax2.
__global__ void half2_axpy_relu(int n2, __half2 a, const __half2* x, __half2* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        __half2 r = __hfma2(a, x[i], y[i]);
        y[i] = __hmax2(r, __float2half2_rn(0.0f));
    }
}

// f16 scalar arithmetic and comparison: y = x > t ? x * x : x - t (all in f16).
__global__ void half_threshold(int n, __half t, const __half* x, __half* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half v = x[i];
        y[i] = __hgt(v, t) ? __hmul(v, v) : __hsub(v, t);
    }
}

// bf16: y = bf16(x_f32) * w + b computed with bf16 fma, then widened back to f32.
__global__ void bf16_fma_roundtrip(int n, const float* x, const __nv_bfloat16* w,
                                   const __nv_bfloat16* b, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __nv_bfloat16 xb = __float2bfloat16_rn(x[i]);
        __nv_bfloat16 r = __hfma(xb, w[i], b[i]);
        y[i] = __bfloat162float(r);
    }
}

// Mixed precision dot product of f16 vectors accumulated in f32, one value per
// thread over a grid-stride loop, summed with a warp shuffle; lane 0 adds the
// warp's partial to *out with atomicAdd (order of the f32 adds is unspecified).
__global__ void half_dot_f32(int n, const __half* a, const __half* b, float* out)
{
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc += __half2float(a[i]) * __half2float(b[i]);
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_down_sync(0xffffffff, acc, o);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(out, acc);
}
