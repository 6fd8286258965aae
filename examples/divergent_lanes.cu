// Intra-warp divergence on the lane index, with a nested if/else.
__global__ void divergent_lanes(int n, const int* in, int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in[i];
    if (threadIdx.x & 1) {
        out[i] = v * 3 + 1;
    } else {
        if (threadIdx.x % 4 == 0)
            out[i] = v / 2 - 7;
        else
            out[i] = v % 5 + 100;
    }
}
