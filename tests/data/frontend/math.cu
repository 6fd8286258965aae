// Frontend test kernel: double precision libm calls and half precision arithmetic.
#include <cuda_fp16.h>

__global__ void dmath(const double *x, double *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double a = x[i];
        y[i] = sqrt(a) + exp(a) * 1.5 - fma(a, a, -0.25) + rsqrt(a + 2.0) / (a - 3.0);
    }
}

__global__ void hmath(const __half2 *a, const __half *b, __half2 *c, float *f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half2 s = __hfma2(a[i], __half2half2(b[i]), __float2half2_rn(0.5f));
        c[i] = __hmul2(s, h2exp(s));
        f[i] = __half2float(__hadd(__low2half(s), __high2half(s)));
    }
}
