// Host-side helper for the CUTLASS 3.x corpus (examples/cutlass/*.cu built with -DDUMP_PARAMS): our own
// definition of the driver API's cuTensorMapEncodeTiled, so that CUTLASS's host code (built with
// -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, which calls the function by name) needs neither libcuda nor a GPU.
// Each call records its arguments and fills the 128-byte CUtensorMap with a marker ("XCCTMAP" and the call's
// index); tensor_maps_json() finds each marker in the finished Params struct and prints the recorded arguments
// with the map's byte offset there.  tests/test_cutlass_corpus.py encodes each map again with xcc's own
// cuTensorMapEncodeTiled (global address rebased from the sentinel pointers of dump_params.h) at that offset.
// Ours (not CUTLASS's).
#pragma once
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct RecordedTensorMap {
  int dtype, rank, interleave, swizzle, l2_promotion, oob_fill;
  unsigned long long address;
  std::vector<unsigned long long> dims, strides;
  std::vector<unsigned> box, element_strides;
};

inline std::vector<RecordedTensorMap> &recorded_tensor_maps() {
  static std::vector<RecordedTensorMap> maps;
  return maps;
}

static const char kTensorMapMarker[8] = {'X', 'C', 'C', 'T', 'M', 'A', 'P', 0};

extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                                   cuuint32_t tensorRank, void *globalAddress,
                                                   const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                                   const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                                   CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                   CUtensorMapL2promotion l2Promotion,
                                                   CUtensorMapFloatOOBfill oobFill) {
  RecordedTensorMap m;
  m.dtype = int(tensorDataType);
  m.rank = int(tensorRank);
  m.interleave = int(interleave);
  m.swizzle = int(swizzle);
  m.l2_promotion = int(l2Promotion);
  m.oob_fill = int(oobFill);
  m.address = reinterpret_cast<unsigned long long>(globalAddress);
  for (unsigned d = 0; d < tensorRank; ++d) {
    m.dims.push_back(globalDim[d]);
    m.box.push_back(boxDim[d]);
    m.element_strides.push_back(elementStrides[d]);
    if (d + 1 < tensorRank) m.strides.push_back(globalStrides[d]);
  }
  std::memset(tensorMap, 0, sizeof(CUtensorMap));
  std::memcpy(tensorMap, kTensorMapMarker, sizeof kTensorMapMarker);
  unsigned index = unsigned(recorded_tensor_maps().size());
  std::memcpy(reinterpret_cast<char *>(tensorMap) + 8, &index, sizeof index);
  recorded_tensor_maps().push_back(m);
  return CUDA_SUCCESS;
}

template <typename T>
std::string json_list(const std::vector<T> &xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
  return s + "]";
}

// The recorded maps as a JSON list, each with the byte offset of its (only) copy inside the `size` bytes at
// `params`; exits if a map is found there zero or several times.
inline std::string tensor_maps_json(const void *params, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(params);
  std::string s = "[";
  for (unsigned k = 0; k < recorded_tensor_maps().size(); ++k) {
    unsigned char key[12];
    std::memcpy(key, kTensorMapMarker, 8);
    std::memcpy(key + 8, &k, 4);
    long offset = -1;
    int copies = 0;
    for (size_t off = 0; off + sizeof(CUtensorMap) <= size; off += 64)  // CUtensorMap is 64-byte aligned
      if (std::memcmp(p + off, key, sizeof key) == 0) offset = long(off), ++copies;
    if (copies != 1) {
      std::fprintf(stderr, "tensor map %u found %d times in Params\n", k, copies);
      std::exit(1);
    }
    const RecordedTensorMap &m = recorded_tensor_maps()[k];
    s += std::string(k ? ",\n  " : "\n  ") + "{\"offset\": " + std::to_string(offset) +
         ", \"dtype\": " + std::to_string(m.dtype) + ", \"rank\": " + std::to_string(m.rank) +
         ", \"address\": " + std::to_string(m.address) + ", \"dims\": " + json_list(m.dims) +
         ", \"strides\": " + json_list(m.strides) + ", \"box\": " + json_list(m.box) +
         ", \"element_strides\": " + json_list(m.element_strides) +
         ", \"interleave\": " + std::to_string(m.interleave) + ", \"swizzle\": " + std::to_string(m.swizzle) +
         ", \"l2_promotion\": " + std::to_string(m.l2_promotion) +
         ", \"oob_fill\": " + std::to_string(m.oob_fill) + "}";
  }
  return s + "]";
}
