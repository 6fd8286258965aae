// Asynchronous global -> shared copies (cp.async, sm_80+): out[i] = in[i] * scale,
// staged through shared memory tile by tile with a two-stage (double-buffered)
// pipeline. Launch blockDim.x == 128 and any grid; block b handles tiles b,
// b + gridDim.x, ... Each thread only reads back the shared slots it copied.
// cp_async_pipeline: tiles of 128 floats, one 4-byte copy per thread.
// cp_async_asm: tiles of 512 floats, one 16-byte copy per thread (4-byte
//   copies for the ragged tail, so any n works).
#include <cuda_pipeline.h>

#define TILE 128

// __pipeline_memcpy_async / __pipeline_commit / __pipeline_wait_prior.
__global__ void cp_async_pipeline(int n, float scale, const float* in, float* out)
{
    __shared__ float buf[2][TILE];
    int ntiles = (n + TILE - 1) / TILE;
    int t = threadIdx.x;
    int tile = blockIdx.x;
    int stage = 0;
    if (tile < ntiles) {
        int i = tile * TILE + t;
        if (i < n)
            __pipeline_memcpy_async(&buf[0][t], &in[i], sizeof(float));
    }
    __pipeline_commit();
    for (; tile < ntiles; tile += gridDim.x) {
        int next = tile + gridDim.x;
        if (next < ntiles) {
            int j = next * TILE + t;
            if (j < n)
                __pipeline_memcpy_async(&buf[stage ^ 1][t], &in[j], sizeof(float));
        }
        __pipeline_commit();
        __pipeline_wait_prior(1);  // the current tile's group has landed
        __syncthreads();
        int i = tile * TILE + t;
        if (i < n)
            out[i] = buf[stage][t] * scale;
        __syncthreads();  // buf[stage] is refilled next iteration
        stage ^= 1;
    }
    __pipeline_wait_prior(0);
}

// The same with inline PTX: cp.async.ca (4 bytes) / cp.async.cg (16 bytes),
// cp.async.commit_group and cp.async.wait_group, one float4 per thread
// (tiles of 4 * TILE floats).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem)
{
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void cp_async4(void* smem, const void* gmem)
{
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem));
}

extern "C" __global__ void cp_async_asm(int n, float scale, const float* in, float* out)
{
    __shared__ __align__(16) float buf[2][4 * TILE];
    int ntiles = (n + 4 * TILE - 1) / (4 * TILE);
    int t = threadIdx.x;
    int tile = blockIdx.x;
    int stage = 0;
    if (tile < ntiles) {
        int i = tile * 4 * TILE + 4 * t;
        if (i + 3 < n)
            cp_async16(&buf[0][4 * t], &in[i]);
        else
            for (int k = 0; k < 4 && i + k < n; ++k)
                cp_async4(&buf[0][4 * t + k], &in[i + k]);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    for (; tile < ntiles; tile += gridDim.x) {
        int next = tile + gridDim.x;
        if (next < ntiles) {
            int j = next * 4 * TILE + 4 * t;
            if (j + 3 < n)
                cp_async16(&buf[stage ^ 1][4 * t], &in[j]);
            else
                for (int k = 0; k < 4 && j + k < n; ++k)
                    cp_async4(&buf[stage ^ 1][4 * t + k], &in[j + k]);
        }
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::);
        __syncthreads();
        int i = tile * 4 * TILE + 4 * t;
        for (int k = 0; k < 4; ++k)
            if (i + k < n)
                out[i + k] = buf[stage][4 * t + k] * scale;
        __syncthreads();
        stage ^= 1;
    }
    asm volatile("cp.async.wait_all;\n" ::);
}
