// Warp-wide votes, matches and reductions. blockDim.x must be a multiple of
// 32; out-of-range lanes stay in the warp and vote "false" / contribute 0.
// out arrays indexed by warp are [ceil(n/32)] (global warp index i / 32).

// __ballot_sync: bit mask of lanes with in[i] > 0; lane 0 writes the mask and
// its population count.
__global__ void warp_ballot(int n, const int* in, unsigned* masks, int* counts)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool pred = (i < n) && in[i] > 0;
    unsigned m = __ballot_sync(0xffffffff, pred);
    if ((threadIdx.x & 31) == 0) {
        masks[i / 32] = m;
        counts[i / 32] = __popc(m);
    }
}

// __any_sync / __all_sync: flags[w] = any(in > 0) | (all(in > 0) << 1).
__global__ void warp_any_all(int n, const int* in, int* flags)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool valid = i < n;
    bool pred = valid && in[i] > 0;
    int any = __any_sync(0xffffffff, pred);
    int all = __all_sync(0xffffffff, pred || !valid);
    if ((threadIdx.x & 31) == 0)
        flags[i / 32] = (any ? 1 : 0) | (all ? 2 : 0);
}

// __activemask inside a data-dependent branch: each lane taking the branch
// writes the mask of lanes that took it together with it; other lanes write 0.
__global__ void warp_activemask(int n, const int* in, unsigned* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned r = 0;
    if (in[i] & 1)
        r = __activemask();
    out[i] = r;
}

// __match_any_sync: for each lane, the mask of lanes in the warp holding the
// same key; out[i] = popcount of that mask (group size), leader[i] = 1 if the
// lane is the lowest lane of its group. Out-of-range lanes use key -1.
__global__ void warp_match_any(int n, const int* keys, int* group_size, int* leader)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int key = (i < n) ? keys[i] : -1;
    unsigned m = __match_any_sync(0xffffffff, key);
    int lane = threadIdx.x & 31;
    if (i < n) {
        group_size[i] = __popc(m);
        leader[i] = (__ffs(m) - 1) == lane;
    }
}

// __reduce_add_sync / __reduce_min_sync / __reduce_max_sync / __reduce_or_sync
// (redux.sync, sm_80+). Out-of-range lanes contribute the identity.
extern "C" __global__ void warp_redux(int n, const unsigned* in, unsigned* sum,
                                      unsigned* mn, unsigned* mx, unsigned* orv)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool valid = i < n;
    unsigned v = valid ? in[i] : 0u;
    unsigned s = __reduce_add_sync(0xffffffff, v);
    unsigned lo = __reduce_min_sync(0xffffffff, valid ? v : 0xffffffffu);
    unsigned hi = __reduce_max_sync(0xffffffff, v);
    unsigned o = __reduce_or_sync(0xffffffff, v);
    if ((threadIdx.x & 31) == 0) {
        sum[i / 32] = s;
        mn[i / 32] = lo;
        mx[i / 32] = hi;
        orv[i / 32] = o;
    }
}
