// Microbenchmarks for xcc's cycle model (backend/timing.py), in the style of Wong et al.,
// "Demystifying GPU Microarchitecture through Microbenchmarking" (ISPASS 2010) and Jia et al.,
// "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (2018). bench/microbench.py
// runs them and derives latencies, issue rates, bank-conflict wavefronts and sectors per request;
// tests/test_microbench.py checks them against the machine description (backend/machines/xg1.toml).
//
// Every measurement is a slope: the same kernel at two sizes (a template instance per size for the
// straight-line chains, a trip count for the memory chases), so launch and drain costs cancel.
// The chains are inline `asm volatile` so that nvcc keeps every instruction, in order.

template <int N>
__device__ __forceinline__ float ffma_chain(float a, float b, float c) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a) : "f"(b), "f"(c));
  return a;
}

template <int N>
__device__ __forceinline__ unsigned alu_chain(unsigned a, unsigned b) {
#pragma unroll
  for (int i = 0; i < N; i += 2) {  // IADD3, LOP3, IADD3, ...
    asm volatile("add.s32 %0, %0, %1;" : "+r"(a) : "r"(b));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(a) : "r"(b));
  }
  return a;
}

template <int N>
__device__ __forceinline__ float mufu_chain(float a) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("sin.approx.f32 %0, %0;" : "+f"(a));  // MUFU.SIN, bounded
  return a;
}

template <int N>
__device__ __forceinline__ double dfma_chain(double a, double b, double c) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(a) : "d"(b), "d"(c));
  return a;
}

// Dependent chains, one warp: cycles per instruction = the class's latency.
#define LATENCY_KERNELS(N)                                                                  \
  extern "C" __global__ void ffma_chain_##N(float *out, float b, float c) {                 \
    out[threadIdx.x] = ffma_chain<N>((float)threadIdx.x, b, c);                             \
  }                                                                                         \
  extern "C" __global__ void alu_chain_##N(unsigned *out, unsigned b) {                     \
    out[threadIdx.x] = alu_chain<N>(threadIdx.x, b);                                        \
  }                                                                                         \
  extern "C" __global__ void mufu_chain_##N(float *out, float x) {                          \
    out[threadIdx.x] = mufu_chain<N>(x + (float)threadIdx.x);                               \
  }                                                                                         \
  extern "C" __global__ void dfma_chain_##N(double *out, double b, double c) {              \
    out[threadIdx.x] = dfma_chain<N>((double)threadIdx.x, b, c);                            \
  }

LATENCY_KERNELS(64)
LATENCY_KERNELS(128)

// Independent streams, many warps (launch one CTA of 1024 threads = 8 warps per scheduler):
// instructions per cycle per SM = subpartitions * the pipe's issue rate. The set-up uses no other
// pipe (no int -> float conversion), so it cannot overlap the streams differently at each size.
template <int R>
__device__ __forceinline__ void ffma_streams(float (&a)[8], float b, float c) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int k = 0; k < 8; ++k) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a[k]) : "f"(b), "f"(c));
}

template <int R>
__device__ __forceinline__ void alu_streams(unsigned (&a)[8], unsigned b) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int k = 0; k < 8; ++k) asm volatile("add.s32 %0, %0, %1;" : "+r"(a[k]) : "r"(b));
}

template <int R>
__device__ __forceinline__ void mufu_streams(float (&a)[4]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int k = 0; k < 4; ++k) asm volatile("sin.approx.f32 %0, %0;" : "+f"(a[k]));
}

template <int R>
__device__ __forceinline__ void dfma_streams(double (&a)[4], double b, double c) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int k = 0; k < 4; ++k) asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(a[k]) : "d"(b), "d"(c));
}

#define THROUGHPUT_KERNELS(R)                                                               \
  extern "C" __global__ void ffma_streams_##R(float *out, float b, float c) {               \
    float a[8];                                                                             \
    for (int k = 0; k < 8; ++k) a[k] = c + (float)k;                                        \
    ffma_streams<R>(a, b, c);                                                               \
    float s = 0.0f;                                                                         \
    for (int k = 0; k < 8; ++k) s += a[k];                                                  \
    out[threadIdx.x] = s;                                                                   \
  }                                                                                         \
  extern "C" __global__ void alu_streams_##R(unsigned *out, unsigned b) {                   \
    unsigned a[8];                                                                          \
    for (int k = 0; k < 8; ++k) a[k] = b ^ k;                                               \
    alu_streams<R>(a, b);                                                                   \
    out[threadIdx.x] = ((a[0] ^ a[1]) ^ (a[2] ^ a[3])) ^ ((a[4] ^ a[5]) ^ (a[6] ^ a[7]));   \
  }                                                                                         \
  extern "C" __global__ void mufu_streams_##R(float *out, float x) {                        \
    float a[4];                                                                             \
    for (int k = 0; k < 4; ++k) a[k] = x + (float)k;                                        \
    mufu_streams<R>(a);                                                                     \
    out[threadIdx.x] = (a[0] + a[1]) + (a[2] + a[3]);                                       \
  }                                                                                         \
  extern "C" __global__ void dfma_streams_##R(double *out, double b, double c) {            \
    double a[4];                                                                            \
    for (int k = 0; k < 4; ++k) a[k] = c + (double)k;                                       \
    dfma_streams<R>(a, b, c);                                                               \
    out[threadIdx.x] = (a[0] + a[1]) + (a[2] + a[3]);                                       \
  }

THROUGHPUT_KERNELS(16)
THROUGHPUT_KERNELS(32)

// Tensor cores: mma.sync m16n8k16 (f16 inputs, f32 accumulators). xcc computes one PTX mma as two
// HMMA.16816.F32 halves (rows groupID and groupID + 8 of D), each depending only on its own half of C.
// The dependent chain (one warp): cycles per mma = the tensor latency (the second half issues a pipe
// interval after the first and waits on its own predecessor, so it overlaps). The independent
// accumulators (one CTA of 32 warps = 8 per scheduler, 2 accumulators = 4 HMMA chains each): HMMA
// halves per cycle per sub-partition = [issue] tensor; 2 * 8 * 8 * 16 = 2048 FLOP each. Two, not
// four, accumulators: with eight chains a warp's HMMAs share xcc's six scoreboards round-robin, and a
// scoreboard waits for all its pending writes, so each HMMA would wait for the one two before it
// (two in flight per warp: 16 per 30 cycles per scheduler, barely above the pipe's rate).
// bench/microbench.py runs the throughput kernel with loose round-robin warp scheduling: under
// greedy-then-oldest the youngest warps starve, then finish alone, latency-bound, a tail that grows
// with R.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int N>
__device__ __forceinline__ void mma_chain(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#pragma unroll
  for (int i = 0; i < N; ++i) mma_16816(d, a, b);
}

template <int R>
__device__ __forceinline__ void mma_streams(float (&d)[2][4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int k = 0; k < 2; ++k) mma_16816(d[k], a, b);
}

// The A and B fragments are the bits of an initial mma's D (half 0: d0, d1; half 1: d2, d3): xcc moves
// HMMA operands that are separate 32-bit values into a register pair (two MOVs per pair, each time),
// unless they already are the two halves of an earlier HMMA's D pair, and the copies would make the
// throughput kernel issue-bound (5 issue slots per HMMA). a, b: f16x2 bit patterns of the initial mma's
// fragments (small values keep every accumulator finite).
__device__ __forceinline__ void mma_fragments(unsigned (&fa)[4], unsigned (&fb)[2], unsigned a, unsigned b) {
  const unsigned a0[4] = {a, a, a, a}, b0[2] = {b, b};
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  mma_16816(d, a0, b0);
  fa[0] = __float_as_uint(d[0]), fa[1] = __float_as_uint(d[2]);  // A pairs (a0, a2), (a1, a3)
  fa[2] = __float_as_uint(d[1]), fa[3] = __float_as_uint(d[3]);
  fb[0] = __float_as_uint(d[0]), fb[1] = __float_as_uint(d[1]);  // B pair (b0, b1)
}

#define TENSOR_LATENCY_KERNELS(N)                                                           \
  extern "C" __global__ void hmma_chain_##N(float *out, unsigned a, unsigned b) {           \
    unsigned fa[4], fb[2];                                                                  \
    mma_fragments(fa, fb, a, b);                                                            \
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};                                                  \
    mma_chain<N>(d, fa, fb);                                                                \
    out[threadIdx.x] = (d[0] + d[1]) + (d[2] + d[3]);                                       \
  }

#define TENSOR_THROUGHPUT_KERNELS(R)                                                        \
  extern "C" __global__ void hmma_streams_##R(float *out, unsigned a, unsigned b) {         \
    unsigned fa[4], fb[2];                                                                  \
    mma_fragments(fa, fb, a, b);                                                            \
    float d[2][4];                                                                          \
    for (int k = 0; k < 2; ++k)                                                             \
      for (int j = 0; j < 4; ++j) d[k][j] = (float)k;                                       \
    mma_streams<R>(d, fa, fb);                                                              \
    float s = 0.0f;                                                                         \
    for (int k = 0; k < 2; ++k) s += (d[k][0] + d[k][1]) + (d[k][2] + d[k][3]);             \
    out[threadIdx.x] = s;                                                                   \
  }

TENSOR_LATENCY_KERNELS(64)
TENSOR_LATENCY_KERNELS(128)
TENSOR_THROUGHPUT_KERNELS(16)
TENSOR_THROUGHPUT_KERNELS(32)

// Memory throughput: one CTA of 16 or 32 warps (the slope is over the CTA size, so that every
// warp's own prologue and epilogue stay the same), K independent loads per thread, issued back to
// back, one instruction each (the offsets are immediates), then summed by a balanced tree.
// Global: thread t's k-th load reads in[t * stride + k * 32768]: 32-byte sectors per cycle per SM =
// [memory] l1_sectors_per_cycle. Shared: lane l's k-th load reads word (l * stride) % 1024 + k:
// shared wavefronts per cycle per SM (the model's shared-memory unit takes one per cycle).
template <int K, int k = 0>  // v[k] = the float at p + k * 128 KiB, ... (immediate offsets)
__device__ __forceinline__ void gloads(float (&v)[K], const float *p) {
  if constexpr (k < K) {
    asm volatile("ld.global.f32 %0, [%1+%2];" : "=f"(v[k]) : "l"(p), "n"(k * 131072));
    gloads<K, k + 1>(v, p);
  }
}

template <int K, int k = 0>  // v[k] = the float at shared address a + 4 k, ...
__device__ __forceinline__ void sloads(float (&v)[K], unsigned a) {
  if constexpr (k < K) {
    asm volatile("ld.shared.f32 %0, [%1+%2];" : "=f"(v[k]) : "r"(a), "n"(4 * k));
    sloads<K, k + 1>(v, a);
  }
}

template <int N>  // v[0] + ... + v[N-1] as a balanced tree (nvcc keeps the association of floats)
__device__ __forceinline__ float tree_sum(const float *v) {
  if constexpr (N == 1) return v[0];
  else return tree_sum<N / 2>(v) + tree_sum<N - N / 2>(v + N / 2);
}

template <int K>
__device__ __forceinline__ float gload_streams(const float *in, int stride) {
  float v[K];
  gloads<K>(v, in + threadIdx.x * stride);
  return tree_sum<K>(v);
}

template <int K>
__device__ __forceinline__ float sload_streams(int stride) {
  __shared__ float buf[1024 + K];
  float v[K];
  sloads<K>(v, (unsigned)__cvta_generic_to_shared(&buf[(threadIdx.x * stride) % 1024]));
  return tree_sum<K>(v);
}

#define MEMORY_THROUGHPUT_KERNELS(K)                                                        \
  extern "C" __global__ void gload_streams_##K(const float *in, float *out, int stride) {   \
    out[threadIdx.x] = gload_streams<K>(in, stride);                                        \
  }                                                                                         \
  extern "C" __global__ void sload_streams_##K(float *out, int stride) {                    \
    out[threadIdx.x] = sload_streams<K>(stride);                                            \
  }

MEMORY_THROUGHPUT_KERNELS(32)

// Pointer chase in global memory, one thread: `p` is the address of the first element of a cycle
// of 64-bit pointers (each in its own 32-byte sector); 16 * iters dependent loads. chase_global
// loads with .cg (cached in L2, not L1): a sector's first touch in a launch goes to DRAM, later ones
// hit in L2. chase_global_ca loads with .ca (the default): later touches hit in the SM's L1 while
// the cycle fits in it.
#define CHASE_GLOBAL(NAME, CACHE)                                                           \
  extern "C" __global__ void NAME(unsigned long long p, int iters, unsigned long long *out) { \
    for (int i = 0; i < iters; ++i) {                                                       \
      _Pragma("unroll") for (int k = 0; k < 16; ++k)                                        \
        asm volatile("ld.global." CACHE ".u64 %0, [%0];" : "+l"(p));                        \
    }                                                                                       \
    *out = p;                                                                               \
  }
CHASE_GLOBAL(chase_global, "cg")
CHASE_GLOBAL(chase_global_ca, "ca")

// Pointer chase in shared memory, one thread: a cycle of `n` shared addresses `stride` words apart,
// built by the thread itself, then 16 * iters dependent loads.
extern "C" __global__ void chase_shared(unsigned *out, int n, int stride, int iters) {
  __shared__ unsigned buf[4096];
  for (int i = 0; i < n; ++i)
    buf[i * stride] = (unsigned)__cvta_generic_to_shared(&buf[((i + 1) % n) * stride]);
  unsigned a = (unsigned)__cvta_generic_to_shared(&buf[0]);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 16; ++k) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
  }
  *out = a;
}

// Bank conflicts, one warp: lane l reads word l * stride (each word holds its own address, so the
// loads form a chain), 16 * iters times. Wavefronts per request = the most distinct words that
// fall in one bank: gcd(stride, 32) for 32 banks.
extern "C" __global__ void smem_stride(unsigned *out, int stride, int iters) {
  __shared__ unsigned buf[32 * 33];
  unsigned a = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x * stride]);
  buf[threadIdx.x * stride] = a;
  __syncwarp();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 16; ++k) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
  }
  out[threadIdx.x] = a;
}

// Coalescing: thread i of the grid loads in[i * stride] and stores it to out[i]; 32-byte sectors
// per warp request: 4 for stride 1 (128 contiguous bytes), 32 from stride 8 floats on.
extern "C" __global__ void gload_stride(const float *in, float *out, int stride) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[(size_t)i * stride];
}

// Tensor cores, int8: mma.sync m16n8k32 (s8 inputs, s32 accumulators), two IMMA.16832 halves of 4096 ops
// (2 * 8 * 8 * 32) each; as the HMMA throughput kernel (32 warps, 2 accumulators each, the fragments the
// bits of an initial mma's D, run with loose round-robin scheduling): int8 ops per cycle per SM =
// [tensor] i8. The accumulators wrap modulo 2^32 (no .satfinite).
__device__ __forceinline__ void imma_16832(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int R>
__device__ __forceinline__ void imma_streams(int (&d)[2][4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int k = 0; k < 2; ++k) imma_16832(d[k], a, b);
}

#define IMMA_THROUGHPUT_KERNELS(R)                                                          \
  extern "C" __global__ void imma_streams_##R(int *out, unsigned a, unsigned b) {           \
    const unsigned a0[4] = {a, a, a, a}, b0[2] = {b, b};                                    \
    int d0[4] = {0, 0, 0, 0};                                                               \
    imma_16832(d0, a0, b0);                                                                 \
    const unsigned fa[4] = {(unsigned)d0[0], (unsigned)d0[2], (unsigned)d0[1], (unsigned)d0[3]}; \
    const unsigned fb[2] = {(unsigned)d0[0], (unsigned)d0[1]};                              \
    int d[2][4];                                                                            \
    for (int k = 0; k < 2; ++k)                                                             \
      for (int j = 0; j < 4; ++j) d[k][j] = k;                                              \
    imma_streams<R>(d, fa, fb);                                                             \
    int s = 0;                                                                              \
    for (int k = 0; k < 2; ++k) s += (d[k][0] + d[k][1]) + (d[k][2] + d[k][3]);             \
    out[threadIdx.x] = s;                                                                   \
  }

IMMA_THROUGHPUT_KERNELS(16)
IMMA_THROUGHPUT_KERNELS(32)

// Device-wide bandwidths (the L2 and the DRAM are shared by all SMs). DRAM: every thread of the grid
// reads 8 16-byte pieces no other thread reads, in[k * threads + i] (each warp request 16 sectors, every
// sector touched once: a DRAM read), and writes nothing (a store under a condition that positive inputs
// never meet keeps the loads live); launched with one and two CTAs of 256 threads per SM, the slope of
// DRAM bytes over cycles is [memory] dram_bytes_per_cycle.
// L2: every CTA (128 threads, one per SM) reads the same 16 KiB `passes` times, with ld.global.cg
// (cached in L2 only, not in L1, as it would be on the hardware); after the first pass every sector
// hits, and the slope of L2 read bytes over cycles, over the passes, is [memory] l2_bytes_per_cycle.
__device__ __forceinline__ float ldg_v4_x(const float4 *p) {  // the x of a 16-byte load (all 4 loaded)
  float4 r;
  asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r.x;
}

__device__ __forceinline__ float ldcg_v4_x(const float4 *p) {
  float4 r;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r.x;
}

extern "C" __global__ void dram_stream(const float4 *in, float *out) {
  unsigned n = gridDim.x * blockDim.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  float v[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) v[k] = ldg_v4_x(in + (size_t)k * n + i);
  float s = tree_sum<8>(v);
  if (s == 0.0f) out[i] = s;  // never, for positive inputs: the loads stay live and DRAM carries reads only
}

extern "C" __global__ void l2_stream(const float4 *in, float *out, int passes) {
  float s = 0.0f;
  for (int p = 0; p < passes; ++p) {
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = ldcg_v4_x(in + k * blockDim.x + threadIdx.x);
    s += tree_sum<8>(v);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
