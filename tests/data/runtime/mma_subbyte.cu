// Issue 19: sub-byte integer warp matrix products through nvcuda::wmma's experimental precisions (s4, u4 on
// m8n8k32; b1 on m8n8k128 with bmma_sync's XOR / AND popc) and the byte types (signed / unsigned char on
// m16n16k16, wmma_s8 / wmma_u8 at the end), compiled by nvcc 13.0 with
//   nvcc -ptx -arch=sm_80 -O3 mma_subbyte.cu -o mma_subbyte.sm_80.ptx
// (tests/test_mma_subbyte.py runs them on both of xcc's engines against numpy).  One warp per launch; A is
// row-major, B column-major (what sub-byte wmma requires), C and D row-major 8 x 8 int (16 x 16 for the bytes).
#include <mma.h>
using namespace nvcuda;
namespace ex = nvcuda::wmma::experimental;

// D = A (8 x 32 s4, packed 8 per word, low nibble first) B (32 x 8 s4, column-major) + C
extern "C" __global__ void wmma_s4(const unsigned* A, const unsigned* Bt, const int* C, int* D) {
  wmma::fragment<wmma::matrix_a, 8, 8, 32, ex::precision::s4, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, ex::precision::s4, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> c;
  wmma::load_matrix_sync(a, A, 32);
  wmma::load_matrix_sync(b, Bt, 32);
  wmma::load_matrix_sync(c, C, 8, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c, true);  // satf
  wmma::store_matrix_sync(D, c, 8, wmma::mem_row_major);
}

// the same with u4 A and B, without saturation
extern "C" __global__ void wmma_u4(const unsigned* A, const unsigned* Bt, const int* C, int* D) {
  wmma::fragment<wmma::matrix_a, 8, 8, 32, ex::precision::u4, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, ex::precision::u4, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> c;
  wmma::load_matrix_sync(a, A, 32);
  wmma::load_matrix_sync(b, Bt, 32);
  wmma::load_matrix_sync(c, C, 8, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 8, wmma::mem_row_major);
}

// D = popc(A (8 x 128 bits, row-major, bit 0 of each word first) op B (128 x 8 bits, column-major)) + C, for op
// = XOR (D1) and AND (D2)
extern "C" __global__ void bmma_b1(const unsigned* A, const unsigned* Bt, const int* C, int* D1, int* D2) {
  wmma::fragment<wmma::matrix_a, 8, 8, 128, ex::precision::b1, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 8, 8, 128, ex::precision::b1, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 8, 8, 128, int> c, d;
  wmma::load_matrix_sync(a, A, 128);
  wmma::load_matrix_sync(b, Bt, 128);
  wmma::load_matrix_sync(c, C, 8, wmma::mem_row_major);
  wmma::bmma_sync(d, a, b, c, ex::bmmaBitOpXOR, ex::bmmaAccumulateOpPOPC);
  wmma::store_matrix_sync(D1, d, 8, wmma::mem_row_major);
  wmma::bmma_sync(d, a, b, c, ex::bmmaBitOpAND, ex::bmmaAccumulateOpPOPC);
  wmma::store_matrix_sync(D2, d, 8, wmma::mem_row_major);
}

// D (16 x 16 int, row-major) = A (16 x 16 signed char, row-major) B (16 x 16 signed char, row-major) + C, saturated
extern "C" __global__ void wmma_s8(const signed char* A, const signed char* B, const int* C, int* D) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> c;
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, B, 16);
  wmma::load_matrix_sync(c, C, 16, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c, true);
  wmma::store_matrix_sync(D, c, 16, wmma::mem_row_major);
}

// the same with unsigned char, A column-major (A^T row-major) and B column-major (B^T row-major), no saturation
extern "C" __global__ void wmma_u8(const unsigned char* At, const unsigned char* Bt, const int* C, int* D) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, unsigned char, wmma::col_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, unsigned char, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> c;
  wmma::load_matrix_sync(a, At, 16);
  wmma::load_matrix_sync(b, Bt, 16);
  wmma::load_matrix_sync(c, C, 16, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 16, wmma::mem_row_major);
}
