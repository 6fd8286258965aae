// Atomics of many kinds on global memory. Results are independent of the
// order in which threads run (for atomic_add_f64 when the inputs are
// integer-valued doubles small enough to add exactly). Any launch shape.

// Float max through an atomicCAS loop on the bit pattern.
__device__ float atomic_max_float(float* addr, float v)
{
    int* p = reinterpret_cast<int*>(addr);
    int old = *p, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v)
            break;
        old = atomicCAS(p, assumed, __float_as_int(v));
    } while (old != assumed);
    return __int_as_float(old);
}

__global__ void atomic_cas_fmax(int n, const float* x, float* result)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomic_max_float(result, x[i]);
}

// result[0] = max, result[1] = min (int); uresult[0] = max, uresult[1] = min (unsigned).
__global__ void atomic_min_max(int n, const int* x, int* result, unsigned* uresult)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = x[i];
        atomicMax(&result[0], v);
        atomicMin(&result[1], v);
        atomicMax(&uresult[0], (unsigned)v);
        atomicMin(&uresult[1], (unsigned)v);
    }
}

// bits[0] &= x, bits[1] |= x, bits[2] ^= x over all elements.
extern "C" __global__ void atomic_bitwise(int n, const unsigned* x, unsigned* bits)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = x[i];
        atomicAnd(&bits[0], v);
        atomicOr(&bits[1], v);
        atomicXor(&bits[2], v);
    }
}

// Counts distinct keys in [0, nkeys): the thread whose atomicExch flips
// seen[key] from 0 bumps *count (atomicInc wrapping at 0xffffffff).
__global__ void atomic_exch_unique(int n, const int* keys, int* seen, unsigned* count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (atomicExch(&seen[keys[i]], 1) == 0)
            atomicInc(count, 0xffffffffu);
    }
}

// 64-bit integer sum and f64 sum.
__global__ void atomic_add_u64(int n, const unsigned long long* x, unsigned long long* sum)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(sum, x[i]);
}

__global__ void atomic_add_f64(int n, const double* x, double* sum)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(sum, x[i]);
}

// counters[j] -= sum of x[i] over i with i % m == j (atomicSub, lowered by nvcc
// to an atom.add of the negated value).
__global__ void atomic_sub_counters(int n, int m, const int* x, int* counters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicSub(&counters[i % m], x[i]);
}
