// Separate compilation (-rdc=true), library side: defines the device function
// and the device variable that rdc_main.cu declares extern, plus two kernels
// of its own. rdc_transform(x, w) = w * x + rdc_bias; rdc_bias starts at 0.5.
__device__ float rdc_bias = 0.5f;

__device__ float rdc_transform(float x, float w)
{
    return w * x + rdc_bias;
}

// y[i] = rdc_transform(x[i], 2) = 2 x + rdc_bias.
__global__ void rdc_lib_kernel(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = rdc_transform(x[i], 2.0f);
}

// Sets rdc_bias for later launches; launch with a single thread.
extern "C" __global__ void rdc_set_bias(float b)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        rdc_bias = b;
}
