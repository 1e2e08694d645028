/* Device memory for --device options: see device_memory.h. */
#include "device_memory.h"
#include <dlfcn.h>
#include <stdio.h>

static struct {
    const char *kind;
    /* the stand-in's */
    void *(*fake_alloc)(size_t);
    void (*fake_free)(void *);
    int (*fake_write)(void *, const void *, size_t), (*fake_read)(void *, const void *, size_t);
    /* the CUDA runtime's */
    int (*malloc)(void **, size_t), (*free)(void *), (*memcpy)(void *, const void *, size_t, int);
} dm;

#define SYM(h, field, name) (*(void **)&dm.field = dlsym(h, name))

int devmem_open(char *why, size_t len)
{
    if (dm.kind) return 0;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (h && dlsym(h, "fake_cuda_malloc_current")) {
        SYM(h, fake_alloc, "fake_cuda_malloc_current");
        SYM(h, fake_free, "fake_cuda_free");
        SYM(h, fake_write, "fake_cuda_write");
        SYM(h, fake_read, "fake_cuda_read");
        if (dm.fake_alloc && dm.fake_free && dm.fake_write && dm.fake_read) dm.kind = "the stand-in driver";
    } else {
        const char *names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12"};
        void *rt = NULL;
        for (int i = 0; i < 3 && !rt; i++) rt = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (rt) {
            SYM(rt, malloc, "cudaMalloc");
            SYM(rt, free, "cudaFree");
            SYM(rt, memcpy, "cudaMemcpy");
        }
        if (dm.malloc && dm.free && dm.memcpy) dm.kind = "CUDA runtime";
    }
    if (!dm.kind) {
        snprintf(why, len, "device memory needs the CUDA runtime (libcudart) and a GPU, or tests/fakecuda/libcuda.so.1, "
                           "on LD_LIBRARY_PATH");
        return -1;
    }
    return 0;
}
#undef SYM

const char *devmem_kind(void) { return dm.kind ? dm.kind : "none"; }

void *devmem_alloc(size_t bytes)
{
    if (dm.fake_alloc) return dm.fake_alloc(bytes);
    void *p = NULL;
    return dm.malloc && dm.malloc(&p, bytes ? bytes : 1) == 0 ? p : NULL;
}

void devmem_free(void *p)
{
    if (!p) return;
    if (dm.fake_free) dm.fake_free(p);
    else if (dm.free) dm.free(p);
}

/* cudaMemcpyHostToDevice is 1, cudaMemcpyDeviceToHost 2 */
int devmem_write(void *dev, const void *host, size_t bytes)
{
    return dm.fake_write ? dm.fake_write(dev, host, bytes) : dm.memcpy(dev, host, bytes, 1);
}

int devmem_read(void *host, const void *dev, size_t bytes)
{
    return dm.fake_read ? dm.fake_read(host, dev, bytes) : dm.memcpy(host, dev, bytes, 2);
}
