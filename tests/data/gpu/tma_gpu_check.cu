// Runs examples/tma_store.cu's kernels on a real Hopper GPU and prints their results as JSON lines, one per case
// ({"case": name, "words": [u32...]}), for tests/test_tma_gpu.py to compare with both xcc engines.  The inputs are
// deterministic formulas that test restates.  Build and run on an sm_90 machine, one case per process (a
// faulting case ends its process's CUDA context; the recording keeps the cases that ran):
//   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -I examples tests/data/gpu/tma_gpu_check.cu -lcuda -o tma_check
//   for i in $(seq 0 62); do ./tma_check $i; done > tests/data/gpu/tma_h200.jsonl
// Recorded on an NVIDIA H200 (driver 580, CUDA 13.0): cases 1, 2, 5, 19 - 22, 36 - 39, 41, 47 and 62 ended with CUDA
// error 715, an illegal instruction at the TMA instruction: each is a tile box whose innermost coordinate is not a
// multiple of 16 bytes, or a tile store at a negative coordinate (the probes at the end tell those rules apart);
// case 62 (an .or reduction into an s64 map) too.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tma_store.cu"

#define CK(x)                                                                                              \
    do {                                                                                                   \
        auto e_ = (x);                                                                                     \
        if (e_ != 0) {                                                                                     \
            fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, (int)e_);                     \
            exit(1);                                                                                       \
        }                                                                                                  \
    } while (0)

static int only = -1, counter = 0;  // run only case number `only` (argv[1]): a fault ends the process's context

static bool wanted() { return only < 0 || counter++ == only; }

static void emit(const char* name, const std::vector<unsigned>& w)
{
    printf("{\"case\": \"%s\", \"words\": [", name);
    for (size_t i = 0; i < w.size(); i++) printf(i ? ", %u" : "%u", w[i]);
    printf("]}\n");
}

// dims / box innermost first; element strides 1; no interleave; no L2 promotion; zero fill
static CUtensorMap tiled(CUtensorMapDataType t, int rank, void* p, const cuuint64_t* dims, int es, const cuuint32_t* box,
                         CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE)
{
    CUtensorMap m;
    cuuint64_t strides[4];
    cuuint64_t s = es;
    for (int d = 0; d < rank - 1; d++) strides[d] = (s *= dims[d]);
    cuuint32_t ones[5] = {1, 1, 1, 1, 1};
    CK(cuTensorMapEncodeTiled(&m, t, rank, p, dims, strides, box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return m;
}

static CUtensorMap im2col(int rank, void* p, const cuuint64_t* dims, const int* lo, const int* hi, int ch, int px)
{
    CUtensorMap m;
    cuuint64_t strides[4];
    cuuint64_t s = 4;
    for (int d = 0; d < rank - 1; d++) strides[d] = (s *= dims[d]);
    cuuint32_t ones[5] = {1, 1, 1, 1, 1};
    CK(cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_UINT32, rank, p, dims, strides, lo, hi, ch, px, ones,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return m;
}

template <class T>
static T* dev(const std::vector<T>& h)
{
    T* p;
    CK(cudaMalloc(&p, h.size() * sizeof(T) + 256));
    CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return p;
}

template <class T>
static std::vector<unsigned> back(T* p, size_t n)
{
    std::vector<unsigned> w(n * sizeof(T) / 4);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(w.data(), p, w.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaFree(p));
    return w;
}

static void store2d(const char* name, int a0, int a1, CUtensorMapSwizzle sw, int rows, int cols, float init)
{
    if (!wanted()) return;
    std::vector<float> x(rows * cols, init), box(16 * 32);
    for (int i = 0; i < 16 * 32; i++) box[i] = i + 0.25f;
    float* dx = dev(x);
    unsigned* din = dev(std::vector<unsigned>((unsigned*)box.data(), (unsigned*)box.data() + box.size()));
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint32_t bx[2] = {32, 16};
    CUtensorMap m = tiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dx, dims, 4, bx, sw);
    Coords c = {{a1, a0, 0, 0, 0}};
    tma_store_box<<<1, 128>>>(m, din, 512, 2, c);
    emit(name, back(dx, x.size()));
    cudaFree(din);
}

static void reduce2d(const char* name, CUtensorMapDataType t, int op)
{
    if (!wanted()) return;
    // (12, 20) tensor of 32-bit words, box (8, 16) at (6, 12): x[i] = (7 i) % 40 - s, box[j] = (13 j) % 40 - s,
    // s = 20 for INT32, else 0; FLOAT32 as those integers / 8
    bool sgn = t == CU_TENSOR_MAP_DATA_TYPE_INT32, fl = t == CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    std::vector<unsigned> x(12 * 20), box(8 * 16);
    for (int i = 0; i < 240; i++) {
        int v = (7 * i) % 40 - (sgn ? 20 : 0);
        float f = v / 8.0f;
        x[i] = fl ? *(unsigned*)&f : (unsigned)v;
    }
    for (int j = 0; j < 128; j++) {
        int v = (13 * j) % 40 - (sgn ? 20 : 0);
        float f = v / 8.0f;
        box[j] = fl ? *(unsigned*)&f : (unsigned)v;
    }
    unsigned *dx = dev(x), *din = dev(box);
    cuuint64_t dims[2] = {20, 12};
    cuuint32_t bx[2] = {16, 8};
    CUtensorMap m = tiled(t, 2, dx, dims, 4, bx);
    tma_reduce_box<<<1, 128>>>(m, din, 128, op, 12, 6);
    emit(name, back(dx, x.size()));
    cudaFree(din);
}

static const unsigned short F16_SPECIAL[16] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7D00,
                                                0x0001, 0x8001, 0x3555, 0x4900, 0xC500, 0x7BFF, 0x0400, 0xFE01};
static const unsigned short BF16_SPECIAL[16] = {0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0x7FA0,
                                                 0x0001, 0x8001, 0x3EAB, 0x4120, 0xC0A0, 0x7F7F, 0x0080, 0xFFC1};

static void reduce_half(const char* name, CUtensorMapDataType t, int op)
{
    // (12, 40) halves, box (8, 32) at (6, 24): x[i] = table[(7 i) % 16], box[j] = table[(13 j) % 16]
    const unsigned short* tab = t == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ? F16_SPECIAL : BF16_SPECIAL;
    if (!wanted()) return;
    std::vector<unsigned short> x(12 * 40), box(8 * 32);
    for (int i = 0; i < 480; i++) x[i] = tab[(7 * i) % 16];
    for (int j = 0; j < 256; j++) box[j] = tab[(13 * j) % 16];
    unsigned short* dx = dev(x);
    unsigned* din = dev(std::vector<unsigned>((unsigned*)box.data(), (unsigned*)box.data() + 128));
    cuuint64_t dims[2] = {40, 12};
    cuuint32_t bx[2] = {32, 8};
    CUtensorMap m = tiled(t, 2, dx, dims, 2, bx);
    tma_reduce_box<<<1, 128>>>(m, din, 128, op, 24, 6);
    emit(name, back(dx, x.size()));
    cudaFree(din);
}

static void reduce_64(const char* name, CUtensorMapDataType t, int op)
{
    // (12, 10) 64-bit elements, box (8, 8) at (6, 6): u64 x[i] = i * 0x9E3779B97F4A7C15, box[j] = j * 0xC2B2AE3D27D4EB4F;
    // s64 x[i] = (7 i) % 40 - 20, box[j] = (13 j) % 40 - 20
    if (!wanted()) return;
    bool sgn = t == CU_TENSOR_MAP_DATA_TYPE_INT64;
    std::vector<unsigned long long> x(120), box(64);
    for (int i = 0; i < 120; i++) x[i] = sgn ? (unsigned long long)(long long)((7 * i) % 40 - 20) : i * 0x9E3779B97F4A7C15ull;
    for (int j = 0; j < 64; j++) box[j] = sgn ? (unsigned long long)(long long)((13 * j) % 40 - 20) : j * 0xC2B2AE3D27D4EB4Full;
    unsigned long long* dx = dev(x);
    unsigned* din = dev(std::vector<unsigned>((unsigned*)box.data(), (unsigned*)box.data() + 128));
    cuuint64_t dims[2] = {10, 12};
    cuuint32_t bx[2] = {8, 8};
    CUtensorMap m = tiled(t, 2, dx, dims, 8, bx);
    tma_reduce_box<<<1, 128>>>(m, din, 128, op, 6, 6);
    emit(name, back(dx, x.size()));
    cudaFree(din);
}

static void store_rank(const char* name, int rank, const int* shape, const int* box, const int* at)
{
    if (!wanted()) return;
    // u32 tensor x[i] = i + 1, box b[j] = 0x80000000 + j; shape/box/at outermost first
    int n = 1, nb = 1;
    for (int d = 0; d < rank; d++) n *= shape[d], nb *= box[d];
    std::vector<unsigned> x(n), b(nb);
    for (int i = 0; i < n; i++) x[i] = i + 1;
    for (int j = 0; j < nb; j++) b[j] = 0x80000000u + j;
    unsigned *dx = dev(x), *din = dev(b);
    cuuint64_t dims[5];
    cuuint32_t bx[5];
    Coords c;
    for (int d = 0; d < rank; d++) dims[d] = shape[rank - 1 - d], bx[d] = box[rank - 1 - d], c.c[d] = at[rank - 1 - d];
    CUtensorMap m = tiled(CU_TENSOR_MAP_DATA_TYPE_UINT32, rank, dx, dims, 4, bx);
    tma_store_box<<<1, 128>>>(m, din, nb, rank, c);
    emit(name, back(dx, n));
    cudaFree(din);
}

static void load_rank(const char* name, int rank, const int* shape, const int* box, const int* at)
{
    if (!wanted()) return;
    int n = 1, nb = 1;
    for (int d = 0; d < rank; d++) n *= shape[d], nb *= box[d];
    std::vector<unsigned> x(n);
    for (int i = 0; i < n; i++) x[i] = i + 1;
    unsigned* dx = dev(x);
    unsigned* out = dev(std::vector<unsigned>(nb, 7));
    cuuint64_t dims[5];
    cuuint32_t bx[5];
    Coords c;
    for (int d = 0; d < rank; d++) dims[d] = shape[rank - 1 - d], bx[d] = box[rank - 1 - d], c.c[d] = at[rank - 1 - d];
    CUtensorMap m = tiled(CU_TENSOR_MAP_DATA_TYPE_UINT32, rank, dx, dims, 4, bx);
    tma_load_box<<<1, 128>>>(m, out, nb, rank, c);
    emit(name, back(out, nb));
    cudaFree(dx);
}

static void im2col_case(const char* name, int rank, const int* shape, const int* lo, const int* hi, int ch, int px,
                        const int* coords, const short* offs)
{
    if (!wanted()) return;
    // shape outermost first (N, spatial.., C); x[i] = i + 1; coords innermost first (c, w, h, d, n)
    int n = 1;
    for (int d = 0; d < rank; d++) n *= shape[d];
    std::vector<unsigned> x(n);
    for (int i = 0; i < n; i++) x[i] = i + 1;
    unsigned* dx = dev(x);
    unsigned* out = dev(std::vector<unsigned>(ch * px, 0xDEAD));
    cuuint64_t dims[5];
    for (int d = 0; d < rank; d++) dims[d] = shape[rank - 1 - d];
    CUtensorMap m = im2col(rank, dx, dims, lo, hi, ch, px);
    Coords c = {{0, 0, 0, 0, 0}};
    Offsets o = {{0, 0, 0}};
    for (int d = 0; d < rank; d++) c.c[d] = coords[d];
    for (int d = 0; d < rank - 2; d++) o.o[d] = (unsigned short)offs[d];
    if (rank == 3) tma_im2col_3d<<<1, 128>>>(m, out, ch * px, c, o);
    else if (rank == 4) tma_im2col_4d<<<1, 128>>>(m, out, ch * px, c, o);
    else tma_im2col_5d<<<1, 128>>>(m, out, ch * px, c, o);
    emit(name, back(out, ch * px));
    cudaFree(dx);
}

static void multicast(const char* name, unsigned short mask)
{
    if (!wanted()) return;
    std::vector<unsigned> x(20 * 24);
    for (int i = 0; i < 480; i++) x[i] = i + 1000;
    unsigned* dx = dev(x);
    unsigned* out = dev(std::vector<unsigned>(8 * 128, 7));
    cuuint64_t dims[2] = {24, 20};
    cuuint32_t bx[2] = {16, 8};
    CUtensorMap m = tiled(CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, dx, dims, 4, bx);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(8);
    cfg.blockDim = dim3(64);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 4;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, tma_multicast_box, m, out, 128, mask, 12, 15));
    emit(name, back(out, 8 * 128));
    cudaFree(dx);
}

int main(int argc, char** argv)
{
    if (argc > 1) only = atoi(argv[1]);
    CK(cudaFree(0));
    const int at2[6][2] = {{0, 0}, {-3, 30}, {30, -5}, {24, 20}, {40, 0}, {-16, 0}};
    char name[64];
    for (int k = 0; k < 6; k++) {
        snprintf(name, sizeof name, "store2d_%d_%d", at2[k][0], at2[k][1]);
        store2d(name, at2[k][0], at2[k][1], CU_TENSOR_MAP_SWIZZLE_NONE, 40, 52, -1.5f);
    }
    store2d("store2d_swizzle128", 0, 0, CU_TENSOR_MAP_SWIZZLE_128B, 16, 32, 0.0f);
    const char* ops[8] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
    for (int op = 0; op < 8; op++) {
        snprintf(name, sizeof name, "reduce_u32_%s", ops[op]);
        reduce2d(name, CU_TENSOR_MAP_DATA_TYPE_UINT32, op);
    }
    for (int op = 0; op < 3; op++) {
        snprintf(name, sizeof name, "reduce_s32_%s", ops[op]);
        reduce2d(name, CU_TENSOR_MAP_DATA_TYPE_INT32, op);
    }
    reduce2d("reduce_f32_add", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0);
    {
        const int s3[3] = {5, 6, 20}, b3[3] = {2, 4, 8}, a3[3] = {4, -2, 16};
        const int s5[5] = {2, 3, 4, 5, 8}, b5[5] = {2, 2, 2, 2, 4}, a5[5] = {1, -1, 3, 4, 6};
        const int s4[4] = {3, 4, 5, 12}, b4[4] = {2, 2, 4, 4}, a4[4] = {2, 3, -1, 10};
        store_rank("store3d", 3, s3, b3, a3);
        store_rank("store5d", 5, s5, b5, a5);
        load_rank("load4d", 4, s4, b4, a4);
        load_rank("load5d", 5, s5, b5, a5);
    }
    {
        const int s3[3] = {3, 10, 8}, lo3[1] = {-2}, hi3[1] = {0};
        const int c3[3][3] = {{0, -2, 0}, {0, 5, 1}, {4, 0, 2}};
        const short o3[3][1] = {{0}, {3}, {-1}};
        for (int k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "im2col3d_%d", k);
            im2col_case(name, 3, s3, lo3, hi3, 8, 24, c3[k], o3[k]);
        }
        const int s4[4] = {2, 5, 6, 16}, lo4[2] = {-1, -1}, hi4[2] = {-1, -1};
        const int c4[4][4] = {{8, -1, -1, 0}, {0, -1, -1, 0}, {0, 2, 3, 1}, {4, 0, 0, 0}};
        const short o4[4][2] = {{0, 0}, {2, 1}, {1, 2}, {-1, 0}};
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "im2col4d_%d", k);
            im2col_case(name, 4, s4, lo4, hi4, 8, 20, c4[k], o4[k]);
        }
        const int s5[5] = {2, 3, 4, 4, 4}, lo5[3] = {-1, -1, -1}, hi5[3] = {-1, -1, -1};
        const int c5[2][5] = {{0, -1, -1, -1, 0}, {0, 1, 2, 0, 1}};
        const short o5[2][3] = {{1, 1, 1}, {0, 2, 1}};
        for (int k = 0; k < 2; k++) {
            snprintf(name, sizeof name, "im2col5d_%d", k);
            im2col_case(name, 5, s5, lo5, hi5, 4, 40, c5[k], o5[k]);
        }
    }
    multicast("multicast_0101", 0x5);
    multicast("multicast_1111", 0xF);
    {  // the same boxes at coordinates >= 0 (negative tile coordinates fault on the H200: cases above)
        const int s2[2] = {40, 52}, b2[2] = {16, 32}, a2[2] = {30, 24}, m2[2] = {0, -1};
        const int s3[3] = {5, 6, 20}, b3[3] = {2, 4, 8}, a3[3] = {4, 3, 16};
        const int s4[4] = {3, 4, 5, 12}, b4[4] = {2, 2, 4, 4}, a4[4] = {2, 3, 2, 10};
        const int s5[5] = {2, 3, 4, 5, 8}, b5[5] = {2, 2, 2, 2, 4}, a5[5] = {1, 2, 3, 4, 6};
        load_rank("load2d", 2, s2, b2, a2);
        store_rank("store3d_pos", 3, s3, b3, a3);
        store_rank("store5d_pos", 5, s5, b5, a5);
        load_rank("load4d_pos", 4, s4, b4, a4);
        load_rank("load5d_pos", 5, s5, b5, a5);
        load_rank("load2d_neg", 2, s2, b2, m2);
    }
    {  // which coordinates fault: (row, col) outermost first; u32 elements, so col * 4 bytes
        const int s2[2] = {40, 52}, b2[2] = {16, 32};
        const int at[8][2] = {{0, 4}, {0, 2}, {-1, 0}, {0, -4}, {38, 8}, {-16, 0}, {0, 48}, {0, 30}};
        for (int k = 0; k < 8; k++) {
            snprintf(name, sizeof name, "probe2d_%d_%d", at[k][0], at[k][1]);
            load_rank(name, 2, s2, b2, at[k]);
        }
        const int s4[4] = {3, 4, 5, 12}, b4[4] = {2, 2, 4, 4}, p4[2][4] = {{2, 3, 2, 8}, {2, 3, -1, 8}};
        load_rank("probe4d_pos", 4, s4, b4, p4[0]);
        load_rank("probe4d_neg", 4, s4, b4, p4[1]);
        const int s3[3] = {5, 6, 20}, bs3[3] = {2, 4, 8}, p3[3] = {4, 3, 12};
        store_rank("probe3d_store_c12", 3, s3, bs3, p3);
    }
    for (int op = 0; op < 3; op++) {  // cases 51 - 62: half and 64-bit reductions
        snprintf(name, sizeof name, "reduce_f16_%s", ops[op]);
        reduce_half(name, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, op);
        snprintf(name, sizeof name, "reduce_bf16_%s", ops[op]);
        reduce_half(name, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, op);
    }
    reduce_64("reduce_u64_add", CU_TENSOR_MAP_DATA_TYPE_UINT64, 0);
    reduce_64("reduce_u64_and", CU_TENSOR_MAP_DATA_TYPE_UINT64, 5);
    reduce_64("reduce_u64_xor", CU_TENSOR_MAP_DATA_TYPE_UINT64, 7);
    reduce_64("reduce_s64_min", CU_TENSOR_MAP_DATA_TYPE_INT64, 1);
    reduce_64("reduce_s64_max", CU_TENSOR_MAP_DATA_TYPE_INT64, 2);
    reduce_64("reduce_s64_or", CU_TENSOR_MAP_DATA_TYPE_INT64, 6);
    return 0;
}
