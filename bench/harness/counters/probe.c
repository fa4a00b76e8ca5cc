/* One launch of one kernel of a PTX file, through the CUDA driver API,
 * for bench/harness/counters-vs-ncu.sh: the same program runs on a GPU
 * under `ncu` and here on the course's CPU emulator (its libcuda.so.1
 * first on the library path), so both count the same launch of the same
 * PTX. The driver is opened with dlopen, so it builds with any C compiler
 * and no CUDA headers:
 *
 *   cc -O2 -o probe probe.c -ldl
 *   probe PTX KERNEL GX,GY,GZ BX,BY,BZ DYNAMIC_SHARED ARG...
 *
 * Each ARG is `buf:BYTES` (a device buffer of BYTES, every 4-byte word
 * 1.0f, passed as its pointer), `i32:N`, `u32:N`, `u64:N` or `f32:X`.
 * Prints "launched" and exits 0, or one line naming the call that failed
 * and exits 1. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef void *Handle;

static void *driver;

static void *symbol(const char *name) {
    void *found = dlsym(driver, name);
    if (!found) {
        fprintf(stderr, "probe: the driver has no %s\n", name);
        exit(1);
    }
    return found;
}

static void check(CUresult result, const char *call) {
    if (result != 0) {
        fprintf(stderr, "probe: %s failed with CUDA error %d\n", call, result);
        exit(1);
    }
}

static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "probe: cannot open %s\n", path);
        exit(1);
    }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, file) != (size_t)size) {
        fprintf(stderr, "probe: cannot read %s\n", path);
        exit(1);
    }
    text[size] = '\0';
    fclose(file);
    return text;
}

static void triple(const char *text, unsigned out[3]) {
    if (sscanf(text, "%u,%u,%u", &out[0], &out[1], &out[2]) != 3) {
        fprintf(stderr, "probe: %s is not X,Y,Z\n", text);
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: probe PTX KERNEL GX,GY,GZ BX,BY,BZ DYNAMIC_SHARED ARG...\n");
        return 2;
    }
    driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!driver) {
        fprintf(stderr, "probe: no libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    CUresult (*init)(unsigned) = symbol("cuInit");
    CUresult (*device_get)(int *, int) = symbol("cuDeviceGet");
    CUresult (*retain)(Handle *, int) = symbol("cuDevicePrimaryCtxRetain");
    CUresult (*set_current)(Handle) = symbol("cuCtxSetCurrent");
    CUresult (*load)(Handle *, const void *) = symbol("cuModuleLoadData");
    CUresult (*get_function)(Handle *, Handle, const char *) = symbol("cuModuleGetFunction");
    CUresult (*alloc)(uint64_t *, size_t) = symbol("cuMemAlloc_v2");
    CUresult (*copy_in)(uint64_t, const void *, size_t) = symbol("cuMemcpyHtoD_v2");
    CUresult (*launch)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, Handle, void **, void **) = symbol("cuLaunchKernel");
    CUresult (*synchronize)(void) = symbol("cuCtxSynchronize");

    int device;
    Handle context, module, function;
    check(init(0), "cuInit");
    check(device_get(&device, 0), "cuDeviceGet");
    check(retain(&context, device), "cuDevicePrimaryCtxRetain");
    check(set_current(context), "cuCtxSetCurrent");
    char *ptx = read_file(argv[1]);
    check(load(&module, ptx), "cuModuleLoadData");
    check(get_function(&function, module, argv[2]), "cuModuleGetFunction");
    unsigned grid[3], block[3];
    triple(argv[3], grid);
    triple(argv[4], block);
    unsigned dynamic_shared = (unsigned)strtoul(argv[5], NULL, 10);

    int count = argc - 6;
    uint64_t *values = calloc((size_t)count + 1, sizeof(uint64_t));
    void **params = calloc((size_t)count + 1, sizeof(void *));
    for (int i = 0; i < count; ++i) {
        const char *arg = argv[6 + i];
        params[i] = &values[i];
        if (strncmp(arg, "buf:", 4) == 0) {
            size_t bytes = strtoull(arg + 4, NULL, 10);
            float *host = malloc(bytes + 4);
            for (size_t w = 0; w < bytes / 4; ++w) host[w] = 1.0f;
            check(alloc(&values[i], bytes), "cuMemAlloc");
            check(copy_in(values[i], host, bytes), "cuMemcpyHtoD");
            free(host);
        } else if (strncmp(arg, "i32:", 4) == 0) {
            int32_t v = (int32_t)strtol(arg + 4, NULL, 10);
            memcpy(&values[i], &v, 4);
        } else if (strncmp(arg, "u32:", 4) == 0) {
            uint32_t v = (uint32_t)strtoul(arg + 4, NULL, 10);
            memcpy(&values[i], &v, 4);
        } else if (strncmp(arg, "u64:", 4) == 0) {
            values[i] = strtoull(arg + 4, NULL, 10);
        } else if (strncmp(arg, "f32:", 4) == 0) {
            float v = strtof(arg + 4, NULL);
            memcpy(&values[i], &v, 4);
        } else {
            fprintf(stderr, "probe: %s is not buf:, i32:, u32:, u64: or f32:\n", arg);
            return 2;
        }
    }
    check(launch(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                 dynamic_shared, NULL, params, NULL),
          "cuLaunchKernel");
    check(synchronize(), "cuCtxSynchronize");
    printf("launched\n");
    return 0;
}
