// Thread-block clusters (sm_90): distributed shared memory between the CTAs of a cluster.
//
// cluster_neighbour_sum: each CTA of a cluster of CLUSTER CTAs loads its block of x into its own shared
// memory; after cluster.sync() every thread reads the same position of the next CTA's block (rank + 1,
// wrapping) through cluster.map_shared_rank and writes out[i] = x[i] + neighbour (an f32 add).  A second
// cluster.sync() keeps each CTA's shared memory alive until its neighbour has read it.  The kernel also
// records, for thread 0 of each CTA, its cluster coordinates: info[4 * block] = {rank, nranks,
// cluster_id.x, is_explicit} (cooperative_groups::this_cluster()).
// cluster_histogram: a cluster-wide histogram in distributed shared memory: each thread adds 1 to bin
// x % (nbins) held by CTA rank (x / nbins) % cluster size, with atomicAdd on the mapped address; after
// cluster.sync() each CTA adds its bins to the global histogram.
// Compile: nvcc -ptx -arch=sm_90a -O3 (clusters need sm_90).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define CLUSTER 4
#define BLOCK 128

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)
cluster_neighbour_sum(const float* __restrict__ x, float* __restrict__ out, unsigned* __restrict__ info)
{
    __shared__ float tile[BLOCK];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x] = x[i];
    cluster.sync();
    const float* other = cluster.map_shared_rank(tile, (rank + 1) % cluster.num_blocks());
    out[i] = tile[threadIdx.x] + other[threadIdx.x];
    if (threadIdx.x == 0) {
        info[4 * blockIdx.x + 0] = rank;
        info[4 * blockIdx.x + 1] = cluster.num_blocks();
        info[4 * blockIdx.x + 2] = blockIdx.x / cluster.dim_blocks().x;
        info[4 * blockIdx.x + 3] = 1;
    }
    cluster.sync();
}

extern "C" __global__ void cluster_histogram(const unsigned* __restrict__ x, unsigned* __restrict__ hist,
                                             int nbins, int n)
{
    extern __shared__ unsigned bins[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x)
        bins[b] = 0;
    cluster.sync();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = x[i];
        unsigned owner = (v / nbins) % cluster.num_blocks();
        unsigned* remote = cluster.map_shared_rank(bins, owner);
        atomicAdd(remote + v % nbins, 1u);
    }
    cluster.sync();
    unsigned base = cluster.block_rank() * nbins;
    for (int b = threadIdx.x; b < nbins; b += blockDim.x)
        atomicAdd(&hist[base + b], bins[b]);
}
