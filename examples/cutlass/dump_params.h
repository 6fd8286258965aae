// Host-side helper for the CUTLASS corpus (examples/cutlass/*.cu): prints a kernel's Params as the
// JSON that tests/test_cutlass_corpus.py reads (grid, block, dynamic shared bytes, the struct's bytes in
// hex).  Device pointers are sentinels 0xA0000000000 + (k << 32) for operand k = 0, 1, 2, ...; the test
// replaces every 8-byte-aligned sentinel with the address of the buffer it allocated.  `extra`, if given, is
// more JSON members (`"key": value, ...`) put before the closing brace.  Ours (not CUTLASS's).
#pragma once
#include <cstdio>
#include <cstring>

inline void *sentinel_ptr(int k) { return reinterpret_cast<void *>(0xA0000000000ull + (static_cast<unsigned long long>(k) << 32)); }

template <typename Params>
void dump_params(const char *entry, const Params &p, dim3 grid, dim3 block, int smem, int M, int N, int K,
                 const char *extra = nullptr) {
  unsigned char bytes[sizeof(Params)];
  std::memcpy(bytes, &p, sizeof(Params));
  std::printf("{\"entry\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d,\n", entry, M, N, K);
  std::printf(" \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"smem\": %d, \"size\": %zu,\n",
              grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, sizeof(Params));
  std::printf(" \"params\": \"");
  for (size_t i = 0; i < sizeof(Params); ++i) std::printf("%02x", bytes[i]);
  std::printf("\"");
  if (extra) std::printf(",\n %s", extra);
  std::printf("}\n");
}
