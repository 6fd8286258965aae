// Kernel parameters and calls the plain corpus lacks.
// affine_struct: a struct passed by value (a .param .align 8 .b8 [24] byte array):
//   y[i] = (float)min((double)(p.scale * x[i * p.stride] + p.offset), p.clamp_hi) for i < p.n.
// apply_fnptr: calls through a __device__ table of function pointers (an initialiser of function
//   addresses, a call through a register with a .callprototype): y[i] = fn_table[sel[i] % 3](x[i]),
//   with op_square(x) = x * x, op_neg_half(x) = -0.5f * x, op_abs_plus1(x) = fabsf(x) + 1.
struct Affine { int n; float scale; float offset; int stride; double clamp_hi; };

__global__ void affine_struct(Affine p, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) {
        double v = (double)(p.scale * x[i * p.stride] + p.offset);
        y[i] = (float)(v > p.clamp_hi ? p.clamp_hi : v);
    }
}

typedef float (*unary_fn)(float);
__device__ __noinline__ float op_square(float x) { return x * x; }
__device__ __noinline__ float op_neg_half(float x) { return -0.5f * x; }
__device__ __noinline__ float op_abs_plus1(float x) { return fabsf(x) + 1.0f; }
__device__ unary_fn fn_table[3] = {op_square, op_neg_half, op_abs_plus1};

__global__ void apply_fnptr(int n, const int* sel, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unary_fn f = fn_table[sel[i] % 3];
        y[i] = f(x[i]);
    }
}
