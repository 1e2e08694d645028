/* A stand-in for NCCL, built as tests/fakenccl/libnccl.so.2, so that
 * starcoll's NCCL path (plugin/nccl.h) runs under mpirun on a machine
 * without a GPU.  The MPI is the real one; this replaces only the GPU
 * library MPI does not provide.
 *
 * Ranks of a communicator meet in a POSIX shared-memory segment named by
 * the unique id.  ncclAllReduce reads each rank's "device" buffer through
 * the stand-in driver (tests/fake_cuda.c: a host pointer handed to it is
 * refused, as NCCL would fault on one), adds all ranks' contributions in
 * rank order, so every rank's result is bitwise the same, and writes it
 * back.  Calls counted for the tests: fake_nccl_allreduces. */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef struct { char internal[128]; } ncclUniqueId;
enum { ncclSuccess = 0, ncclSystemError = 2, ncclInvalidArgument = 4, ncclInvalidUsage = 5 };
#define SLOT_BYTES (4u << 20)   /* the largest call the stand-in takes, per rank */

typedef struct {
    volatile int arrived, generation, joined;
} header;

typedef struct fake_comm {
    int rank, nranks;
    char name[128];
    header *h;
    char *slots;                 /* nranks x SLOT_BYTES */
    size_t map_bytes;
} fake_comm;

static unsigned long long allreduces;
unsigned long long fake_nccl_allreduces(void) { return allreduces; }

static int (*dev_read)(void *, const void *, size_t), (*dev_write)(void *, const void *, size_t);
static int driver(void)
{
    if (!dev_read) {
        *(void **)&dev_read = dlsym(RTLD_DEFAULT, "fake_cuda_read");
        *(void **)&dev_write = dlsym(RTLD_DEFAULT, "fake_cuda_write");
    }
    return dev_read && dev_write;
}

int ncclGetUniqueId(ncclUniqueId *id);
int ncclGetUniqueId(ncclUniqueId *id)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "/fakenccl-%d-%lld-%ld", (int)getpid(), (long long)ts.tv_sec, ts.tv_nsec);
    return ncclSuccess;
}

static void barrier(fake_comm *c)
{
    int gen = __atomic_load_n(&c->h->generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&c->h->arrived, 1, __ATOMIC_ACQ_REL) == c->nranks) {
        __atomic_store_n(&c->h->arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&c->h->generation, 1, __ATOMIC_RELEASE);
        return;
    }
    struct timespec nap = {0, 20000};
    while (__atomic_load_n(&c->h->generation, __ATOMIC_ACQUIRE) == gen) nanosleep(&nap, NULL);
}

int ncclCommInitRank(fake_comm **comm, int nranks, ncclUniqueId id, int rank);
int ncclCommInitRank(fake_comm **comm, int nranks, ncclUniqueId id, int rank)
{
    if (nranks < 1 || rank < 0 || rank >= nranks || id.internal[0] != '/' || !driver()) return ncclInvalidArgument;
    fake_comm *c = calloc(1, sizeof *c);
    if (!c) return ncclSystemError;
    c->rank = rank;
    c->nranks = nranks;
    snprintf(c->name, sizeof c->name, "%s", id.internal);
    c->map_bytes = 4096 + (size_t)nranks * SLOT_BYTES;
    int fd = shm_open(c->name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->map_bytes) != 0) {
        if (fd >= 0) close(fd);
        free(c);
        return ncclSystemError;
    }
    void *m = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        free(c);
        return ncclSystemError;
    }
    c->h = m;
    c->slots = (char *)m + 4096;
    __atomic_add_fetch(&c->h->joined, 1, __ATOMIC_ACQ_REL);
    barrier(c);   /* every rank has mapped it: the name can go */
    if (rank == 0) shm_unlink(c->name);
    *comm = c;
    return ncclSuccess;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, fake_comm *c, void *stream);
int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, fake_comm *c, void *stream)
{
    size_t es = dtype == 7 ? 4 : dtype == 8 ? 8 : 0;   /* ncclFloat32, ncclFloat64 */
    if (!c || !stream || op != 0 || !es || count * es > SLOT_BYTES) return ncclInvalidArgument;
    size_t bytes = count * es;
    char *mine = c->slots + (size_t)c->rank * SLOT_BYTES;
    if (dev_read(mine, send, bytes) != 0) return ncclInvalidUsage;   /* not device memory */
    barrier(c);
    char *sum = malloc(bytes ? bytes : 1);
    if (!sum) return ncclSystemError;
    memcpy(sum, c->slots, bytes);
    for (int r = 1; r < c->nranks; r++) {
        const char *in = c->slots + (size_t)r * SLOT_BYTES;
        for (size_t i = 0; i < count; i++) {
            if (es == 4) ((float *)sum)[i] += ((const float *)in)[i];
            else ((double *)sum)[i] += ((const double *)in)[i];
        }
    }
    barrier(c);   /* every rank has read every slot before any is written again */
    int rc = dev_write(recv, sum, bytes) != 0 ? ncclInvalidUsage : ncclSuccess;
    free(sum);
    __atomic_add_fetch(&allreduces, 1, __ATOMIC_RELAXED);
    return rc;
}

int ncclCommDestroy(fake_comm *c);
int ncclCommDestroy(fake_comm *c)
{
    if (!c) return ncclInvalidArgument;
    munmap(c->h, c->map_bytes);
    free(c);
    return ncclSuccess;
}

const char *ncclGetErrorString(int rc);
const char *ncclGetErrorString(int rc) { return rc == 4 ? "invalid argument" : rc == 5 ? "invalid usage" : "error"; }

int ncclGetVersion(int *version);
int ncclGetVersion(int *version)
{
    *version = 99999;   /* the stand-in */
    return ncclSuccess;
}
