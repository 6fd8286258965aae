// Separate compilation (-rdc=true), main side: calls an extern __device__
// function and reads an extern __device__ variable, both defined in
// rdc_lib.cu (link the two with nvlink / an xcc multi-file compile).
// y[i] = rdc_transform(x[i], w[i]) + rdc_bias = w x + 2 * rdc_bias.
extern __device__ float rdc_bias;
extern __device__ float rdc_transform(float x, float w);

extern "C" __global__ void rdc_apply(int n, const float* x, const float* w, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = rdc_transform(x[i], w[i]) + rdc_bias;
}
