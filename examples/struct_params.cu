// Kernel parameters as memory: CUTLASS-style kernels taking one large Params struct by value
// (a .param .align 8 .b8 params[1800], as CUTLASS passes its Params), read with run-time indices.
// struct_params_gemm: D = alpha * A x B + beta * C, then D[i][j] *= col_scale[perm[j % 16]]:
//   A is M x K (row stride lda), B is K x N (ldb), C and D are M x N (ldc); one thread per element.
//   The run-time indices make nvcc address the by-value struct (mov.b64 %rd, param; ld.param [%rd+off]).
// struct_params_grid_constant: the same through a __grid_constant__ Params whose address is taken and
//   passed to a __noinline__ epilogue (cvta.param.u64, then generic loads of the struct).
// struct_params_escape: a by-value Params whose address escapes: nvcc copies it to local memory
//   (ld.param.v2 through a moving param-space address) and passes the copy's generic address.
struct Params {
    const float* A;
    const float* B;
    const float* C;
    float* D;
    int M, N, K, lda, ldb, ldc;
    float alpha, beta;
    int perm[16];
    float col_scale[418];
};  // 1800 bytes

__device__ __noinline__ float epilogue(const Params* p, float acc, int i, int j)
{
    float c = p->C[i * p->ldc + j];
    return (p->alpha * acc + p->beta * c) * p->col_scale[p->perm[j % 16]];
}

__device__ __forceinline__ float dot(const Params& p, int i, int j)
{
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k)
        acc += p.A[i * p.lda + k] * p.B[k * p.ldb + j];
    return acc;
}

__global__ void struct_params_gemm(Params p)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y;
    if (i < p.M && j < p.N) {
        float acc = dot(p, i, j);
        float c = p.C[i * p.ldc + j];
        p.D[i * p.ldc + j] = (p.alpha * acc + p.beta * c) * p.col_scale[p.perm[j % 16]];
    }
}

__global__ void struct_params_grid_constant(const __grid_constant__ Params p)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y;
    if (i < p.M && j < p.N)
        p.D[i * p.ldc + j] = epilogue(&p, dot(p, i, j), i, j);
}

__global__ void struct_params_escape(Params p)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y;
    if (i < p.M && j < p.N)
        p.D[i * p.ldc + j] = epilogue(&p, dot(p, i, j), i, j);
}

// Pointer-free epilogue parameters (the form the kernel-case harness passes as one numpy structured scalar):
// struct_params_lut: y[i] = alpha * table[perm[idx[i] & 31]] + beta * table[idx[i] % 415] for i < p.n,
//   the struct by value and indexed at run time (ld.param through a register address);
// struct_params_lut_grid_constant: the same through a __grid_constant__ Lut whose address a __noinline__
//   helper takes (cvta.param.u64, generic loads).
struct Lut {
    int n;
    float alpha, beta;
    int perm[32];
    float table[415];
};  // 1800 bytes

__device__ __noinline__ float lut_value(const Lut* p, int k)
{
    return p->alpha * p->table[p->perm[k & 31]] + p->beta * p->table[k % 415];
}

__global__ void struct_params_lut(Lut p, const int* idx, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) {
        int k = idx[i];
        y[i] = p.alpha * p.table[p.perm[k & 31]] + p.beta * p.table[k % 415];
    }
}

__global__ void struct_params_lut_grid_constant(const __grid_constant__ Lut p, const int* idx, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        y[i] = lut_value(&p, idx[i]);
}
