// Extended-precision integer arithmetic: carry chains (add.cc, addc, sub.cc, subc, mad.lo.cc,
// madc.hi, ...). nvcc lowers unsigned/signed __int128 arithmetic to them; the inline-asm kernels
// write chains by hand, including one whose carry flag crosses a branch.
#include <cstdint>

// out[2i], out[2i+1] = low and high 64 bits of a[i] * b[i] + c[i] (128-bit).
extern "C" __global__ void u128_mul_add(int n, const unsigned long long* a, const unsigned long long* b,
                                        const unsigned long long* c, unsigned long long* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned __int128 r = (unsigned __int128)a[i] * b[i] + c[i];
        out[2 * i] = (unsigned long long)r;
        out[2 * i + 1] = (unsigned long long)(r >> 64);
    }
}

// Each thread sums its row of m signed 128-bit values (lo, hi pairs) and subtracts a bias, wrapping.
extern "C" __global__ void s128_row_sum(int n, int m, const long long* x, long long bias, long long* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __int128 acc = 0;
        for (int k = 0; k < m; ++k) {
            const long long* v = x + 2 * (i * m + k);
            __int128 w = ((__int128)v[1] << 64) | (unsigned long long)v[0];
            acc += w;
        }
        acc -= (__int128)bias;
        out[2 * i] = (long long)acc;
        out[2 * i + 1] = (long long)(acc >> 64);
    }
}

// 256-bit a + b and a - b on 8 x 32-bit limbs (little-endian), one chain each.
extern "C" __global__ void u256_add_sub(int n, const uint32_t* a, const uint32_t* b, uint32_t* sum,
                                        uint32_t* diff)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t* x = a + 8 * i;
    const uint32_t* y = b + 8 * i;
    uint32_t s[8], d[8];
    asm("add.cc.u32 %0, %8, %16;\n\t"
        "addc.cc.u32 %1, %9, %17;\n\t"
        "addc.cc.u32 %2, %10, %18;\n\t"
        "addc.cc.u32 %3, %11, %19;\n\t"
        "addc.cc.u32 %4, %12, %20;\n\t"
        "addc.cc.u32 %5, %13, %21;\n\t"
        "addc.cc.u32 %6, %14, %22;\n\t"
        "addc.u32 %7, %15, %23;"
        : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]), "=r"(s[5]), "=r"(s[6]), "=r"(s[7])
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]),
          "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]));
    asm("sub.cc.u32 %0, %8, %16;\n\t"
        "subc.cc.u32 %1, %9, %17;\n\t"
        "subc.cc.u32 %2, %10, %18;\n\t"
        "subc.cc.u32 %3, %11, %19;\n\t"
        "subc.cc.u32 %4, %12, %20;\n\t"
        "subc.cc.u32 %5, %13, %21;\n\t"
        "subc.cc.u32 %6, %14, %22;\n\t"
        "subc.u32 %7, %15, %23;"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7])
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]),
          "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]));
    for (int k = 0; k < 8; ++k) {
        sum[8 * i + k] = s[k];
        diff[8 * i + k] = d[k];
    }
}

// 64 x 64 -> 128-bit product on 32-bit limbs with mad.lo.cc / madc.hi / madc.hi.cc / addc.
extern "C" __global__ void u64_mul_wide_limbs(int n, const uint2* a, const uint2* b, uint4* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint2 x = a[i], y = b[i];
    uint32_t r0, r1, r2, r3;
    asm("mul.lo.u32 %0, %4, %6;\n\t"
        "mul.hi.u32 %1, %4, %6;\n\t"
        "mad.lo.cc.u32 %1, %4, %7, %1;\n\t"
        "madc.hi.u32 %2, %4, %7, 0;\n\t"
        "mad.lo.cc.u32 %1, %5, %6, %1;\n\t"
        "madc.hi.cc.u32 %2, %5, %6, %2;\n\t"
        "addc.u32 %3, 0, 0;\n\t"
        "mad.lo.cc.u32 %2, %5, %7, %2;\n\t"
        "madc.hi.u32 %3, %5, %7, %3;"
        : "=&r"(r0), "=&r"(r1), "=&r"(r2), "=&r"(r3)
        : "r"(x.x), "r"(x.y), "r"(y.x), "r"(y.y));
    out[i] = make_uint4(r0, r1, r2, r3);
}

// The carry flag across a branch: lo = a + b (sets CF); if flag, lo += 1 with carry-in (sets CF again);
// hi = CF.  Whichever path runs, hi is the carry out of the last .cc instruction on it.
extern "C" __global__ void carry_across_branch(int n, const uint32_t* a, const uint32_t* b,
                                               const uint32_t* flag, uint32_t* lo, uint32_t* hi)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t l, h;
    asm("{\n\t"
        ".reg .pred p;\n\t"
        "add.cc.u32 %0, %2, %3;\n\t"
        "setp.eq.u32 p, %4, 0;\n\t"
        "@p bra SKIP;\n\t"
        "addc.cc.u32 %0, %0, 1;\n"
        "SKIP:\n\t"
        "addc.u32 %1, 0, 0;\n\t"
        "}"
        : "=&r"(l), "=r"(h)
        : "r"(a[i]), "r"(b[i]), "r"(flag[i]));
    lo[i] = l;
    hi[i] = h;
}
