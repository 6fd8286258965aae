// Source lines of faults and hot spots (issue 20): compiled with -lineinfo, the PTX carries .loc/.file,
// and xcc names the CUDA line (fault_lineinfo.cu:LINE) beside the PTX line, as compute-sanitizer does.
//
// shift_scale: out[i + 1] = scale * in[i] summed over a few passes, one thread per element: the store is
// shifted by one, so with an output of n floats the last thread writes one element past its end, an
// out-of-bounds store (the deliberate bug). With an output of n + 1 floats the launch is correct.

extern "C" __global__ void shift_scale(int n, float scale, const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float x = in[i];
    float acc = 0.0f;
    for (int k = 0; k < 4; ++k) {
        acc = acc * x + scale;
    }
    out[i + 1] = acc;
}
