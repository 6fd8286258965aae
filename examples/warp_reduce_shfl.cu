// Per-warp sum with shuffles; lane 0 of each warp writes its warp's sum.
// Out-of-range lanes contribute 0 (all lanes stay in the shuffle).
__global__ void warp_reduce_shfl(int n, const int* in, int* warp_sums)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = (i < n) ? in[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0)
        warp_sums[i / 32] = v;
}
