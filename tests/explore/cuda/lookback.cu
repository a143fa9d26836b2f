// Decoupled look-back in miniature: CTA 1's thread 0 waits for CTA 0's partial through a flag, loading
// it with cuda::atomic_ref acquire (napping `nap` ns between tries when nap > 0), then its CTA reads it.
// Built with -DRAISE=0 the flag is never raised: CTA 1 hangs. Checked in tests/explore/test_flag_spins.py.
#include <cuda/atomic>

#ifndef RAISE
#define RAISE 1
#endif

__global__ void lookback(int* partial, int* flag, int* out, int nap) {
    __shared__ int s;
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
            partial[0] = 42;
            if (RAISE) {
                cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
                f.store(1, cuda::memory_order_release);
            }
        }
    } else {
        if (threadIdx.x == 0) {
            cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
            while (f.load(cuda::memory_order_acquire) == 0) {
                if (nap) __nanosleep(nap);
            }
            s = partial[0];
        }
        __syncthreads();
        out[threadIdx.x] = s;
    }
}
