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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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

/* ---- contexts: one per process, current on a thread once it used CUDA ----
 * As with the runtime API, a thread that allocated device memory has the
 * context current; another thread (a communication thread) has none until
 * it pushes one, and copies there fail as they would with the real driver. */
static char the_context;
static __thread void *current;
void *fake_cuda_malloc_current(size_t n);
void *fake_cuda_malloc_current(size_t n)
{
    current = &the_context;
    return fake_cuda_malloc(n);
}

static unsigned long long pinned_allocs, async_copies, pushes;
unsigned long long fake_cuda_pinned_allocs(void) { return pinned_allocs; }
unsigned long long fake_cuda_async_copies(void) { return async_copies; }
unsigned long long fake_cuda_pushes(void) { return pushes; }

/* ---- the driver API's entry points ---- */
enum { ERR_INVALID_VALUE = 1, ERR_INVALID_CONTEXT = 201 };
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr);
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n);
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n);
int cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *stream);
int cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *stream);
int cuDeviceGetCount(int *count);
int cuCtxGetCurrent(void **ctx);
int cuCtxPushCurrent_v2(void *ctx);
int cuCtxPopCurrent_v2(void **ctx);
int cuMemHostAlloc(void **p, size_t n, unsigned int flags);
int cuStreamCreate(void **stream, unsigned int flags);
int cuStreamSynchronize(void *stream);

/* Pointer queries asked, and what one costs: FAKE_CUDA_QUERY_NS spins that
 * long in each, to stand for the real driver's 250 to 500 ns
 * (openucx/ucx#2362) when measuring what the queries cost a call. */
static unsigned long long queries;
unsigned long long fake_cuda_queries(void) { return __atomic_load_n(&queries, __ATOMIC_RELAXED); }
static long query_ns;
static void read_query_ns(void) __attribute__((constructor));
static void read_query_ns(void)
{
    const char *e = getenv("FAKE_CUDA_QUERY_NS");
    query_ns = e ? atol(e) : 0;
}

static void spend_query_time(void)
{
    if (query_ns <= 0) return;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < query_ns);
}

int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr)
{
    __atomic_add_fetch(&queries, 1, __ATOMIC_RELAXED);
    spend_query_time();
    pthread_mutex_lock(&mu);
    int i = find((const char *)ptr, 1);
    pthread_mutex_unlock(&mu);
    if (i < 0) return ERR_INVALID_VALUE;            /* not the driver's */
    if (attribute == 1) *(void **)data = &the_context;  /* CU_POINTER_ATTRIBUTE_CONTEXT */
    else if (attribute == 2) *(unsigned int *)data = 2; /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE: CU_MEMORYTYPE_DEVICE */
    else if (attribute == 8) *(int *)data = 0;          /* CU_POINTER_ATTRIBUTE_IS_MANAGED: no */
    else return ERR_INVALID_VALUE;
    return 0;
}

int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n)
{
    return current ? fake_cuda_read(dst, (const void *)src, n) : ERR_INVALID_CONTEXT;
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n)
{
    return current ? fake_cuda_write((void *)dst, src, n) : ERR_INVALID_CONTEXT;
}

/* Copies on a stream run at once here (the stream is a name only); they
 * need a stream of the current context. */
int cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *stream)
{
    if (!current) return ERR_INVALID_CONTEXT;
    if (!stream) return ERR_INVALID_VALUE;
    __atomic_add_fetch(&async_copies, 1, __ATOMIC_RELAXED);
    return fake_cuda_read(dst, (const void *)src, n);
}
int cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *stream)
{
    if (!current) return ERR_INVALID_CONTEXT;
    if (!stream) return ERR_INVALID_VALUE;
    __atomic_add_fetch(&async_copies, 1, __ATOMIC_RELAXED);
    return fake_cuda_write((void *)dst, src, n);
}

int cuDeviceGetCount(int *count)
{
    *count = 1;
    return 0;
}

int cuCtxGetCurrent(void **ctx)
{
    *ctx = current;
    return 0;
}
int cuCtxPushCurrent_v2(void *ctx)
{
    if (ctx != &the_context) return ERR_INVALID_CONTEXT;
    __atomic_add_fetch(&pushes, 1, __ATOMIC_RELAXED);
    current = ctx;
    return 0;
}
int cuCtxPopCurrent_v2(void **ctx)
{
    if (ctx) *ctx = current;
    current = NULL;
    return 0;
}

/* Pinned memory is plain memory here, counted. */
int cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
    (void)flags;
    if (!current) return ERR_INVALID_CONTEXT;
    *p = malloc(n);
    if (!*p) return 2;   /* CUDA_ERROR_OUT_OF_MEMORY */
    __atomic_add_fetch(&pinned_allocs, 1, __ATOMIC_RELAXED);
    return 0;
}

static char a_stream;
int cuStreamCreate(void **stream, unsigned int flags)
{
    (void)flags;
    if (!current) return ERR_INVALID_CONTEXT;
    *stream = &a_stream;
    return 0;
}
int cuStreamSynchronize(void *stream) { return stream == &a_stream ? 0 : ERR_INVALID_VALUE; }

/* The device: 0.  Its UUID is the process's own (each rank a GPU of its
 * own), or, with FAKE_CUDA_SHARED_GPU=1, one for all (ranks sharing one). */
int cuCtxGetDevice(int *dev);
int cuCtxGetDevice(int *dev)
{
    if (!current) return ERR_INVALID_CONTEXT;
    *dev = 0;
    return 0;
}
int cuDeviceGetUuid_v2(unsigned char uuid[16], int dev);
int cuDeviceGetUuid_v2(unsigned char uuid[16], int dev)
{
    if (dev != 0) return ERR_INVALID_VALUE;
    const char *shared = getenv("FAKE_CUDA_SHARED_GPU");
    unsigned long id = shared && *shared == '1' ? 1UL : (unsigned long)getpid();
    memset(uuid, 0, 16);
    memcpy(uuid, &id, sizeof id);
    return 0;
}

int cuMemAlloc_v2(unsigned long long *p, size_t n);
int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    if (!current) return ERR_INVALID_CONTEXT;
    void *d = fake_cuda_malloc(n);
    if (!d) return 2;   /* CUDA_ERROR_OUT_OF_MEMORY */
    *p = (unsigned long long)d;
    return 0;
}
int cuMemFree_v2(unsigned long long p);
int cuMemFree_v2(unsigned long long p)
{
    fake_cuda_free((void *)p);
    return 0;
}

int cuInit(unsigned int flags);
int cuInit(unsigned int flags)
{
    (void)flags;
    return 0;
}
