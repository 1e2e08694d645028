/* CUDA device buffers: see device.h. */
#define _GNU_SOURCE
#include "device.h"
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"

/* The few driver entry points used, declared as the driver API has them
 * (cuda.h is not needed to build). */
typedef int sc_curesult;
typedef unsigned long long sc_cudeviceptr;
enum { SC_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2, SC_CU_POINTER_ATTRIBUTE_IS_MANAGED = 8, SC_CU_MEMORYTYPE_DEVICE = 2 };

static struct {
    int loaded;                 /* the driver's entry points are resolved */
    unsigned long long adds;    /* objects the dynamic linker had loaded at the last look */
    sc_curesult (*pointer_get_attribute)(void *data, int attribute, sc_cudeviceptr ptr);
    sc_curesult (*memcpy_dtoh)(void *dst, sc_cudeviceptr src, size_t bytes);
    sc_curesult (*memcpy_htod)(sc_cudeviceptr dst, const void *src, size_t bytes);
    sc_curesult (*device_get_count)(int *count);
} cu;

static int count_adds(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;   /* the first object carries the counts */
}

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
    cu.pointer_get_attribute = (sc_curesult(*)(void *, int, sc_cudeviceptr))dlsym(h, "cuPointerGetAttribute");
    cu.memcpy_dtoh = (sc_curesult(*)(void *, sc_cudeviceptr, size_t))dlsym(h, "cuMemcpyDtoH_v2");
    cu.memcpy_htod = (sc_curesult(*)(sc_cudeviceptr, const void *, size_t))dlsym(h, "cuMemcpyHtoD_v2");
    cu.device_get_count = (sc_curesult(*)(int *))dlsym(h, "cuDeviceGetCount");
    if (!cu.pointer_get_attribute || !cu.memcpy_dtoh || !cu.memcpy_htod) {
        sc_say(SC_SAY_DEVICE, 0, "starcoll: libcuda.so.1 is loaded but lacks cuPointerGetAttribute or cuMemcpy; "
                                 "device buffers are not recognised");
        dlclose(h);
        return 0;
    }
    __atomic_store_n(&cu.loaded, 1, __ATOMIC_RELEASE);   /* the handle stays open for the process's life */
    return 1;
}

static int on_device(const void *p)
{
    if (!p) return 0;
    unsigned int type = 0;
    if (cu.pointer_get_attribute(&type, SC_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (sc_cudeviceptr)(uintptr_t)p) != 0 ||
        type != SC_CU_MEMORYTYPE_DEVICE)
        return 0;   /* host memory (the driver does not know it), or host-registered */
    int managed = 0;   /* managed memory is readable from the host: MPI takes it as it is */
    if (cu.pointer_get_attribute(&managed, SC_CU_POINTER_ATTRIBUTE_IS_MANAGED, (sc_cudeviceptr)(uintptr_t)p) == 0 &&
        managed)
        return 0;
    return 1;
}

int sc_device_buffers(const void *sendbuf, void *recvbuf, int in_place)
{
    if (!driver()) return 0;
    return (!in_place && on_device(sendbuf) ? SC_DEVICE_SEND : 0) | (on_device(recvbuf) ? SC_DEVICE_RECV : 0);
}

int sc_device_stage(sc_staged *st, const void *sendbuf, void *recvbuf, int in_place, int which, size_t bytes)
{
    memset(st, 0, sizeof *st);
    st->dev_send = sendbuf;
    st->dev_recv = recvbuf;
    st->bytes = bytes;
    st->send_on_device = !in_place && (which & SC_DEVICE_SEND);
    st->recv_on_device = (which & SC_DEVICE_RECV) != 0;
    size_t need = (st->send_on_device ? bytes : 0) + (st->recv_on_device ? bytes : 0);
    st->host = malloc(need ? need : 1);
    if (!st->host) {
        sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: no host memory to stage a device buffer of %zu bytes; the call "
               "fails with MPI_ERR_NO_MEM", sc_rt.world_rank, bytes);
        return MPI_ERR_NO_MEM;
    }
    double t0 = PMPI_Wtime();
    char *at = st->host;
    st->send = in_place ? NULL : (void *)sendbuf;
    st->recv = recvbuf;
    int rc = 0;
    if (st->send_on_device) {
        st->send = at;
        rc = cu.memcpy_dtoh(at, (sc_cudeviceptr)(uintptr_t)sendbuf, bytes);
        at += bytes;
    }
    if (st->recv_on_device) {
        st->recv = at;
        /* in place, the receive buffer holds the input */
        if (rc == 0 && in_place) rc = cu.memcpy_dtoh(at, (sc_cudeviceptr)(uintptr_t)recvbuf, bytes);
    }
    st->seconds = PMPI_Wtime() - t0;
    if (rc != 0) {
        sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: copying a device buffer to the host failed (CUDA error %d); the "
               "call fails with MPI_ERR_BUFFER", sc_rt.world_rank, rc);
        free(st->host);
        st->host = NULL;
        return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

int sc_device_unstage(sc_staged *st, int rc)
{
    if (rc == MPI_SUCCESS && st->recv_on_device) {
        double t0 = PMPI_Wtime();
        int cr = cu.memcpy_htod((sc_cudeviceptr)(uintptr_t)st->dev_recv, st->recv, st->bytes);
        st->seconds += PMPI_Wtime() - t0;
        if (cr != 0) {
            sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: copying a result back to the device failed (CUDA error %d); "
                   "the call fails with MPI_ERR_BUFFER", sc_rt.world_rank, cr);
            rc = MPI_ERR_BUFFER;
        }
    }
    free(st->host);
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
