#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Two-phase grid reduction: every block writes its partial sum, the grid syncs, block 0 sums the partials,
// the grid syncs again and every thread scales its element by the total.
extern "C" __global__ void grid_sync_normalize(int n, const float *x, float *partial, float *out)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int k = 0; k < blockDim.x; k++) t += s[k];
        partial[blockIdx.x] = t;
    }
    grid.sync();
    if (i < n) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) total += partial[b];
        out[i] = x[i] / total;
    }
}

// `iters` smoothing steps a[i] = (a[i-1] + a[i] + a[i+1]) / 3 (ends clamped) over ping-pong buffers, a grid
// barrier before each step after the first: a grid-stride loop, so any co-resident grid; the result is in
// buf[iters % 2].  CTAs with fewer elements loop back and wait at the barrier while the others still work
// further down the loop (the launch engine must let those run).
extern "C" __global__ void grid_sync_smooth(int n, int iters, float *buf0, float *buf1)
{
    cg::grid_group grid = cg::this_grid();
    for (int it = 0; it < iters; it++) {
        if (it > 0) grid.sync();
        const float *src = (it & 1) ? buf1 : buf0;
        float *dst = (it & 1) ? buf0 : buf1;
        for (int i = grid.thread_rank(); i < n; i += grid.size()) {
            float l = src[i > 0 ? i - 1 : 0], c = src[i], r = src[i < n - 1 ? i + 1 : n - 1];
            dst[i] = (l + c + r) / 3.0f;
        }
    }
}
