/* A stand-in for libcuda.so.1 that runs "kernels" on the host, so that the capture interposer can be
 * tested on a machine without a GPU (tests/capture/test_interposer.py). Device memory is host memory;
 * cuMemGetAddressRange knows the allocations cuMemAlloc made; a tensor map's 128 bytes are a made-up
 * function of its arguments (opaque, as the driver's are). Two kernels, of fake.ptx:
 *   scale(const float* in, float* out, int n, float by): out[i] = in[i] * by
 *   tile(const __grid_constant__ CUtensorMap map, float* out): copies the map's first 8 bytes to out
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef struct { const char *name; int nparams; size_t off[4], size[4]; } Func;
static Func funcs[] = {{"scale", 4, {0, 8, 16, 20}, {8, 8, 4, 4}}, {"tile", 2, {0, 128}, {128, 8}}};
static struct { uintptr_t base; size_t size; } allocs[64];
static int nallocs;

CUresult cuMemAlloc_v2(uintptr_t *p, size_t n) {
    void *m = aligned_alloc(256, (n + 255) / 256 * 256);
    memset(m, 0, (n + 255) / 256 * 256);  /* the tests count the bytes a launch changed from zeros */
    allocs[nallocs].base = (uintptr_t)m;
    allocs[nallocs++].size = n;
    *p = (uintptr_t)m;
    return 0;
}
CUresult cuMemGetAddressRange_v2(uintptr_t *base, size_t *size, uintptr_t p) {
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].base <= p && p < allocs[i].base + allocs[i].size) {
            *base = allocs[i].base;
            *size = allocs[i].size;
            return 0;
        }
    return 1;
}
CUresult cuMemcpyDtoH_v2(void *dst, uintptr_t src, size_t n) { memcpy(dst, (void *)src, n); return 0; }
CUresult cuMemcpyHtoD_v2(uintptr_t dst, const void *src, size_t n) { memcpy((void *)dst, src, n); return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuDeviceGetName(char *name, int n, int d) { (void)d; strncpy(name, "Fake \"GPU\"", (size_t)n); return 0; }
CUresult cuModuleLoadData(void **module, const void *image) { (void)image; *module = funcs; return 0; }
CUresult cuModuleGetFunction(void **f, void *module, const char *name) {
    (void)module;
    for (int i = 0; i < 2; i++)
        if (!strcmp(funcs[i].name, name)) { *f = &funcs[i]; return 0; }
    return 500;
}
CUresult cuFuncGetName(const char **name, void *f) { *name = ((Func *)f)->name; return 0; }
CUresult cuFuncGetParamInfo(void *f, size_t i, size_t *off, size_t *size) {
    Func *fn = f;
    if (i >= (size_t)fn->nparams) return 1;
    *off = fn->off[i];
    *size = fn->size[i];
    return 0;
}
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box, const unsigned *estrides,
                                int interleave, int swizzle, int l2, int oob) {
    unsigned char *m = map;
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)address ^ ((uint64_t)type << 56) ^ rank;
    for (unsigned i = 0; i < rank; i++) h = h * 1099511628211ull ^ dims[i] ^ ((uint64_t)box[i] << 32) ^ estrides[i];
    for (unsigned i = 0; i + 1 < rank; i++) h = h * 1099511628211ull ^ strides[i];
    h ^= (uint64_t)(interleave | swizzle << 4 | l2 << 8 | oob << 12);
    for (int i = 0; i < 128; i++) { h = h * 1099511628211ull + 7; m[i] = (unsigned char)(h >> 56); }
    return 0;
}

static void run(Func *f, void **params) {
    if (!strcmp(f->name, "scale")) {
        const float *in = *(float **)params[0];
        float *out = *(float **)params[1];
        int n = *(int *)params[2];
        float by = *(float *)params[3];
        for (int i = 0; i < n; i++) out[i] = in[i] * by;
    } else {
        memcpy(*(void **)params[1], params[0], 8);
    }
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)extra;
    run(f, params);
    return 0;
}
typedef struct { unsigned grid[3], block[3], shared; void *stream; void *attrs; unsigned nattrs; } Config;
CUresult cuLaunchKernelEx(const Config *c, void *f, void **params, void **extra) {
    (void)c, (void)extra;
    run(f, params);
    return 0;
}

static const struct { const char *name; void *fn; } table[] = {
    {"cuMemAlloc", (void *)cuMemAlloc_v2}, {"cuMemcpyHtoD", (void *)cuMemcpyHtoD_v2},
    {"cuModuleLoadData", (void *)cuModuleLoadData}, {"cuModuleGetFunction", (void *)cuModuleGetFunction},
    {"cuLaunchKernel", (void *)cuLaunchKernel}, {"cuLaunchKernelEx", (void *)cuLaunchKernelEx},
    {"cuTensorMapEncodeTiled", (void *)cuTensorMapEncodeTiled}, {"cuCtxSynchronize", (void *)cuCtxSynchronize},
};
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, void *status) {
    (void)version, (void)flags, (void)status;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcmp(table[i].name, symbol)) { *pfn = table[i].fn; return 0; }
    *pfn = NULL;
    return 500;
}
