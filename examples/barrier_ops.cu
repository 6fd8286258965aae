// CTA barriers beyond __syncthreads: bar.red and named barriers with bar.arrive.
// block_vote_counts: per block b, out[3b] = __syncthreads_count(v > 0), out[3b+1] =
//   __syncthreads_and(v != 0), out[3b+2] = __syncthreads_or(v > 100), v = x[i] for i < n else 0.
// producer_consumer (blockDim.x == 128): threads 0-63 produce buf[t] = 2 * in[64b + t] and
//   signal named barrier 1 with bar.arrive; threads 64-127 wait on it with bar.sync 1, 128 and
//   write out[64b + t - 64] = buf[127 - t] + 1.
__global__ void block_vote_counts(int n, const int* x, int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    int cnt = __syncthreads_count(v > 0);
    int all = __syncthreads_and(v != 0);
    int any = __syncthreads_or(v > 100);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x] = cnt;
        out[3 * blockIdx.x + 1] = all;
        out[3 * blockIdx.x + 2] = any;
    }
}

__global__ void producer_consumer(const float* in, float* out)
{
    __shared__ float buf[64];
    int t = threadIdx.x;
    if (t < 64) {
        buf[t] = in[blockIdx.x * 64 + t] * 2.0f;
        asm volatile("bar.arrive 1, 128;" ::: "memory");
    } else {
        asm volatile("bar.sync 1, 128;" ::: "memory");
        out[blockIdx.x * 64 + t - 64] = buf[127 - t] + 1.0f;
    }
}
