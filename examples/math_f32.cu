// f32 math-library calls (libdevice expansions, as nvcc emits them at -O3
// without --use_fast_math) and fast intrinsics (MUFU approximations).
// All elementwise, any launch shape.
#include <math.h>

// y0 = sin(x), y1 = cos(x) (full range reduction), y2 = sincos sum via sincosf.
__global__ void trig_f32(int n, const float* x, float* s, float* c, float* sc)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        s[i] = sinf(v);
        c[i] = cosf(v);
        float a, b;
        sincosf(0.5f * v, &a, &b);
        sc[i] = a + b;
    }
}

// y = exp(x) + log(|x| + 1) and z = pow(|x|, p).
__global__ void explog_pow_f32(int n, float p, const float* x, float* y, float* z)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = expf(v) + logf(fabsf(v) + 1.0f);
        z[i] = powf(fabsf(v), p);
    }
}

// Fast intrinsics: __expf, __fdividef, __logf, __sinf, rsqrtf (approximate).
extern "C" __global__ void fast_intrinsics_f32(int n, const float* x, const float* d, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = __fdividef(__expf(v), d[i]) + __logf(fabsf(v) + 1.0f) + __sinf(v) +
               rsqrtf(fabsf(v) + 1.0f);
    }
}

// tanh, sqrt, exp2, log2, floor/ceil/round/trunc and fmodf.
__global__ void misc_math_f32(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float r = tanhf(v) + sqrtf(fabsf(v)) + exp2f(0.25f * v) + log2f(fabsf(v) + 2.0f);
        r += floorf(v) + ceilf(0.5f * v) + roundf(1.5f * v) + truncf(2.5f * v);
        r += fmodf(v, 0.75f);
        y[i] = r;
    }
}
