// c[i] = a[i] + b[i] using a grid-stride loop
__global__ void vector_add_grid_stride(int n, const float* a, const float* b, float* c)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        c[i] = a[i] + b[i];
}
