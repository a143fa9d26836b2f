/* mbarrier capture: an LD_PRELOAD interposer on the CUDA driver API.
 *
 * Built on demand by mbarrier.capture.build (the system C compiler; no CUDA header needed: the few driver
 * types used are declared here by their documented layouts). For each kernel launch whose name matches
 * MBARRIER_CAPTURE_KERNEL (fnmatch pattern; all when unset) it writes into MBARRIER_CAPTURE_DIR:
 * (each name prefixed with the process id, PID-):
 *   launch-N.json         kernel name, shapes, parameter bytes, the allocations and tensor maps in them
 *   launch-N.alloc-K.before.bin / .after.bin   each allocation a parameter points into, before the
 *                         launch and after it (the context synchronized around the launch)
 *   image-N.bin + image-N.json   every image given to cuModuleLoadData* / cuLibraryLoadData (PTX is
 *                         taken from these by the Python side)
 *   encode.jsonl          every cuTensorMapEncodeTiled / Im2col call: its arguments and the 128 bytes made
 *   debug.log             with MBARRIER_CAPTURE_DEBUG set: every entry point asked for
 *
 * How the calls are seen: programs linked to libcuda call the exported names (interposed by this
 * library's own definitions); the CUDA runtime (12+) and Triton's launcher get entry points through
 * dlsym on a dlopen'd libcuda and through cuGetProcAddress, so both are wrapped too and hand out the
 * wrappers below for the functions captured. Device pointers are recognised by asking the driver
 * (cuMemGetAddressRange) about every 8-byte-aligned word of the parameters, so any allocator works.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

typedef struct {
    int id;
    char pad[4];
    union {
        char raw[64];
        struct { unsigned x, y, z; } cluster;
    } value;
} LaunchAttr;

typedef struct {
    unsigned grid[3], block[3], shared;
    CUstream stream;
    LaunchAttr *attrs;
    unsigned nattrs;
} LaunchConfig;

enum { ATTR_CLUSTER_DIMENSION = 4, GET_PROC_PER_THREAD = 2, MAX_PARAMS = 32768 };

/* -- the real functions ------------------------------------------------------------------------- */
typedef void *(*dlsym_t)(void *, const char *);
typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_t)(const LaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*tiled_t)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *,
                            const unsigned *, const unsigned *, int, int, int, int);
typedef CUresult (*im2col_t)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *, const int *,
                             const int *, unsigned, unsigned, const unsigned *, int, int, int, int);
typedef CUresult (*load_t)(void **, const void *);
typedef CUresult (*load_ex_t)(void **, const void *, unsigned, void *, void **);
typedef CUresult (*lib_load_t)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned);
typedef CUresult (*gpa1_t)(const char *, void **, int, uint64_t);
typedef CUresult (*gpa2_t)(const char *, void **, int, uint64_t, void *);

static dlsym_t real_dlsym;
static void *libcuda;
static CUresult (*get_name)(const char **, CUfunction);
static CUresult (*kernel_get_name)(const char **, void *);
static CUresult (*param_info)(CUfunction, size_t, size_t *, size_t *);
static CUresult (*kernel_param_info)(void *, size_t, size_t *, size_t *);
static CUresult (*address_range)(CUdeviceptr *, size_t *, CUdeviceptr);
static CUresult (*ctx_sync)(void);
static CUresult (*dtoh)(void *, CUdeviceptr, size_t);
static CUresult (*driver_version)(int *);
static CUresult (*ctx_device)(int *);
static CUresult (*device_name)(char *, int, int);

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static const char *outdir;
static int launches, images, encodes, debug;
static FILE *encode_log;

static void *resolve_real_dlsym(void) {
    static const char *versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0", NULL};
    for (int i = 0; versions[i]; i++) {
        void *f = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
        if (f) return f;
    }
    return NULL;
}

static void *cuda_symbol(const char *name) {
    if (!libcuda) libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    return libcuda ? real_dlsym(libcuda, name) : NULL;
}

static void setup(void) {
    if (real_dlsym) return;
    real_dlsym = (dlsym_t)resolve_real_dlsym();
    if (!real_dlsym) { fprintf(stderr, "mbarrier capture: cannot find the real dlsym\n"); abort(); }
    outdir = getenv("MBARRIER_CAPTURE_DIR");
    debug = getenv("MBARRIER_CAPTURE_DEBUG") != NULL;
}

/* The driver functions the capture itself calls; libcuda is opened only once a launch is seen. */
static void setup_cuda(void) {
    static int done;
    if (done) return;
    done = 1;
    *(void **)&get_name = cuda_symbol("cuFuncGetName");
    *(void **)&kernel_get_name = cuda_symbol("cuKernelGetName");
    *(void **)&param_info = cuda_symbol("cuFuncGetParamInfo");
    *(void **)&kernel_param_info = cuda_symbol("cuKernelGetParamInfo");
    *(void **)&address_range = cuda_symbol("cuMemGetAddressRange_v2");
    *(void **)&ctx_sync = cuda_symbol("cuCtxSynchronize");
    *(void **)&dtoh = cuda_symbol("cuMemcpyDtoH_v2");
    *(void **)&driver_version = cuda_symbol("cuDriverGetVersion");
    *(void **)&ctx_device = cuda_symbol("cuCtxGetDevice");
    *(void **)&device_name = cuda_symbol("cuDeviceGetName");
}

/* DIR/NAME with the process id in front: the command may start several processes that launch. */
static FILE *open_out(const char *name, const char *mode) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%d-%s", outdir ? outdir : ".", (int)getpid(), name);
    FILE *f = fopen(path, mode);
    if (!f) fprintf(stderr, "mbarrier capture: cannot write %s\n", path);
    return f;
}

static void note(const char *fmt, const char *what) {
    if (!debug) return;
    FILE *f = open_out("debug.log", "a");
    if (f) { fprintf(f, fmt, what); fputc('\n', f); fclose(f); }
}

static void hex(FILE *f, const unsigned char *p, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
    fputc('"', f);
}

/* -- tensor maps: every encode call, with the bytes it made ---------------------------------------- */
typedef struct { unsigned char bytes[128]; int index; CUdeviceptr address; } Encoded;
static Encoded *encoded;
static int nencoded, capencoded;

static void remember_map(const void *map, int index, const void *address) {
    if (nencoded == capencoded) {
        capencoded = capencoded ? 2 * capencoded : 64;
        encoded = realloc(encoded, (size_t)capencoded * sizeof *encoded);
    }
    memcpy(encoded[nencoded].bytes, map, 128);
    encoded[nencoded].address = (CUdeviceptr)(uintptr_t)address;
    encoded[nencoded++].index = index;
}

static void list_u64(FILE *f, const char *key, const uint64_t *v, unsigned n) {
    fprintf(f, "\"%s\": [", key);
    for (unsigned i = 0; v && i < n; i++) fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    fputs("], ", f);
}

static void list_u32(FILE *f, const char *key, const unsigned *v, unsigned n) {
    fprintf(f, "\"%s\": [", key);
    for (unsigned i = 0; v && i < n; i++) fprintf(f, "%s%u", i ? ", " : "", v[i]);
    fputs("], ", f);
}

static void list_int(FILE *f, const char *key, const int *v, unsigned n) {
    fprintf(f, "\"%s\": [", key);
    for (unsigned i = 0; v && i < n; i++) fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputs("], ", f);
}

static FILE *encode_file(void) {
    if (!encode_log) encode_log = open_out("encode.jsonl", "w");
    return encode_log;
}

/* One encode call as a JSON line: what both encodes share, before and after their own arguments. */
static void encode_head(FILE *f, const char *kind, CUresult r, int type, unsigned rank, void *address,
                        const uint64_t *dims, const uint64_t *strides) {
    fprintf(f, "{\"index\": %d, \"result\": %d, \"encode\": \"%s\", \"tensorDataType\": %d, "
            "\"tensorRank\": %u, \"globalAddress\": %llu, ", encodes, r, kind, type, rank,
            (unsigned long long)(uintptr_t)address);
    list_u64(f, "globalDim", dims, rank);
    list_u64(f, "globalStrides", strides, rank ? rank - 1 : 0);
}

static void encode_tail(FILE *f, const void *map, CUresult r, int interleave, int swizzle, int l2, int oob) {
    fprintf(f, "\"interleave\": %d, \"swizzle\": %d, \"l2Promotion\": %d, \"oobFill\": %d, \"map\": ",
            interleave, swizzle, l2, oob);
    hex(f, map, r == 0 ? 128 : 0);
    fputs("}\n", f);
    fflush(f);
}

static tiled_t real_tiled;
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box, const unsigned *estrides,
                                int interleave, int swizzle, int l2, int oob) {
    setup();
    if (!real_tiled) *(void **)&real_tiled = cuda_symbol("cuTensorMapEncodeTiled");
    CUresult r = real_tiled(map, type, rank, address, dims, strides, box, estrides, interleave, swizzle, l2,
                            oob);
    pthread_mutex_lock(&lock);
    FILE *f = encode_file();
    if (f) {
        encode_head(f, "tiled", r, type, rank, address, dims, strides);
        list_u32(f, "boxDim", box, rank);
        list_u32(f, "elementStrides", estrides, rank);
        encode_tail(f, map, r, interleave, swizzle, l2, oob);
    }
    if (r == 0) remember_map(map, encodes, address);
    encodes++;
    pthread_mutex_unlock(&lock);
    return r;
}

static im2col_t real_im2col;
CUresult cuTensorMapEncodeIm2col(void *map, int type, unsigned rank, void *address, const uint64_t *dims,
                                 const uint64_t *strides, const int *lower, const int *upper,
                                 unsigned channels, unsigned pixels, const unsigned *estrides,
                                 int interleave, int swizzle, int l2, int oob) {
    setup();
    if (!real_im2col) *(void **)&real_im2col = cuda_symbol("cuTensorMapEncodeIm2col");
    CUresult r = real_im2col(map, type, rank, address, dims, strides, lower, upper, channels, pixels,
                             estrides, interleave, swizzle, l2, oob);
    pthread_mutex_lock(&lock);
    FILE *f = encode_file();
    if (f) {
        unsigned corners = rank > 2 ? rank - 2 : 0;
        fprintf(f, "{\"index\": %d, \"result\": %d, \"encode\": \"im2col\", \"tensorDataType\": %d, "
                "\"tensorRank\": %u, \"globalAddress\": %llu, ", encodes, r, type, rank,
                (unsigned long long)(uintptr_t)address);
        list_u64(f, "globalDim", dims, rank);
        list_u64(f, "globalStrides", strides, rank ? rank - 1 : 0);
        list_int(f, "pixelBoxLowerCorner", lower, corners);
        list_int(f, "pixelBoxUpperCorner", upper, corners);
        fprintf(f, "\"channelsPerPixel\": %u, \"pixelsPerColumn\": %u, ", channels, pixels);
        list_u32(f, "elementStrides", estrides, rank);
        encode_tail(f, map, r, interleave, swizzle, l2, oob);
    }
    if (r == 0) remember_map(map, encodes, address);
    encodes++;
    pthread_mutex_unlock(&lock);
    return r;
}

/* -- images: what modules and libraries are loaded from ------------------------------------------- */
static size_t image_size(const unsigned char *p, const char **kind) {
    uint32_t magic;
    memcpy(&magic, p, 4);
    if (magic == 0xba55ed50u) {  /* a fatbin: {magic, u16 version, u16 header size, u64 body size} */
        uint16_t header;
        uint64_t body;
        memcpy(&header, p + 6, 2);
        memcpy(&body, p + 8, 8);
        *kind = "fatbin";
        return header + body;
    }
    if (!memcmp(p, "\177ELF", 4) && p[4] == 2) {  /* an ELF64 cubin: its headers bound it */
        uint64_t phoff, shoff;
        uint16_t phentsize, phnum, shentsize, shnum;
        memcpy(&phoff, p + 32, 8);
        memcpy(&shoff, p + 40, 8);
        memcpy(&phentsize, p + 54, 2);
        memcpy(&phnum, p + 56, 2);
        memcpy(&shentsize, p + 58, 2);
        memcpy(&shnum, p + 60, 2);
        size_t a = shoff + (size_t)shentsize * shnum, b = phoff + (size_t)phentsize * phnum;
        *kind = "cubin";
        return a > b ? a : b;
    }
    *kind = "ptx";
    return strlen((const char *)p);
}

static void dump_image(const void *image, const char *how) {
    if (!image) return;
    const unsigned char *p = image;
    uint32_t magic;
    memcpy(&magic, p, 4);
    if (magic == 0x466243b1u) memcpy(&p, p + 8, sizeof p);
    const char *kind = "unknown";
    size_t n = image_size(p, &kind);
    pthread_mutex_lock(&lock);
    char name[64];
    snprintf(name, sizeof name, "image-%d.bin", images);
    FILE *f = open_out(name, "wb");
    if (f) { fwrite(p, 1, n, f); fclose(f); }
    snprintf(name, sizeof name, "image-%d.json", images);
    f = open_out(name, "w");
    if (f) { fprintf(f, "{\"kind\": \"%s\", \"loaded_by\": \"%s\", \"size\": %zu}\n", kind, how, n); fclose(f); }
    images++;
    pthread_mutex_unlock(&lock);
}

static load_t real_load;
CUresult cuModuleLoadData(void **module, const void *image) {
    setup();
    if (!real_load) *(void **)&real_load = cuda_symbol("cuModuleLoadData");
    dump_image(image, "cuModuleLoadData");
    return real_load(module, image);
}

static load_ex_t real_load_ex;
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n, void *options, void **values) {
    setup();
    if (!real_load_ex) *(void **)&real_load_ex = cuda_symbol("cuModuleLoadDataEx");
    dump_image(image, "cuModuleLoadDataEx");
    return real_load_ex(module, image, n, options, values);
}

static load_t real_load_fat;
CUresult cuModuleLoadFatBinary(void **module, const void *image) {
    setup();
    if (!real_load_fat) *(void **)&real_load_fat = cuda_symbol("cuModuleLoadFatBinary");
    dump_image(image, "cuModuleLoadFatBinary");
    return real_load_fat(module, image);
}

static lib_load_t real_lib_load;
CUresult cuLibraryLoadData(void **library, const void *code, void *jit, void **jitv, unsigned njit, void *lib,
                           void **libv, unsigned nlib) {
    setup();
    if (!real_lib_load) *(void **)&real_lib_load = cuda_symbol("cuLibraryLoadData");
    dump_image(code, "cuLibraryLoadData");
    return real_lib_load(library, code, jit, jitv, njit, lib, libv, nlib);
}

/* -- launches ------------------------------------------------------------------------------------ */
typedef struct { CUdeviceptr base; size_t size; } Alloc;

static const char *kernel_name(CUfunction f) {
    const char *name = NULL;
    if (get_name && get_name(&name, f) == 0 && name) return name;
    if (kernel_get_name && kernel_get_name(&name, f) == 0 && name) return name;
    return NULL;
}

static int find_alloc(Alloc *allocs, int n, CUdeviceptr base) {
    for (int i = 0; i < n; i++)
        if (allocs[i].base == base) return i;
    return -1;
}

/* The parameters' offsets and sizes (CUDA 12.4+); returns their count, or -1 when the driver cannot say. */
static int param_layout(CUfunction f, size_t *off, size_t *size) {
    CUresult (*infos[2])(CUfunction, size_t, size_t *, size_t *) = {
        param_info, (CUresult (*)(CUfunction, size_t, size_t *, size_t *))kernel_param_info};
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        while (infos[pass] && n < 4096 && infos[pass](f, (size_t)n, &off[n], &size[n]) == 0) n++;
        if (n > 0) return n;
    }
    return -1;  /* no parameters, or a driver before CUDA 12.4 */
}

static int add_alloc(Alloc *allocs, int *n, CUdeviceptr v, CUdeviceptr *base) {
    size_t sz;
    if (!v || address_range(base, &sz, v) != 0) return -1;
    int k = find_alloc(allocs, *n, *base);
    if (k < 0 && *n < 512) { allocs[*n].base = *base; allocs[*n].size = sz; k = (*n)++; }
    return k;
}

static void snapshot(int launch, Alloc *allocs, int n, const char *when) {
    size_t cap = (size_t)1 << 30;
    const char *env = getenv("MBARRIER_CAPTURE_MAX_BUFFER");
    if (env) cap = strtoull(env, NULL, 10);
    for (int i = 0; i < n; i++) {
        if (allocs[i].size > cap) continue;
        void *host = malloc(allocs[i].size ? allocs[i].size : 1);
        if (!host) continue;
        if (dtoh(host, allocs[i].base, allocs[i].size) == 0) {
            char name[96];
            snprintf(name, sizeof name, "launch-%d.alloc-%d.%s.bin", launch, i, when);
            FILE *f = open_out(name, "wb");
            if (f) { fwrite(host, 1, allocs[i].size, f); fclose(f); }
        }
        free(host);
    }
}

static int wanted(const char *name) {
    const char *pattern = getenv("MBARRIER_CAPTURE_KERNEL");
    const char *most = getenv("MBARRIER_CAPTURE_MAX_LAUNCHES");
    if (most && launches >= atoi(most)) return 0;
    return !pattern || !*pattern || (name && fnmatch(pattern, name, 0) == 0);
}

typedef CUresult (*go_t)(void *ctx);

/* Capture one launch around `go` (which makes the real call); `params` is kernelParams, `extra` the
 * alternative argument buffer. */
static CUresult capture(CUfunction f, const unsigned grid[3], const unsigned block[3], const unsigned cluster[3],
                        unsigned shared, void **params, void **extra, const char *api, go_t go, void *ctx) {
    setup();
    setup_cuda();
    const char *name = kernel_name(f);
    pthread_mutex_lock(&lock);
    if (!wanted(name) || !address_range || !dtoh || !ctx_sync) {
        pthread_mutex_unlock(&lock);
        return go(ctx);
    }
    int id = launches++;
    static size_t off[4096], size[4096];
    int n = param_layout(f, off, size);
    unsigned char *bytes = calloc(MAX_PARAMS, 1);
    size_t total = 0;
    const char *layout = "cuFuncGetParamInfo";
    if (extra) {  /* {CU_LAUNCH_PARAM_BUFFER_POINTER, p, CU_LAUNCH_PARAM_BUFFER_SIZE, &n, END} */
        void *buf = NULL;
        size_t bufsize = 0;
        for (int i = 0; extra[i] && i < 16; i += 2) {
            if (extra[i] == (void *)1) buf = extra[i + 1];
            if (extra[i] == (void *)2) bufsize = *(size_t *)extra[i + 1];
        }
        if (buf && bufsize <= MAX_PARAMS) { memcpy(bytes, buf, bufsize); total = bufsize; }
        layout = "extra";
    } else if (n > 0 && params) {
        for (int i = 0; i < n; i++)
            if (off[i] + size[i] <= MAX_PARAMS) {
                memcpy(bytes + off[i], params[i], size[i]);
                if (off[i] + size[i] > total) total = off[i] + size[i];
            }
    }
    ctx_sync();
    /* tensor maps first (64-aligned 128-byte runs equal to a map an encode call made), then pointers */
    FILE *rec;
    char fname[64];
    snprintf(fname, sizeof fname, "launch-%d.json", id);
    rec = open_out(fname, "w");
    Alloc allocs[512];
    int nallocs = 0;
    unsigned char covered[MAX_PARAMS / 8] = {0};
    if (rec) {
        char gpu[256] = "";
        int device = 0, version = 0;
        if (ctx_device && device_name && ctx_device(&device) == 0) device_name(gpu, sizeof gpu, device);
        for (char *c = gpu; *c; c++)
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = ' ';
        if (driver_version) driver_version(&version);
        fprintf(rec, "{\"index\": %d, \"api\": \"%s\", \"kernel\": \"%s\", \"device\": \"%s\", "
                "\"driver\": %d, ", id, api, name ? name : "", gpu, version);
        fprintf(rec, "\"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"cluster\": [%u, %u, %u], "
                "\"dynamic_shared\": %u, \"param_layout\": \"%s\", \"params\": [", grid[0], grid[1], grid[2],
                block[0], block[1], block[2], cluster[0], cluster[1], cluster[2], shared, layout);
        for (int i = 0; !extra && i < n; i++)
            fprintf(rec, "%s[%zu, %zu]", i ? ", " : "", off[i], size[i]);
        fputs("], \"bytes\": ", rec);
        hex(rec, bytes, total);
        fputs(", \"tensor_maps\": [", rec);
        int first = 1;
        /* every 8 bytes: the driver's offsets may start from a base that is not 64-aligned */
        for (size_t at = 0; at + 128 <= total; at += 8)
            for (int e = 0; e < nencoded; e++)
                if (!memcmp(bytes + at, encoded[e].bytes, 128)) {
                    CUdeviceptr base = 0;
                    int k = add_alloc(allocs, &nallocs, encoded[e].address, &base);
                    fprintf(rec, "%s[%zu, %d, %d, %llu]", first ? "" : ", ", at, encoded[e].index, k,
                            (unsigned long long)(encoded[e].address - base));
                    first = 0;
                    for (size_t b = at; b < at + 128; b += 8) covered[b / 8] = 1;
                    break;
                }
        fputs("], \"pointers\": [", rec);
        first = 1;
        for (size_t at = 0; at + 8 <= total; at += 8) {
            CUdeviceptr v, base;
            memcpy(&v, bytes + at, 8);
            int k = covered[at / 8] ? -1 : add_alloc(allocs, &nallocs, v, &base);
            if (k < 0) continue;
            fprintf(rec, "%s[%zu, %d, %llu]", first ? "" : ", ", at, k, (unsigned long long)(v - base));
            first = 0;
        }
        fputs("], \"allocations\": [", rec);
        for (int i = 0; i < nallocs; i++)
            fprintf(rec, "%s[%llu, %zu]", i ? ", " : "", (unsigned long long)allocs[i].base, allocs[i].size);
        fputs("]", rec);
    }
    snapshot(id, allocs, nallocs, "before");
    CUresult r = go(ctx);
    CUresult s = ctx_sync();
    snapshot(id, allocs, nallocs, "after");
    if (rec) {
        fprintf(rec, ", \"result\": %d, \"synchronize\": %d}\n", r, s);
        fclose(rec);
    }
    free(bytes);
    pthread_mutex_unlock(&lock);
    return r;
}

typedef struct {
    launch_t real;
    CUfunction f;
    unsigned g[3], b[3], shared;
    CUstream stream;
    void **params, **extra;
    const LaunchConfig *config;
    launch_ex_t real_ex;
} Call;

static CUresult go_launch(void *p) {
    Call *c = p;
    return c->real(c->f, c->g[0], c->g[1], c->g[2], c->b[0], c->b[1], c->b[2], c->shared, c->stream, c->params,
                   c->extra);
}

static CUresult go_launch_ex(void *p) {
    Call *c = p;
    return c->real_ex(c->config, c->f, c->params, c->extra);
}

static CUresult launch_with(launch_t real, const char *api, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream stream,
                            void **params, void **extra) {
    Call c = {real, f, {gx, gy, gz}, {bx, by, bz}, shared, stream, params, extra, NULL, NULL};
    unsigned one[3] = {1, 1, 1};
    return capture(f, c.g, c.b, one, shared, params, extra, api, go_launch, &c);
}

static CUresult launch_ex_with(launch_ex_t real, const char *api, const LaunchConfig *config, CUfunction f,
                               void **params, void **extra) {
    Call c = {NULL, f, {0}, {0}, 0, NULL, params, extra, config, real};
    unsigned cluster[3] = {1, 1, 1};
    for (unsigned i = 0; i < config->nattrs; i++)
        if (config->attrs[i].id == ATTR_CLUSTER_DIMENSION) {
            cluster[0] = config->attrs[i].value.cluster.x;
            cluster[1] = config->attrs[i].value.cluster.y;
            cluster[2] = config->attrs[i].value.cluster.z;
        }
    return capture(f, config->grid, config->block, cluster, config->shared, params, extra, api, go_launch_ex, &c);
}

static launch_t real_launch, real_launch_ptsz;
static launch_ex_t real_launch_ex, real_launch_ex_ptsz;

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, CUstream stream, void **params, void **extra) {
    setup();
    if (!real_launch) *(void **)&real_launch = cuda_symbol("cuLaunchKernel");
    return launch_with(real_launch, "cuLaunchKernel", f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared, CUstream stream, void **params, void **extra) {
    setup();
    if (!real_launch_ptsz) *(void **)&real_launch_ptsz = cuda_symbol("cuLaunchKernel_ptsz");
    return launch_with(real_launch_ptsz, "cuLaunchKernel", f, gx, gy, gz, bx, by, bz, shared, stream, params,
                       extra);
}

CUresult cuLaunchKernelEx(const LaunchConfig *config, CUfunction f, void **params, void **extra) {
    setup();
    if (!real_launch_ex) *(void **)&real_launch_ex = cuda_symbol("cuLaunchKernelEx");
    return launch_ex_with(real_launch_ex, "cuLaunchKernelEx", config, f, params, extra);
}

CUresult cuLaunchKernelEx_ptsz(const LaunchConfig *config, CUfunction f, void **params, void **extra) {
    setup();
    if (!real_launch_ex_ptsz) *(void **)&real_launch_ex_ptsz = cuda_symbol("cuLaunchKernelEx_ptsz");
    return launch_ex_with(real_launch_ex_ptsz, "cuLaunchKernelEx", config, f, params, extra);
}

/* -- handing out the wrappers ---------------------------------------------------------------------- */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, void *status);

typedef struct { const char *name; void *wrapper; void **real; } Hook;

static Hook *hooks(void) {
    static Hook table[] = {
        {"cuLaunchKernel", (void *)cuLaunchKernel, (void **)&real_launch},
        {"cuLaunchKernel_ptsz", (void *)cuLaunchKernel_ptsz, (void **)&real_launch_ptsz},
        {"cuLaunchKernelEx", (void *)cuLaunchKernelEx, (void **)&real_launch_ex},
        {"cuLaunchKernelEx_ptsz", (void *)cuLaunchKernelEx_ptsz, (void **)&real_launch_ex_ptsz},
        {"cuTensorMapEncodeTiled", (void *)cuTensorMapEncodeTiled, (void **)&real_tiled},
        {"cuTensorMapEncodeIm2col", (void *)cuTensorMapEncodeIm2col, (void **)&real_im2col},
        {"cuModuleLoadData", (void *)cuModuleLoadData, (void **)&real_load},
        {"cuModuleLoadDataEx", (void *)cuModuleLoadDataEx, (void **)&real_load_ex},
        {"cuModuleLoadFatBinary", (void *)cuModuleLoadFatBinary, (void **)&real_load_fat},
        {"cuLibraryLoadData", (void *)cuLibraryLoadData, (void **)&real_lib_load},
        {"cuGetProcAddress", (void *)cuGetProcAddress, NULL},
        {"cuGetProcAddress_v2", (void *)cuGetProcAddress_v2, NULL},
        {NULL, NULL, NULL},
    };
    return table;
}

/* The wrapper for `found` (a real entry point handed out for `symbol`), or `found` itself. The real one
 * is matched by address first (cuGetProcAddress may hand out the per-thread-stream variant under the
 * plain name), then by name. */
static void *wrap(const char *symbol, void *found, uint64_t flags, int version) {
    if (!found || !symbol) return found;
    if (!strcmp(symbol, "cuGetProcAddress"))  /* 12.0 made it the five-argument _v2 */
        return version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    for (Hook *h = hooks(); h->name; h++) {
        if (found == h->wrapper) return found;
        if (h->real && found == cuda_symbol(h->name)) { *h->real = found; return h->wrapper; }
    }
    char name[128];
    snprintf(name, sizeof name, "%s%s", symbol,
             (flags & GET_PROC_PER_THREAD) && !strncmp(symbol, "cuLaunchKernel", 14) ? "_ptsz" : "");
    for (Hook *h = hooks(); h->name; h++)
        if (!strcmp(h->name, name)) {
            if (h->real) *h->real = found;
            return h->wrapper;
        }
    return found;
}

static gpa1_t real_gpa1;
static gpa2_t real_gpa2;

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags) {
    setup();
    if (!real_gpa1) *(void **)&real_gpa1 = cuda_symbol("cuGetProcAddress");
    CUresult r = real_gpa1(symbol, pfn, version, flags);
    note("cuGetProcAddress %s", symbol);
    if (r == 0 && pfn) *pfn = wrap(symbol, *pfn, flags, version);
    return r;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, void *status) {
    setup();
    if (!real_gpa2) *(void **)&real_gpa2 = cuda_symbol("cuGetProcAddress_v2");
    CUresult r = real_gpa2(symbol, pfn, version, flags, status);
    note("cuGetProcAddress_v2 %s", symbol);
    if (r == 0 && pfn) *pfn = wrap(symbol, *pfn, flags, version);
    return r;
}

void *dlsym(void *handle, const char *symbol) {
    setup();
    void *found = real_dlsym(handle, symbol);
    if (!found || strncmp(symbol, "cu", 2)) return found;
    for (Hook *h = hooks(); h->name; h++)
        if (!strcmp(h->name, symbol)) {
            note("dlsym %s", symbol);
            if (found == h->wrapper) return found;  /* the global scope: this library's own definition */
            if (h->real) *h->real = found;
            return h->wrapper;
        }
    return found;
}
