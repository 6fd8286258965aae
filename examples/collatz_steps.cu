// Number of Collatz steps to reach 1 (capped at 1000) for each input value.
__global__ void collatz_steps(int n, const unsigned int* in, unsigned int* steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int x = in[i];
        unsigned int count = 0;
        while (x > 1 && count < 1000) {
            if (x & 1)
                x = 3 * x + 1;
            else
                x = x / 2;
            ++count;
        }
        steps[i] = count;
    }
}
