// Host-side helper for the CUTLASS 3.x corpus (examples/cutlass/*.cu built with -DDUMP_PARAMS): our own
// definitions of the driver API's cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col, so that CUTLASS's host code
// (built with -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, which calls them by name) needs neither libcuda nor a GPU.
// Each call records its arguments and fills the 128-byte CUtensorMap with a marker ("XCCTMAP" and the call's
// index); tensor_maps_json() finds each marker in the finished Params struct and prints the recorded arguments
// with the map's byte offset there (an im2col map with "kind": "im2col", its pixel box's corners, channels per
// pixel and pixels per column in place of a box).  tests/test_cutlass_corpus.py encodes each map again with xcc's
// own cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col (global address rebased from the sentinel pointers of
// dump_params.h) at that offset.
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
  bool im2col = false;  // made by cuTensorMapEncodeIm2col: the fields below instead of box
  std::vector<int> lower_corner, upper_corner;
  unsigned channels_per_pixel = 0, pixels_per_column = 0;
};

inline std::vector<RecordedTensorMap> &recorded_tensor_maps() {
  static std::vector<RecordedTensorMap> maps;
  return maps;
}

static const char kTensorMapMarker[8] = {'X', 'C', 'C', 'T', 'M', 'A', 'P', 0};

// The fields every tensor map has, recorded into `m`.
inline void record_common(RecordedTensorMap &m, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                          void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                          const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                          CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                          CUtensorMapFloatOOBfill oobFill) {
  m.dtype = int(tensorDataType);
  m.rank = int(tensorRank);
  m.interleave = int(interleave);
  m.swizzle = int(swizzle);
  m.l2_promotion = int(l2Promotion);
  m.oob_fill = int(oobFill);
  m.address = reinterpret_cast<unsigned long long>(globalAddress);
  for (unsigned d = 0; d < tensorRank; ++d) {
    m.dims.push_back(globalDim[d]);
    m.element_strides.push_back(elementStrides[d]);
    if (d + 1 < tensorRank) m.strides.push_back(globalStrides[d]);
  }
}

// Fill `tensorMap` with the marker of the next recorded map and record `m`.
inline CUresult record_tensor_map(CUtensorMap *tensorMap, RecordedTensorMap const &m) {
  std::memset(tensorMap, 0, sizeof(CUtensorMap));
  std::memcpy(tensorMap, kTensorMapMarker, sizeof kTensorMapMarker);
  unsigned index = unsigned(recorded_tensor_maps().size());
  std::memcpy(reinterpret_cast<char *>(tensorMap) + 8, &index, sizeof index);
  recorded_tensor_maps().push_back(m);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                                   cuuint32_t tensorRank, void *globalAddress,
                                                   const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                                   const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                                   CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                   CUtensorMapL2promotion l2Promotion,
                                                   CUtensorMapFloatOOBfill oobFill) {
  RecordedTensorMap m;
  record_common(m, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, elementStrides, interleave,
                swizzle, l2Promotion, oobFill);
  for (unsigned d = 0; d < tensorRank; ++d) m.box.push_back(boxDim[d]);
  return record_tensor_map(tensorMap, m);
}

extern "C" CUresult CUDAAPI cuTensorMapEncodeIm2col(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                                    cuuint32_t tensorRank, void *globalAddress,
                                                    const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                                    const int *pixelBoxLowerCorner, const int *pixelBoxUpperCorner,
                                                    cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                                    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                                    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                                    CUtensorMapFloatOOBfill oobFill) {
  RecordedTensorMap m;
  record_common(m, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, elementStrides, interleave,
                swizzle, l2Promotion, oobFill);
  m.im2col = true;
  for (unsigned d = 0; d + 2 < tensorRank; ++d) {  // the spatial dims (rank - 2 of them)
    m.lower_corner.push_back(pixelBoxLowerCorner[d]);
    m.upper_corner.push_back(pixelBoxUpperCorner[d]);
  }
  m.channels_per_pixel = channelsPerPixel;
  m.pixels_per_column = pixelsPerColumn;
  return record_tensor_map(tensorMap, m);
}

template <typename T>
std::string json_list(const std::vector<T> &xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
  return s + "]";
}

// The recorded maps as a JSON list, each with the byte offset of its (only) copy inside the `size` bytes at
// `params`; exits if a map is found there zero or several times.  A tiled map's members: offset, dtype, rank,
// address, dims, strides, box, element_strides, interleave, swizzle, l2_promotion, oob_fill; an im2col map's:
// offset, "kind": "im2col", dtype, rank, address, dims, strides, lower_corner, upper_corner, channels_per_pixel,
// pixels_per_column, then as a tiled map's from element_strides.
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
    std::string shape = m.im2col ? ", \"lower_corner\": " + json_list(m.lower_corner) +
                                       ", \"upper_corner\": " + json_list(m.upper_corner) +
                                       ", \"channels_per_pixel\": " + std::to_string(m.channels_per_pixel) +
                                       ", \"pixels_per_column\": " + std::to_string(m.pixels_per_column)
                                 : ", \"box\": " + json_list(m.box);
    s += std::string(k ? ",\n  " : "\n  ") + "{\"offset\": " + std::to_string(offset) +
         (m.im2col ? ", \"kind\": \"im2col\"" : "") + ", \"dtype\": " + std::to_string(m.dtype) +
         ", \"rank\": " + std::to_string(m.rank) + ", \"address\": " + std::to_string(m.address) +
         ", \"dims\": " + json_list(m.dims) + ", \"strides\": " + json_list(m.strides) + shape +
         ", \"element_strides\": " + json_list(m.element_strides) +
         ", \"interleave\": " + std::to_string(m.interleave) + ", \"swizzle\": " + std::to_string(m.swizzle) +
         ", \"l2_promotion\": " + std::to_string(m.l2_promotion) +
         ", \"oob_fill\": " + std::to_string(m.oob_fill) + "}";
  }
  return s + "]";
}
