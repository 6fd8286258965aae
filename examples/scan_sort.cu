// Block-level scans and a shared-memory bitonic sort.
// inclusive_scan_hillis_steele: blockDim.x == 256; each block scans its 256
//   elements (int) and writes its total to block_sums[blockIdx.x].
// inclusive_scan_warp: any blockDim.x that is a multiple of 32 (<= 1024);
//   warp scans with __shfl_up_sync, then a scan of the warp totals.
// bitonic_sort_block: sorts each 512-element segment ascending in shared
//   memory with blockDim.x == 256 (2 elements per thread); the tail segment is
//   padded with INT_MAX and only its n valid elements are written back.
#include <limits.h>

__global__ void inclusive_scan_hillis_steele(int n, const int* in, int* out, int* block_sums)
{
    __shared__ int buf[2][256];
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    int src = 0;
    buf[0][tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < 256; off <<= 1) {
        int v = buf[src][tid];
        if (tid >= off)
            v += buf[src][tid - off];
        buf[src ^ 1][tid] = v;
        src ^= 1;
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[src][tid];
    if (tid == 255)
        block_sums[blockIdx.x] = buf[src][255];
}

__device__ __forceinline__ int warp_inclusive_scan(int v)
{
    int lane = threadIdx.x & 31;
    for (int off = 1; off < 32; off <<= 1) {
        int u = __shfl_up_sync(0xffffffff, v, off);
        if (lane >= off)
            v += u;
    }
    return v;
}

__global__ void inclusive_scan_warp(int n, const int* in, int* out)
{
    __shared__ int warp_tot[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = warp_inclusive_scan((i < n) ? in[i] : 0);
    if (lane == 31)
        warp_tot[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int nw = blockDim.x >> 5;
        int t = (lane < nw) ? warp_tot[lane] : 0;
        warp_tot[lane] = warp_inclusive_scan(t);
    }
    __syncthreads();
    if (warp > 0)
        v += warp_tot[warp - 1];
    if (i < n)
        out[i] = v;
}

__global__ void bitonic_sort_block(int n, int* data)
{
    __shared__ int s[512];
    int base = blockIdx.x * 512;
    for (int k = threadIdx.x; k < 512; k += blockDim.x)
        s[k] = (base + k < n) ? data[base + k] : INT_MAX;
    __syncthreads();
    for (int size = 2; size <= 512; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int t = threadIdx.x; t < 256; t += blockDim.x) {
                // pair (a, b) with b = a + stride, a's stride bit clear
                int a = 2 * t - (t & (stride - 1));
                int b = a + stride;
                bool ascending = (a & size) == 0;
                int x = s[a], y = s[b];
                if ((x > y) == ascending) {
                    s[a] = y;
                    s[b] = x;
                }
            }
            __syncthreads();
        }
    }
    for (int k = threadIdx.x; k < 512; k += blockDim.x)
        if (base + k < n)
            data[base + k] = s[k];
}
