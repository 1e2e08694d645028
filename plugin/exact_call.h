/* The exact paths every mode shares (exact_call.c). */
#ifndef STARCOLL_EXACT_CALL_H
#define STARCOLL_EXACT_CALL_H
#include <mpi.h>
#include "comm_state.h"
#include "engine.h"
#include "kernels.h"

/* PMPI_Allreduce by the application's thread, with this rank said to be
 * away from every engine's rounds meanwhile; meet_first: every rank meets
 * at a nonblocking barrier first, sleeping between tests (on every rank
 * or none). */
int sc_exact_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                       int meet_first);

/* A call that fails: one line saying why (the first few per
 * communicator), the communicator's error handler called, rc returned. */
int sc_call_fails(sc_comm *cs, const sc_user_call *c, sc_dkind dk, int rc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

const char *sc_dkind_name(sc_dkind dk);   /* "float", "double", "other" */
#endif
