/* A stand-in for the CUDA driver, built as tests/fakecuda/libcuda.so.1, so
 * that starcoll's device path (plugin/device.h) runs under mpirun on a
 * machine without a GPU.  Not a mock of MPI: the MPI is the real one.
 *
 * "Device memory" here is host memory the CPU cannot touch: pages mapped
 * PROT_NONE, opened only inside this library's copies.  A device pointer
 * that reached MPI or starcoll's own code unstaged would fault at once, as
 * it would (or worse, read garbage) with a real GPU and an MPI that is not
 * CUDA-aware.  The driver entry points starcoll resolves are provided with
 * the driver API's names and meanings; fake_cuda_* are for the tests. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_BLOCKS 256
static struct {
    char *p;
    size_t n;
} blocks[MAX_BLOCKS];
static int nblocks;
static unsigned long long copies;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* The block holding [p, p + n), or -1. */
static int find(const char *p, size_t n)
{
    for (int i = 0; i < nblocks; i++)
        if (blocks[i].p && p >= blocks[i].p && p + n <= blocks[i].p + blocks[i].n) return i;
    return -1;
}

void *fake_cuda_malloc(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    pthread_mutex_lock(&mu);
    int ok = nblocks < MAX_BLOCKS;
    if (ok) {
        blocks[nblocks].p = p;
        blocks[nblocks++].n = n ? n : 1;
    }
    pthread_mutex_unlock(&mu);
    if (!ok) {
        munmap(p, n ? n : 1);
        return NULL;
    }
    return p;
}

void fake_cuda_free(void *p)
{
    pthread_mutex_lock(&mu);
    int i = find(p, 1);
    if (i >= 0) {
        munmap(blocks[i].p, blocks[i].n);
        blocks[i].p = NULL;
    }
    pthread_mutex_unlock(&mu);
}

/* A copy into or out of device memory: the pages open for its length. */
static int copy(void *dst, const void *src, size_t n, char *dev, int prot)
{
    pthread_mutex_lock(&mu);
    int i = find(dev, n);
    if (i < 0) {
        pthread_mutex_unlock(&mu);
        return 1;   /* CUDA_ERROR_INVALID_VALUE */
    }
    mprotect(blocks[i].p, blocks[i].n, prot);
    memcpy(dst, src, n);
    mprotect(blocks[i].p, blocks[i].n, PROT_NONE);
    copies++;
    pthread_mutex_unlock(&mu);
    return 0;
}

int fake_cuda_write(void *dev, const void *host, size_t n) { return copy(dev, host, n, dev, PROT_WRITE); }
int fake_cuda_read(void *host, const void *dev, size_t n) { return copy(host, dev, n, (char *)dev, PROT_READ); }
unsigned long long fake_cuda_copies(void) { return copies; }

/* ---- the driver API's entry points ---- */
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr);
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n);
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n);
int cuDeviceGetCount(int *count);

int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr)
{
    pthread_mutex_lock(&mu);
    int i = find((const char *)ptr, 1);
    pthread_mutex_unlock(&mu);
    if (i < 0) return 1;                     /* not the driver's: CUDA_ERROR_INVALID_VALUE */
    if (attribute == 2) *(unsigned int *)data = 2;   /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE: CU_MEMORYTYPE_DEVICE */
    else if (attribute == 8) *(int *)data = 0;       /* CU_POINTER_ATTRIBUTE_IS_MANAGED: no */
    else return 1;
    return 0;
}

int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) { return fake_cuda_read(dst, (const void *)src, n); }
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n) { return fake_cuda_write((void *)dst, src, n); }

int cuDeviceGetCount(int *count)
{
    *count = 1;
    return 0;
}

int cuInit(unsigned int flags);
int cuInit(unsigned int flags)
{
    (void)flags;
    return 0;
}
