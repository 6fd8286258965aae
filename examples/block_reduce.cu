// Block-level sum reduction in shared memory, one atomicAdd per block.
// Launch with blockDim.x == 256.
__global__ void block_reduce(int n, const int* in, int* out)
{
    __shared__ int s[256];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(out, s[0]);
}

__global__ void block_reduce_f32(int n, const float* in, float* out)
{
    __shared__ float s[256];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(out, s[0]);
}
