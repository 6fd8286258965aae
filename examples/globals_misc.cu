// Module-scope data and runtime-support calls.
// poly_constant: y = c0 + c1 x + ... + c7 x^7 with coefficients in __constant__
//   memory (the host sets them with cudaMemcpyToSymbol(poly_coeffs, ...)).
// lut_device_global: y[i] = lut[x[i] & 7] * gain, from an initialised
//   __device__ array and scalar; also counts calls in a __device__ counter.
// printf_kernel: device printf of i and x[i] for the first `limit` elements.
// assert_kernel: assert(x[i] >= 0) then y[i] = sqrt(x[i]).
#include <assert.h>
#include <stdio.h>

__constant__ float poly_coeffs[8];

__device__ float lut[8] = {0.0f, 1.0f, 4.0f, 9.0f, 16.0f, 25.0f, 36.0f, 49.0f};
__device__ float gain = 0.5f;
__device__ unsigned long long launch_counter = 0;

__global__ void poly_constant(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float r = poly_coeffs[7];
        for (int k = 6; k >= 0; --k)
            r = r * v + poly_coeffs[k];
        y[i] = r;
    }
}

extern "C" __global__ void lut_device_global(int n, const int* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        atomicAdd(&launch_counter, 1ull);
    if (i < n)
        y[i] = lut[x[i] & 7] * gain;
}

__global__ void printf_kernel(int n, int limit, const float* x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i < limit)
        printf("x[%d] = %f\n", i, x[i]);
}

__global__ void assert_kernel(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(x[i] >= 0.0f);
        y[i] = sqrtf(x[i]);
    }
}
