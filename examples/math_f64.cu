// Double precision. daxpy_fma / f64_ops: elementwise, any launch shape.
// dnorm_i64: 64-bit element count and index, grid-stride loop; each thread
//   writes its own partial sum of squares to partial[global thread id].
#include <math.h>

__global__ void daxpy_fma(int n, double a, const double* x, double* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fma(a, x[i], y[i]);
}

// out = sqrt(|x|) + x / (y + 3) - x * y, plus conversions to/from f32 and int.
__global__ void f64_ops(int n, const double* x, const double* y, double* out, float* out_f32,
                        long long* out_i64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double a = x[i], b = y[i];
        double r = sqrt(fabs(a)) + a / (b + 3.0) - a * b;
        out[i] = r;
        out_f32[i] = (float)r;
        out_i64[i] = (long long)floor(r * 1000.0);
    }
}

__global__ void dnorm_i64(long long n, const double* x, double* partial)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)blockDim.x * gridDim.x;
    double acc = 0.0;
    for (long long i = tid; i < n; i += stride)
        acc = fma(x[i], x[i], acc);
    partial[tid] = acc;
}
