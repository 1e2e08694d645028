/* NCCL for the exact modes: see nccl.h. */
#define _GNU_SOURCE
#include "config.h"
#include "nccl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "device.h"
#include "runtime.h"

/* NCCL's entry points, declared as nccl.h has them (nccl.h is not needed
 * to build): ncclUniqueId is 128 bytes, passed by value. */
typedef struct { char internal[128]; } sc_nccl_id;
enum { SC_NCCL_SUM = 0, SC_NCCL_FLOAT32 = 7, SC_NCCL_FLOAT64 = 8 };

static struct {
    pthread_once_t once;
    int ok;
    char why[160];          /* why not, when !ok */
    int (*get_unique_id)(sc_nccl_id *id);
    int (*comm_init_rank)(void **comm, int nranks, sc_nccl_id id, int rank);
    int (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op, void *comm, void *stream);
    int (*comm_destroy)(void *comm);
    const char *(*error_string)(int rc);
    int (*get_version)(int *version);
} lib = {.once = PTHREAD_ONCE_INIT};

#define SYM(field, name) (*(void **)&lib.field = dlsym(h, name))
static void load(void)
{
#ifdef SC_NCCL_DISABLED
    snprintf(lib.why, sizeof lib.why, "starcoll was configured --without-nccl");
    return;
#endif
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lib.why, sizeof lib.why, "libnccl.so.2 not found");
        return;
    }
    SYM(get_unique_id, "ncclGetUniqueId");
    SYM(comm_init_rank, "ncclCommInitRank");
    SYM(all_reduce, "ncclAllReduce");
    SYM(comm_destroy, "ncclCommDestroy");
    SYM(error_string, "ncclGetErrorString");
    SYM(get_version, "ncclGetVersion");
    if (!lib.get_unique_id || !lib.comm_init_rank || !lib.all_reduce || !lib.comm_destroy) {
        snprintf(lib.why, sizeof lib.why, "libnccl.so.2 lacks ncclCommInitRank or ncclAllReduce");
        dlclose(h);
        return;
    }
    lib.ok = 1;   /* the handle stays open for the process's life */
}
#undef SYM

static const char *nccl_error(int rc)
{
    const char *s = lib.error_string ? lib.error_string(rc) : NULL;
    return s ? s : "unknown error";
}

/* What each rank brings to the decision, gathered on every rank. */
enum { SC_NO_REASON = 0, SC_NO_DRIVER, SC_NO_DEVICE, SC_NO_LIBRARY };
typedef struct {
    int32_t reason;         /* SC_NO_*: why this rank cannot use NCCL */
    uint32_t pad;
    uint64_t host;          /* hash of the host's name */
    unsigned char uuid[16]; /* the rank's GPU */
} rank_facts;

static uint64_t host_hash(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    return h;
}

/* The same verdict on every rank from the same gathered facts; 1 when NCCL can be tried. */
static int verdict(const rank_facts *all, int size, char *why, size_t len)
{
    static const char *said[] = {"", "the CUDA driver is not loaded", "no current CUDA device", ""};
    for (int r = 0; r < size; r++)
        if (all[r].reason != SC_NO_REASON) {
            if (all[r].reason == SC_NO_LIBRARY) snprintf(why, len, "rank %d: %s", r, lib.why[0] ? lib.why : "no NCCL");
            else snprintf(why, len, "rank %d: %s at the communicator's first eligible call", r, said[all[r].reason]);
            return 0;
        }
    for (int r = 0; r < size; r++)
        for (int q = r + 1; q < size; q++)
            if (all[r].host == all[q].host && !memcmp(all[r].uuid, all[q].uuid, sizeof all[r].uuid)) {
                snprintf(why, len, "ranks %d and %d share one GPU, which NCCL refuses", r, q);
                return 0;
            }
    return 1;
}

/* The gathered verdict, then the NCCL communicator (sc_nccl_setup). */
static int agree_and_init(sc_nccl *n, MPI_Comm comm, int rank, int size, const rank_facts *mine, char *why,
                          size_t len)
{
    rank_facts *all = calloc((size_t)size, sizeof *all);
    if (!all) return MPI_ERR_NO_MEM;
    int rc = PMPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, comm);
    int go = rc == MPI_SUCCESS && verdict(all, size, why, len);
    free(all);
    if (rc != MPI_SUCCESS) return rc;
    if (!go) return MPI_SUCCESS;
    /* rank 0's id, and whether it had one, to every rank */
    struct { int32_t rc; sc_nccl_id id; } root = {0};
    if (rank == 0) root.rc = lib.get_unique_id(&root.id);
    rc = PMPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, comm);
    if (rc != MPI_SUCCESS) return rc;
    if (root.rc != 0) {
        snprintf(why, len, "ncclGetUniqueId failed on rank 0: %s", nccl_error(root.rc));
        return MPI_SUCCESS;
    }
    void *c = NULL;   /* on the thread's current device, as sc_device_uuid found it */
    int init = lib.comm_init_rank(&c, size, root.id, rank);
    int failed = init != 0, any = 0;
    rc = PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS || any) {
        if (!failed && c) lib.comm_destroy(c);
        if (rc == MPI_SUCCESS)
            snprintf(why, len, "ncclCommInitRank failed%s%s", failed ? ": " : " on another rank",
                     failed ? nccl_error(init) : "");
        return rc;
    }
    n->comm = c;
    n->state = SC_NCCL_READY;
    n->anchor = sc_device_alloc(64);   /* in the context NCCL runs in: a host-buffer call finds it there */
    return MPI_SUCCESS;
}

int sc_nccl_setup(sc_nccl *n, MPI_Comm comm, int rank, int size, const void *dev, char *why, size_t len)
{
    memset(n, 0, sizeof *n);
    n->state = SC_NCCL_OFF;
    rank_facts mine = {.host = host_hash()};
    int pushed = 0;   /* a thread without a context (a communication thread) uses dev's */
    if (!sc_device_loaded()) {
        mine.reason = SC_NO_DRIVER;
    } else {
        (void)sc_device_begin(dev, &pushed);
        if (sc_device_uuid(mine.uuid) != 0) mine.reason = SC_NO_DEVICE;
        else if (pthread_once(&lib.once, load), !lib.ok) mine.reason = SC_NO_LIBRARY;
    }
    int rc = agree_and_init(n, comm, rank, size, &mine, why, len);
    sc_device_end(pushed);
    return rc;
}

/* Device memory for this rank's host buffers of `bytes` each (two). */
static char *scratch(sc_nccl *n, size_t bytes)
{
    if (n->scratch_bytes < 2 * bytes) {
        sc_device_free(n->scratch);
        n->scratch = sc_device_alloc(2 * bytes);
        n->scratch_bytes = n->scratch ? 2 * bytes : 0;
    }
    return n->scratch;
}

int sc_nccl_allreduce(sc_nccl *n, const void *sendbuf, void *recvbuf, size_t count, int is_double, int which,
                      double *copied)
{
    size_t bytes = count * (is_double ? sizeof(double) : sizeof(float));
    int in_place = sendbuf == MPI_IN_PLACE;
    /* this rank's buffers that ride through scratch device memory: the
     * input (the send buffer, or in place the receive buffer) and the result */
    int send_host = !in_place && !(which & SC_DEVICE_SEND), recv_host = !(which & SC_DEVICE_RECV);
    int in_host = send_host || (in_place && recv_host);
    int pushed;
    void *stream = sc_device_begin(!recv_host ? recvbuf : !in_place && !send_host ? sendbuf : n->anchor, &pushed);
    const char *failed = NULL;
    int err = 0;
    char *tmp = send_host || recv_host ? scratch(n, bytes) : NULL;
    const void *s = in_place ? NULL : send_host ? tmp : sendbuf;
    void *r = !recv_host ? recvbuf : tmp ? tmp + bytes : NULL;
    if (!stream) failed = "no CUDA stream could be had";
    else if ((send_host || recv_host) && !tmp) failed = "no device memory for a host buffer";
    else if (in_host && (err = sc_device_copy(in_place ? r : (void *)s, in_place ? recvbuf : sendbuf, bytes, 1,
                                              stream)) != 0)
        failed = "copying a host buffer to the device failed";
    else if ((err = lib.all_reduce(in_place ? r : s, r, count, is_double ? SC_NCCL_FLOAT64 : SC_NCCL_FLOAT32,
                                   SC_NCCL_SUM, n->comm, stream)) != 0)
        failed = nccl_error(err);
    else if ((err = sc_device_sync(stream)) != 0)
        failed = "waiting for the stream failed";
    else if (recv_host && (err = sc_device_copy(recvbuf, r, bytes, 0, stream)) != 0)
        failed = "copying the result to a host buffer failed";
    sc_device_end(pushed);
    *copied = (double)bytes * (in_host + recv_host);
    if (failed) {
        sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: ncclAllReduce of %zu bytes: %s (error %d); the call fails with "
               "MPI_ERR_OTHER", sc_rt.world_rank, bytes, failed, err);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

void sc_nccl_free(sc_nccl *n)
{
    if (n->comm && lib.comm_destroy) lib.comm_destroy(n->comm);
    sc_device_free(n->scratch);
    sc_device_free(n->anchor);
    memset(n, 0, sizeof *n);
}
