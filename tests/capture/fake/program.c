/* Calls the fake driver as the CUDA runtime and Triton call the real one: through dlopen/dlsym and
 * cuGetProcAddress, never by linking. Usage: program FAKE.ptx */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*gpa_t)(const char *, void **, int, uint64_t, void *);
typedef struct { unsigned grid[3], block[3], shared; void *stream; void *attrs; unsigned nattrs; } Config;

int main(int argc, char **argv) {
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cuda || argc != 2) return 2;
    gpa_t gpa = (gpa_t)dlsym(cuda, "cuGetProcAddress_v2");
    int (*alloc)(uintptr_t *, size_t), (*htod)(uintptr_t, const void *, size_t), (*load)(void **, const void *);
    int (*get)(void **, void *, const char *);
    int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
    int (*launch_ex)(const Config *, void *, void **, void **);
    int (*encode)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *, const unsigned *,
                  const unsigned *, int, int, int, int);
    gpa("cuMemAlloc", (void **)&alloc, 12000, 0, NULL);
    gpa("cuMemcpyHtoD", (void **)&htod, 12000, 0, NULL);
    gpa("cuModuleLoadData", (void **)&load, 12000, 0, NULL);
    gpa("cuModuleGetFunction", (void **)&get, 12000, 0, NULL);
    gpa("cuLaunchKernel", (void **)&launch, 12000, 0, NULL);
    gpa("cuLaunchKernelEx", (void **)&launch_ex, 12000, 0, NULL);
    *(void **)&encode = dlsym(cuda, "cuTensorMapEncodeTiled");

    static char ptx[1 << 16];
    FILE *f = fopen(argv[1], "r");
    if (!f) return 2;
    ptx[fread(ptx, 1, sizeof ptx - 1, f)] = 0;
    fclose(f);
    void *module, *scale, *tile;
    load(&module, ptx);
    get(&scale, module, "scale");
    get(&tile, module, "tile");

    float host[64];
    for (int i = 0; i < 64; i++) host[i] = (float)i - 20.0f;
    uintptr_t in, out, map_out;
    alloc(&in, sizeof host);
    alloc(&out, sizeof host);
    alloc(&map_out, 64);
    htod(in, host, sizeof host);
    int n = 48;
    float by = 2.5f;
    void *params[] = {&in, &out, &n, &by};
    if (launch(scale, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL)) return 1;

    _Alignas(64) unsigned char map[128];
    uint64_t dims[2] = {16, 4}, strides[1] = {64};
    unsigned box[2] = {8, 2}, estrides[2] = {1, 1};
    encode(map, 7, 2, (void *)in, dims, strides, box, estrides, 0, 0, 2, 0);
    void *params2[] = {map, &map_out};
    Config c = {{1, 1, 1}, {32, 1, 1}, 0, NULL, NULL, 0};
    if (launch_ex(&c, tile, params2, NULL)) return 1;
    puts("fake program: 2 launches");
    return 0;
}
