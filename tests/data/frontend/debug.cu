// Frontend test kernel compiled with -G: .file/.loc, debug sections, local memory.
__device__ int helper(int *buf, int k) {
    int acc = 0;
    for (int j = 0; j < k; ++j) acc += buf[j] ^ j;
    return acc;
}

__global__ void debug_kernel(int *data, int n) {
    int local[16];
    int t = threadIdx.x + blockIdx.y * gridDim.x;
    for (int j = 0; j < 16; ++j) local[j] = data[(t + j) % n];
    data[t % n] = helper(local, 16);
}
