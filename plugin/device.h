/* CUDA device buffers handed to MPI_Allreduce, recognised and staged
 * through host memory, so a code that passes device pointers just works
 * with Debian's Open MPI, which is not CUDA-aware (issue 12, first part:
 * every mode stages; NCCL for the exact modes is not built yet).
 *
 * The CUDA driver is never linked: the library looks for libcuda.so.1
 * already loaded in the process (dlopen RTLD_NOLOAD), so one
 * libstarcoll.so runs on hosts with and without CUDA, and a job that never
 * loads CUDA never pays for it.  Whether a library was loaded since the
 * last look is read from the dynamic linker's list of loaded objects (a
 * walk of pointers), and only then does the dlopen run.  Buffers are
 * classified with cuPointerGetAttribute (CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
 * device memory, not managed memory, which the host can read) on every call
 * with data, except pointers known for host memory without asking
 * (host_memory.h: the brk heap, the caller's stack, the program's data),
 * since the driver's answer costs a small call a measurable share.
 *
 * Staging copies device buffers to pinned host memory kept for reuse
 * (cuMemHostAlloc; plain memory where the driver cannot pin), with
 * cuMemcpyDtoHAsync on a stream of starcoll's, synchronised; the call runs
 * on the copies in whatever mode, and the result is copied back
 * (cuMemcpyHtoDAsync) before the call returns.  Every call on device
 * buffers stages, whatever its datatype, op or size: the ones not eligible
 * run exact through MPI on the copies. */
#ifndef STARCOLL_DEVICE_H
#define STARCOLL_DEVICE_H
#include <stddef.h>

typedef struct sc_staged {
    const void *dev_send;   /* the caller's buffers */
    void *dev_recv;
    int send_on_device, recv_on_device;
    void *send, *recv;      /* what the call runs on: host copies, or the caller's own host buffers */
    void *host;             /* the host copies' memory, given back by sc_device_unstage */
    int pinned;             /* ... a pinned chunk, kept for later calls */
    size_t bytes;           /* bytes copied per buffer: the datatype's span over the call's count */
    long lb;                /* where they start: the datatype's true lower bound */
    double seconds;         /* time spent copying */
} sc_staged;

/* Which of a call's buffers are CUDA device memory: SC_DEVICE_SEND
 * (sendbuf, never MPI_IN_PLACE) and SC_DEVICE_RECV bits; 0 when neither
 * is, CUDA is not loaded, or the policy says STARCOLL_CUDA=off.  in_place:
 * sendbuf is MPI_IN_PLACE.  Host pointers the driver had to be asked about
 * (not known for host memory without asking) are added to *asked, with
 * what asking cost, sampled: the price host buffers pay for device buffers
 * being recognised, which the report shows. */
enum { SC_DEVICE_SEND = 1, SC_DEVICE_RECV = 2 };
typedef struct sc_driver_asked {
    double host_pointers;   /* pointers asked about that were not device memory */
    double timed, seconds;  /* ... of them timed (one in 16), and the time asking about those took */
} sc_driver_asked;
int sc_device_buffers(const void *sendbuf, void *recvbuf, int in_place, sc_driver_asked *asked);

/* Copies the device buffers of a call, those `which` (sc_device_buffers)
 * names, to host memory: `bytes` bytes from `lb` past each buffer (its
 * datatype's true lower bound and span over the count).  0 with *st ready
 * (st->send is NULL for MPI_IN_PLACE), or an MPI error code with one line
 * said and nothing to undo. */
int sc_device_stage(sc_staged *st, const void *sendbuf, void *recvbuf, int in_place, int which, long lb,
                    size_t bytes);

/* After the call (its return code rc): copies the result back to a device
 * receive buffer when rc is MPI_SUCCESS, frees the host copies, and returns
 * rc, or an MPI error code when the copy back failed. */
int sc_device_unstage(sc_staged *st, int rc);

/* For NCCL (nccl.h).  sc_device_begin: makes the context of dev (or the
 * current one, dev NULL) current if the thread has none (*pushed: undo with
 * sc_device_end) and returns starcoll's stream there, or NULL.  A stream's
 * work is waited for with sc_device_sync (0 on success).  sc_device_uuid:
 * the current context's device (0, or -1 when unknown).  Scratch device
 * memory: sc_device_alloc (NULL on failure), sc_device_free.
 * sc_device_copy: to_dev 1 host to device, 0 device to host, on stream
 * (synchronised before it returns); 0 on success. */
void *sc_device_begin(const void *dev, int *pushed);
void sc_device_end(int pushed);
int sc_device_sync(void *stream);
int sc_device_loaded(void);   /* the CUDA driver is loaded in this process */
int sc_device_uuid(unsigned char uuid[16]);
void *sc_device_alloc(size_t bytes);
void sc_device_free(void *p);
int sc_device_copy(void *dst, const void *src, size_t bytes, int to_dev, void *stream);

/* One line on what was found, for starcoll-info and the report:
 * "CUDA driver loaded, N device(s)" or "CUDA driver not loaded". */
void sc_device_describe(char *buf, size_t len);
#endif
