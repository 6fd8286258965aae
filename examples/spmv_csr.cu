// Sparse matrix-vector product y = A x, A in CSR form (row_ptr[rows + 1],
// col_idx[nnz], vals[nnz]), f32.
// spmv_csr_scalar: one thread per row, any launch shape.
// spmv_csr_vector: one warp per row (blockDim.x a multiple of 32), the row's
//   nonzeros strided over the lanes and summed with __shfl_down_sync.

// Sum of vals[k] * x[col_idx[k]] for k in [begin, end) with the given step.
// Kept out of line so the PTX has a real .func call with several parameters.
__device__ __noinline__ float row_dot(const int* col_idx, const float* vals, const float* x,
                                      int begin, int end, int step)
{
    float acc = 0.0f;
    for (int k = begin; k < end; k += step)
        acc += vals[k] * x[col_idx[k]];
    return acc;
}

__global__ void spmv_csr_scalar(int rows, const int* row_ptr, const int* col_idx,
                                const float* vals, const float* x, float* y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows)
        y[r] = row_dot(col_idx, vals, x, row_ptr[r], row_ptr[r + 1], 1);
}

__global__ void spmv_csr_vector(int rows, const int* row_ptr, const int* col_idx,
                                const float* vals, const float* x, float* y)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= rows)
        return;  // whole warps leave together
    float acc = row_dot(col_idx, vals, x, row_ptr[warp] + lane, row_ptr[warp + 1], 32);
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_down_sync(0xffffffff, acc, o);
    if (lane == 0)
        y[warp] = acc;
}
