// 256-bin histogram of bytes: per-block shared-memory histogram, then merged
// into the global histogram with atomics. Grid-stride over the input.
__global__ void histogram_atomic(int n, const unsigned char* data, unsigned int* hist)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();

    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned int c = local[b];
        if (c != 0)
            atomicAdd(&hist[b], c);
    }
}
