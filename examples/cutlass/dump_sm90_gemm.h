// Host-side helper for the CUTLASS 3.x GEMMs of the corpus (examples/cutlass/tma_*_gemm.cu built with
// -DDUMP_PARAMS): the part of their dump programs they share.  Every one of them takes K-major A and B and
// M-major C and D, packed (packed_strides), is checked with can_implement, made into Params with
// to_underlying_arguments, and dumped by dump_params.h with its cluster shape and the tensor maps that
// dump_tensormaps.h recorded (dump_sm90_gemm).  Ours (not CUTLASS's).
#pragma once
#include <string>

#include "cute/tensor.hpp"
#include "cutlass/kernel_hardware_info.h"
#include "dump_params.h"
#include "dump_tensormaps.h"

// The packed strides (M/N, K, batch L) of K-major A and B and M-major C and D of an M x N x K GEMM.
template <class GemmKernel>
struct PackedStrides {
  typename GemmKernel::StrideA a;
  typename GemmKernel::StrideB b;
  typename GemmKernel::StrideC c;
  typename GemmKernel::StrideD d;
};

template <class GemmKernel>
PackedStrides<GemmKernel> packed_strides(int M, int N, int K) {
  using L = int64_t;
  using cute::_1;
  return {cute::make_stride(L(K), _1{}, L(M) * K), cute::make_stride(L(K), _1{}, L(N) * K),
          cute::make_stride(_1{}, L(M), L(M) * N), cute::make_stride(_1{}, L(M), L(M) * N)};
}

// Hardware info with `sm_count` SMs: not queried, as there is no GPU here; for a persistent kernel it sets the
// grid (min(tiles, SMs) CTAs).
inline cutlass::KernelHardwareInfo sm_count(int count) {
  cutlass::KernelHardwareInfo hw;
  hw.sm_count = count;
  return hw;
}

// Dump the Params of `args` as kernel `entry`: "cluster" (a JSON array), `extra` JSON members if any
// (", \"key\": value ..."), then "tensor_maps".  `workspace` is passed to to_underlying_arguments.  main's exit
// status: 1 when CUTLASS cannot implement the arguments.
template <class GemmKernel>
int dump_sm90_gemm(const char *entry, typename GemmKernel::Arguments const &args, int M, int N, int K,
                   const char *cluster = "[1, 1, 1]", void *workspace = nullptr, std::string const &extra = "") {
  if (!GemmKernel::can_implement(args)) return 1;
  typename GemmKernel::Params p = GemmKernel::to_underlying_arguments(args, workspace);
  std::string members = std::string("\"cluster\": ") + cluster + extra +
                        ", \"tensor_maps\": " + tensor_maps_json(&p, sizeof p);
  dump_params(entry, p, GemmKernel::get_grid_shape(p), GemmKernel::get_block_shape(), GemmKernel::SharedStorageSize,
              M, N, K, members.c_str());
  return 0;
}
