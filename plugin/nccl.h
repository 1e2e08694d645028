/* NCCL for the exact modes on CUDA device buffers (issue 12): under
 * STARCOLL_MODE=sync or hier, a communicator whose ranks each have a GPU
 * of their own reduces its eligible calls with ncclAllReduce on a stream
 * of starcoll's (device.h), synchronised before the call returns.
 *
 * Whether a communicator uses NCCL is decided once, collectively, at its
 * first eligible call, and every rank reaches the same answer from the
 * same gathered facts: the CUDA driver loaded and a current device on
 * every rank, libnccl.so.2 loadable everywhere, no two ranks on one GPU
 * (NCCL refuses that), the NCCL communicator made on every rank.  Then
 * every eligible call on it goes through NCCL, whatever each rank's
 * buffers are: one rank cannot choose MPI while another waits in NCCL.  A
 * rank's host buffers ride through device scratch memory.  Otherwise
 * device buffers stage through host memory (device.h) and the report says
 * why NCCL was not used.
 *
 * NCCL is loaded at run time (dlopen), like the driver: nothing is linked. */
#ifndef STARCOLL_NCCL_H
#define STARCOLL_NCCL_H
#include <mpi.h>
#include <stddef.h>

enum { SC_NCCL_UNTRIED = 0, SC_NCCL_READY, SC_NCCL_OFF };

typedef struct sc_nccl {
    int state;              /* SC_NCCL_UNTRIED, _READY or _OFF */
    void *comm;             /* the ncclComm_t, READY only */
    void *scratch;          /* device memory for this rank's host buffers */
    void *anchor;           /* a little device memory in NCCL's context: a call on host buffers from a
                               thread without a context runs there */
    size_t scratch_bytes;
} sc_nccl;

/* Collective over comm (rank, size its own): decides n->state, the same
 * on every rank, and says in why (len) why NCCL is not used.  dev: this
 * rank's device buffer in the call, or NULL; its context serves a thread
 * that has none current.  Returns an MPI error code only when one of its
 * own collectives failed (n->state is then OFF on this rank). */
int sc_nccl_setup(sc_nccl *n, MPI_Comm comm, int rank, int size, const void *dev, char *why, size_t len);

/* An eligible call (MPI_SUM of float or double; sendbuf MPI_IN_PLACE or
 * not) on a READY communicator.  which: the SC_DEVICE_* bits of this
 * rank's buffers; *copied: bytes moved between host and device for its
 * host buffers.  MPI_SUCCESS, or MPI_ERR_OTHER with one line said. */
int sc_nccl_allreduce(sc_nccl *n, const void *sendbuf, void *recvbuf, size_t count, int is_double, int which,
                      double *copied);

/* The NCCL communicator and scratch memory freed (with the MPI communicator). */
void sc_nccl_free(sc_nccl *n);

#endif
