// out (cols x rows) = transpose of in (rows x cols), via a shared tile.
// Launch with blockDim = (32, 8), grid = (ceil(cols/32), ceil(rows/32)).
//
// transpose_shared pads the tile to 32 x 33 words: a warp reading a tile column touches 32 words
// that lie in 32 different banks. transpose_shared_unpadded uses a 32 x 32 tile: the same column
// read puts all 32 words in one bank (a 32-way bank conflict), the textbook case of
// NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++".
#define TILE_DIM 32
#define BLOCK_ROWS 8

template <int PAD>
__device__ __forceinline__ void transpose_tile(int rows, int cols, const float* in, float* out)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + PAD];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < cols && (y + j) < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    }
    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < rows && (y + j) < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

__global__ void transpose_shared(int rows, int cols, const float* in, float* out)
{
    transpose_tile<1>(rows, cols, in, out);
}

__global__ void transpose_shared_unpadded(int rows, int cols, const float* in, float* out)
{
    transpose_tile<0>(rows, cols, in, out);
}
