// Texture and surface objects (CUDA 12/13): sampled 2D reads (point or linear filtering, any address mode),
// 1D fetches from linear memory, and a 2D surface read-modify-write.  Host side: tests/test_texture.py through
// xcc's driver API (cuTexObjectCreate / cuSurfObjectCreate).
#include <cuda_runtime.h>

// out[y * w + x] = tex2D(tex, u, v) at the pixel centres scaled by `scale` and shifted by `shift`
// (normalised or not, as the texture object says).
extern "C" __global__ void sample2d(cudaTextureObject_t tex, float* out, int w, int h, float scale, float shift,
                                   int normalized) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float u = (x + 0.5f) * scale + shift;
    float v = (y + 0.5f) * scale - shift;
    if (normalized) { u /= w; v /= h; }
    out[y * w + x] = tex2D<float>(tex, u, v);
}

// out[i] = 2 * tex1Dfetch(tex, i + shift): an integer-indexed fetch from linear memory (out of range: 0).
extern "C" __global__ void fetch1d(cudaTextureObject_t tex, float* out, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * tex1Dfetch<float>(tex, i + shift);
}

// a 4-channel fetch of an int4 texture at integer-valued coordinates (element read mode)
extern "C" __global__ void sample2d_int4(cudaTextureObject_t tex, int4* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    out[y * w + x] = tex2D<int4>(tex, x + 0.5f, y + 0.5f);
}

// surf[y][x] = surf[y][x] * 3 + x - y (a surface read-modify-write; the x coordinate is in bytes)
extern "C" __global__ void surf_update(cudaSurfaceObject_t surf, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float v = surf2Dread<float>(surf, x * 4, y);
    surf2Dwrite(v * 3.0f + x - y, surf, x * 4, y);
}

// out[i] = surf1Dread at byte i*4 + shift with zero-fill out of range (cudaBoundaryModeZero)
extern "C" __global__ void surf_read_zero(cudaSurfaceObject_t surf, int* out, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = surf1Dread<int>(surf, (i + shift) * 4, cudaBoundaryModeZero);
}
