// Kernels that never finish: what the launch engine's watchdog is for (tests/test_watchdog.py).
//
// wait_for_flag: each thread spins until the host (or another kernel) sets *flag, a handshake that
// hangs forever when nobody does - the classic runaway kernel.
// odd_threads_wait: only the odd threads wait for the flag; the even ones finish, so a launch that hangs
// has every warp diverged, half its threads exited.

extern "C" __global__ void wait_for_flag(volatile int *flag, int *out)
{
    int spins = 0;
    while (*flag == 0) {
        ++spins;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = spins;
}

extern "C" __global__ void odd_threads_wait(volatile int *flag, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i & 1) {
        while (*flag == 0) {
        }
    }
    out[i] = i;
}
