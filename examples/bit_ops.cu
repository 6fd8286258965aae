// Integer bit-manipulation intrinsics, elementwise, any launch shape.
// bit_ops_u32: out[6*i + k] for k = popc, clz, brev, byte_perm, funnelshift
//   left, funnelshift right (clamp) of x[i] and y[i].
// bit_ops_u64: 64-bit popc, clz, brev and ffs.
// dp4a_dot: out[i] = __dp4a(a[i], b[i], acc[i]) (signed) plus
//   __dp2a_lo (unsigned 16x8).

__global__ void bit_ops_u32(int n, const unsigned* x, const unsigned* y, unsigned* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned a = x[i], b = y[i];
        unsigned* o = out + 6 * i;
        o[0] = __popc(a);
        o[1] = __clz(a);
        o[2] = __brev(a);
        o[3] = __byte_perm(a, b, 0x3715);
        o[4] = __funnelshift_l(a, b, b & 63);
        o[5] = __funnelshift_rc(a, b, b >> 24);
    }
}

extern "C" __global__ void bit_ops_u64(int n, const unsigned long long* x, int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long v = x[i];
        out[4 * i + 0] = __popcll(v);
        out[4 * i + 1] = __clzll(v);
        out[4 * i + 2] = (int)(__brevll(v) >> 32);
        out[4 * i + 3] = __ffsll((long long)v);
    }
}

__global__ void dp4a_dot(int n, const int* a, const int* b, const int* acc, int* out,
                         unsigned* out2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __dp4a(a[i], b[i], acc[i]);
        out2[i] = __dp2a_lo((unsigned)a[i], (unsigned)b[i], (unsigned)acc[i]);
    }
}
