// out (cols x rows) = transpose of in (rows x cols), via a padded shared tile.
// Launch with blockDim = (32, 8), grid = (ceil(cols/32), ceil(rows/32)).
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_shared(int rows, int cols, const float* in, float* out)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];

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
