/* CUDA device buffers: see device.h. */
#define _GNU_SOURCE
#include "device.h"
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_memory.h"
#include "runtime.h"

/* The few driver entry points used, declared as the driver API has them
 * (cuda.h is not needed to build). */
typedef int sc_curesult;
typedef unsigned long long sc_cudeviceptr;
typedef void *sc_cucontext;
typedef void *sc_custream;
enum { SC_CU_POINTER_ATTRIBUTE_CONTEXT = 1, SC_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
       SC_CU_POINTER_ATTRIBUTE_IS_MANAGED = 8, SC_CU_MEMORYTYPE_DEVICE = 2, SC_CU_MEMHOSTALLOC_PORTABLE = 1 };

static struct {
    int loaded;                 /* the driver's entry points are resolved */
    unsigned long long adds;    /* objects the dynamic linker had loaded at the last look */
    sc_curesult (*pointer_get_attribute)(void *data, int attribute, sc_cudeviceptr ptr);
    sc_curesult (*memcpy_dtoh)(void *dst, sc_cudeviceptr src, size_t bytes);
    sc_curesult (*memcpy_htod)(sc_cudeviceptr dst, const void *src, size_t bytes);
    sc_curesult (*device_get_count)(int *count);
    /* optional: pinned staging memory and copies on a stream of starcoll's */
    sc_curesult (*ctx_get_current)(sc_cucontext *ctx);
    sc_curesult (*ctx_push)(sc_cucontext ctx);
    sc_curesult (*ctx_pop)(sc_cucontext *ctx);
    sc_curesult (*host_alloc)(void **p, size_t bytes, unsigned int flags);
    sc_curesult (*stream_create)(sc_custream *s, unsigned int flags);
    sc_curesult (*stream_synchronize)(sc_custream s);
    sc_curesult (*memcpy_dtoh_async)(void *dst, sc_cudeviceptr src, size_t bytes, sc_custream s);
    sc_curesult (*memcpy_htod_async)(sc_cudeviceptr dst, const void *src, size_t bytes, sc_custream s);
    /* optional: for NCCL (nccl.h), which device a rank runs on and device scratch memory */
    sc_curesult (*ctx_get_device)(int *dev);
    sc_curesult (*device_get_uuid)(unsigned char uuid[16], int dev);
    sc_curesult (*mem_alloc)(sc_cudeviceptr *p, size_t bytes);
    sc_curesult (*mem_free)(sc_cudeviceptr p);
} cu;

static int count_adds(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;   /* the first object carries the counts */
}

#define SYM(field, name) (*(void **)&cu.field = dlsym(h, name))

/* Resolves the driver if it was loaded since the last look; 1 when it is. */
static int driver(void)
{
    if (__atomic_load_n(&cu.loaded, __ATOMIC_ACQUIRE)) return 1;
    unsigned long long adds = 0;
    dl_iterate_phdr(count_adds, &adds);
    if (adds == __atomic_load_n(&cu.adds, __ATOMIC_RELAXED)) return 0;   /* nothing loaded since */
    __atomic_store_n(&cu.adds, adds, __ATOMIC_RELAXED);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return 0;
    SYM(pointer_get_attribute, "cuPointerGetAttribute");
    SYM(memcpy_dtoh, "cuMemcpyDtoH_v2");
    SYM(memcpy_htod, "cuMemcpyHtoD_v2");
    SYM(device_get_count, "cuDeviceGetCount");
    if (!cu.pointer_get_attribute || !cu.memcpy_dtoh || !cu.memcpy_htod) {
        sc_say(SC_SAY_DEVICE, 0, "starcoll: libcuda.so.1 is loaded but lacks cuPointerGetAttribute or cuMemcpy; "
                                 "device buffers are not recognised");
        dlclose(h);
        return 0;
    }
    SYM(ctx_get_current, "cuCtxGetCurrent");
    SYM(ctx_push, "cuCtxPushCurrent_v2");
    SYM(ctx_pop, "cuCtxPopCurrent_v2");
    SYM(host_alloc, "cuMemHostAlloc");
    SYM(stream_create, "cuStreamCreate");
    SYM(stream_synchronize, "cuStreamSynchronize");
    SYM(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
    SYM(memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
    SYM(ctx_get_device, "cuCtxGetDevice");
    SYM(device_get_uuid, "cuDeviceGetUuid_v2");
    if (!cu.device_get_uuid) SYM(device_get_uuid, "cuDeviceGetUuid");
    SYM(mem_alloc, "cuMemAlloc_v2");
    SYM(mem_free, "cuMemFree_v2");
    __atomic_store_n(&cu.loaded, 1, __ATOMIC_RELEASE);   /* the handle stays open for the process's life */
    return 1;
}
#undef SYM

/* ---- staging memory: pinned chunks reused call after call ----
 * Pinned (page-locked) host memory copies at the bus's speed and lets the
 * copies run on a stream; allocating it is slow, so chunks are kept and
 * reused.  A call holds its chunk until it returns (the engine copies what
 * it keeps), so chunks in use at once are as many as calls staged at once:
 * one per communicator under way.  Past SC_PINNED_CHUNKS, or when the
 * driver cannot pin, plain malloc'ed memory serves. */
#define SC_PINNED_CHUNKS 8
#define SC_PINNED_MIN ((size_t)1 << 16)
#define SC_PINNED_TOTAL_MAX ((size_t)1 << 30)
static struct {
    pthread_mutex_t mu;
    struct { void *p; size_t bytes; int in_use; } chunk[SC_PINNED_CHUNKS];
    size_t total;
    int failed;                 /* the driver refused to pin once: not asked again */
} pinned = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t round_up(size_t n)
{
    size_t r = SC_PINNED_MIN;
    while (r < n && r < ((size_t)1 << 62)) r <<= 1;
    return r;
}

/* Host memory for `bytes`: a pinned chunk (*is_pinned 1) or malloc's. */
static void *staging_get(size_t bytes, int *is_pinned)
{
    *is_pinned = 0;
    if (cu.host_alloc && !pinned.failed) {
        pthread_mutex_lock(&pinned.mu);
        int best = -1, spare = -1;
        for (int i = 0; i < SC_PINNED_CHUNKS; i++) {
            if (pinned.chunk[i].in_use) continue;
            if (pinned.chunk[i].p && pinned.chunk[i].bytes >= bytes &&
                (best < 0 || pinned.chunk[i].bytes < pinned.chunk[best].bytes))
                best = i;
            if (!pinned.chunk[i].p && spare < 0) spare = i;
        }
        size_t want = round_up(bytes);
        if (best < 0 && spare >= 0 && pinned.total + want <= SC_PINNED_TOTAL_MAX) {
            void *p = NULL;
            if (cu.host_alloc(&p, want, SC_CU_MEMHOSTALLOC_PORTABLE) == 0 && p) {
                pinned.chunk[spare].p = p;
                pinned.chunk[spare].bytes = want;
                pinned.total += want;
                best = spare;
            } else
                pinned.failed = 1;   /* out of pinnable memory, or no context: plain memory from now on */
        }
        void *p = NULL;
        if (best >= 0) {
            pinned.chunk[best].in_use = 1;
            p = pinned.chunk[best].p;
            *is_pinned = 1;
        }
        pthread_mutex_unlock(&pinned.mu);
        if (p) return p;
    }
    return malloc(bytes ? bytes : 1);
}

static void staging_put(void *p, int is_pinned)
{
    if (!p) return;
    if (!is_pinned) {
        free(p);
        return;
    }
    pthread_mutex_lock(&pinned.mu);
    for (int i = 0; i < SC_PINNED_CHUNKS; i++)
        if (pinned.chunk[i].p == p) pinned.chunk[i].in_use = 0;
    pthread_mutex_unlock(&pinned.mu);
}

/* ---- copies: on a stream of starcoll's per context, synchronised ----
 * The stream is created with default flags, so it waits for work on the
 * context's legacy default stream: a gradient a kernel wrote there is
 * complete before it is copied.  A thread with no current context (a
 * communication thread that never called CUDA) runs the copies in the
 * buffer's own context, pushed for their length. */
#define SC_STREAMS 8
static struct {
    pthread_mutex_t mu;
    struct { sc_cucontext ctx; sc_custream stream; } s[SC_STREAMS];
    int n;
} streams = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The stream of the current context, or NULL: copies then run synchronously. */
static sc_custream stream_of(sc_cucontext ctx)
{
    if (!ctx || !cu.stream_create || !cu.stream_synchronize || !cu.memcpy_dtoh_async || !cu.memcpy_htod_async)
        return NULL;
    sc_custream st = NULL;
    pthread_mutex_lock(&streams.mu);
    for (int i = 0; i < streams.n && !st; i++)
        if (streams.s[i].ctx == ctx) st = streams.s[i].stream;
    if (!st && streams.n < SC_STREAMS && cu.stream_create(&st, 0) == 0 && st) {
        streams.s[streams.n].ctx = ctx;
        streams.s[streams.n++].stream = st;
    }
    pthread_mutex_unlock(&streams.mu);
    return st;
}

/* Makes a context current for the copies of the device buffer dev when the
 * thread has none; *pushed says whether one was pushed (pop it after). */
static sc_cucontext copy_context(const void *dev, int *pushed)
{
    *pushed = 0;
    sc_cucontext ctx = NULL;
    if (!cu.ctx_get_current || cu.ctx_get_current(&ctx) != 0) return NULL;
    if (ctx) return ctx;
    if (!cu.ctx_push || !cu.ctx_pop ||
        cu.pointer_get_attribute(&ctx, SC_CU_POINTER_ATTRIBUTE_CONTEXT, (sc_cudeviceptr)(uintptr_t)dev) != 0 || !ctx ||
        cu.ctx_push(ctx) != 0)
        return NULL;
    *pushed = 1;
    return ctx;
}

static void copy_context_end(int pushed)
{
    sc_cucontext ctx;
    if (pushed) cu.ctx_pop(&ctx);
}

static int to_host(void *dst, const void *dev, size_t bytes, sc_custream st)
{
    if (!st) return cu.memcpy_dtoh(dst, (sc_cudeviceptr)(uintptr_t)dev, bytes);
    int rc = cu.memcpy_dtoh_async(dst, (sc_cudeviceptr)(uintptr_t)dev, bytes, st);
    return rc ? rc : cu.stream_synchronize(st);
}

static int to_device(void *dev, const void *src, size_t bytes, sc_custream st)
{
    if (!st) return cu.memcpy_htod((sc_cudeviceptr)(uintptr_t)dev, src, bytes);
    int rc = cu.memcpy_htod_async((sc_cudeviceptr)(uintptr_t)dev, src, bytes, st);
    return rc ? rc : cu.stream_synchronize(st);
}

static int on_device(const void *p, sc_driver_asked *asked)
{
    if (!p || sc_host_memory_known(p)) return 0;   /* the driver's answer costs more than the call's data, at 4 KiB */
    /* One query in 16 is timed: two clock reads would add a tenth to the
     * answer they measure. */
    static __thread unsigned queries;
    int timed = (queries++ & 15) == 0;
    double t0 = timed ? PMPI_Wtime() : 0;
    unsigned int type = 0;
    int managed = 0;   /* managed memory is readable from the host: MPI takes it as it is */
    if (cu.pointer_get_attribute(&type, SC_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (sc_cudeviceptr)(uintptr_t)p) == 0 &&
        type == SC_CU_MEMORYTYPE_DEVICE &&
        (cu.pointer_get_attribute(&managed, SC_CU_POINTER_ATTRIBUTE_IS_MANAGED, (sc_cudeviceptr)(uintptr_t)p) != 0 ||
         !managed))
        return 1;
    /* host memory (the driver does not know it), host-registered or managed:
     * what asking cost a call that needed no staging */
    asked->host_pointers += 1;
    if (timed) {
        asked->timed += 1;
        asked->seconds += PMPI_Wtime() - t0;
    }
    return 0;
}

int sc_device_buffers(const void *sendbuf, void *recvbuf, int in_place, sc_driver_asked *asked)
{
    if (sc_rt.policy.cuda_off || !driver()) return 0;
    return (!in_place && on_device(sendbuf, asked) ? SC_DEVICE_SEND : 0) |
           (on_device(recvbuf, asked) ? SC_DEVICE_RECV : 0);
}

int sc_device_stage(sc_staged *st, const void *sendbuf, void *recvbuf, int in_place, int which, long lb,
                    size_t bytes)
{
    memset(st, 0, sizeof *st);
    st->dev_send = sendbuf;
    st->dev_recv = recvbuf;
    st->bytes = bytes;
    st->lb = lb;
    st->send_on_device = !in_place && (which & SC_DEVICE_SEND);
    st->recv_on_device = (which & SC_DEVICE_RECV) != 0;
    size_t need = (st->send_on_device ? bytes : 0) + (st->recv_on_device ? bytes : 0);
    int pushed;   /* pinning and streams need a context current too */
    sc_custream stream = stream_of(copy_context(st->send_on_device ? sendbuf : recvbuf, &pushed));
    st->host = staging_get(need, &st->pinned);
    if (!st->host) {
        copy_context_end(pushed);
        sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: no host memory to stage a device buffer of %zu bytes; the call "
               "fails with MPI_ERR_NO_MEM", sc_rt.world_rank, bytes);
        return MPI_ERR_NO_MEM;
    }
    double t0 = PMPI_Wtime();
    /* The copies hold the bytes from the datatype's true lower bound on:
     * the pointers handed to MPI are lb before them, as the caller's are. */
    char *at = st->host;
    st->send = in_place ? NULL : (void *)sendbuf;
    st->recv = recvbuf;
    int rc = 0;
    if (st->send_on_device) {
        st->send = at - lb;
        rc = to_host(at, (const char *)sendbuf + lb, bytes, stream);
        at += bytes;
    }
    if (st->recv_on_device) {
        st->recv = at - lb;
        /* in place, the receive buffer holds the input */
        if (rc == 0 && in_place) rc = to_host(at, (const char *)recvbuf + lb, bytes, stream);
    }
    copy_context_end(pushed);
    st->seconds = PMPI_Wtime() - t0;
    if (rc != 0) {
        sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: copying a device buffer to the host failed (CUDA error %d); the "
               "call fails with MPI_ERR_BUFFER", sc_rt.world_rank, rc);
        staging_put(st->host, st->pinned);
        st->host = NULL;
        return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

int sc_device_unstage(sc_staged *st, int rc)
{
    if (rc == MPI_SUCCESS && st->recv_on_device) {
        double t0 = PMPI_Wtime();
        int pushed;
        sc_custream stream = stream_of(copy_context(st->dev_recv, &pushed));
        int cr = to_device((char *)st->dev_recv + st->lb, (char *)st->recv + st->lb, st->bytes, stream);
        copy_context_end(pushed);
        st->seconds += PMPI_Wtime() - t0;
        if (cr != 0) {
            sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: copying a result back to the device failed (CUDA error %d); "
                   "the call fails with MPI_ERR_BUFFER", sc_rt.world_rank, cr);
            rc = MPI_ERR_BUFFER;
        }
    }
    staging_put(st->host, st->pinned);
    st->host = NULL;
    return rc;
}

void sc_device_describe(char *buf, size_t len)
{
    if (!driver()) {
        snprintf(buf, len, "CUDA driver not loaded in this process (device buffers pass through)");
        return;
    }
    int n = -1;
    if (!cu.device_get_count || cu.device_get_count(&n) != 0) n = -1;
    if (n >= 0) snprintf(buf, len, "CUDA driver loaded, %d device(s); device buffers staged through host memory", n);
    else snprintf(buf, len, "CUDA driver loaded, no usable device; device buffers staged through host memory");
}

/* ---- for NCCL (nccl.c): contexts, streams, scratch memory ---- */

void *sc_device_begin(const void *dev, int *pushed)
{
    *pushed = 0;
    if (!driver()) return NULL;
    if (dev) return stream_of(copy_context(dev, pushed));
    sc_cucontext ctx = NULL;
    if (!cu.ctx_get_current || cu.ctx_get_current(&ctx) != 0) return NULL;
    return stream_of(ctx);
}

void sc_device_end(int pushed) { copy_context_end(pushed); }

int sc_device_sync(void *stream) { return cu.stream_synchronize ? cu.stream_synchronize(stream) : -1; }

int sc_device_loaded(void) { return driver(); }

int sc_device_uuid(unsigned char uuid[16])
{
    int dev = -1;
    if (!driver() || !cu.ctx_get_device || !cu.device_get_uuid || cu.ctx_get_device(&dev) != 0) return -1;
    return cu.device_get_uuid(uuid, dev) == 0 ? 0 : -1;
}

void *sc_device_alloc(size_t bytes)
{
    sc_cudeviceptr p = 0;
    if (!cu.mem_alloc || !cu.mem_free || cu.mem_alloc(&p, bytes ? bytes : 1) != 0) return NULL;
    return (void *)(uintptr_t)p;
}

void sc_device_free(void *p)
{
    if (p && cu.mem_free) cu.mem_free((sc_cudeviceptr)(uintptr_t)p);
}

int sc_device_copy(void *dst, const void *src, size_t bytes, int to_dev, void *stream)
{
    return to_dev ? to_device(dst, src, bytes, stream) : to_host(dst, src, bytes, stream);
}
