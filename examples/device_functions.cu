// Real (non-inlined) device-function calls, recursion and dynamic shared
// memory.
// noinline_calls: out[i] = blend(...) + clamp_index(...) via two __noinline__
//   functions with several parameters and return values, any launch shape.
// recursive_fib: out[i] = fib(in[i] % 20) computed by a recursive function.
// dyn_smem_reverse: reverses each block's chunk of blockDim.x elements through
//   extern __shared__ memory (launch with blockDim.x * sizeof(int) bytes);
//   the tail block's chunk is the n - base valid elements, reversed.

__device__ __noinline__ float blend(float a, float b, float c, float w0, float w1, int mode)
{
    float r = w0 * a + w1 * b;
    if (mode & 1)
        r -= c;
    else
        r += c * 0.5f;
    return r;
}

__device__ __noinline__ int clamp_index(int i, int lo, int hi, const int* table)
{
    int j = i < lo ? lo : (i > hi ? hi : i);
    return table[j - lo];
}

__global__ void noinline_calls(int n, const float* a, const float* b, const int* table,
                               int table_len, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < 4; ++k)
        acc += blend(a[i], b[i], (float)k, 0.25f * k, 1.0f - 0.25f * k, i + k);
    out[i] = acc + (float)clamp_index(i - 3, 0, table_len - 1, table);
}

__device__ __noinline__ unsigned fib(unsigned k)
{
    if (k < 2)
        return k;
    return fib(k - 1) + fib(k - 2);
}

extern "C" __global__ void recursive_fib(int n, const unsigned* in, unsigned* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = fib(in[i] % 20u);
}

__global__ void dyn_smem_reverse(int n, int* data)
{
    extern __shared__ int sbuf[];
    int base = blockIdx.x * blockDim.x;
    int len = min((int)blockDim.x, n - base);
    int t = threadIdx.x;
    if (t < len)
        sbuf[t] = data[base + t];
    __syncthreads();
    if (t < len)
        data[base + t] = sbuf[len - 1 - t];
}
