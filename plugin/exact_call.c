/* The exact paths every mode shares: an all-reduce by the application's
 * thread beside tolerant engines, and a failed call said and handed to
 * the communicator's error handler (exact_call.h). */
#include "exact_call.h"
#include <stdarg.h>
#include <stdio.h>
#include "runtime.h"
#include "polite_wait.h"
#include "away_around.h"

/* An exact all-reduce by the application's thread.  While tolerant
 * engines run, their coordinators are told this rank is away, so no round
 * waits for it meanwhile (which could wait forever: the ranks it needs may
 * be the ones blocked here).
 *
 * meet_first: every rank waits at a nonblocking barrier first, sleeping
 * between tests.  Open MPI's blocking calls poll, and a rank polling there
 * while the others still finish their step takes the core its engine
 * thread needs to serve their rounds (polite_wait.h).  The all-reduce
 * stays PMPI_Allreduce, bitwise what it gives without starcoll.  The
 * barrier must be on every rank or none: see meets_first (interpose.c). */
int sc_exact_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                       int meet_first)
{
    int away = away_begin();
    int rc = MPI_SUCCESS;
    if (meet_first) {
        MPI_Request req;
        rc = PMPI_Ibarrier(comm, &req);
        if (rc == MPI_SUCCESS) rc = sc_polite_wait(&req, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    away_end(away);
    return rc;
}

const char *sc_dkind_name(sc_dkind dk)
{
    return dk == SC_DK_FLOAT ? "float" : dk == SC_DK_DOUBLE ? "double" : "other";
}

/* A call that fails says so: one line naming the rank, the communicator,
 * the call and the cause (the first few per communicator; the report
 * counts them all); then, as MPI does with its own errors, the
 * communicator's error handler is called (MPI_ERRORS_ARE_FATAL, the
 * default, stops the job there; mpi4py's MPI_ERRORS_RETURN raises), and
 * the MPI error code is returned. */
int sc_call_fails(sc_comm *cs, const sc_user_call *c, sc_dkind dk, int rc, const char *fmt, ...)
{
    cs->row->failed += 1;
    if (cs->said_reject >= 3) {
        PMPI_Comm_call_errhandler(cs->comm, rc);
        return rc;
    }
    char cause[600], err[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    PMPI_Error_string(rc, err, &len);
    fprintf(stderr, "starcoll: rank %d: MPI_Allreduce on comm %s (%d %s elements, call %ld on it): %s; returning %s%s\n",
            sc_rt.world_rank, cs->label, c->count, sc_dkind_name(dk), cs->eligible_calls, cause, err,
            ++cs->said_reject == 3 ? " (further failures on this communicator are counted in the report)" : "");
    PMPI_Comm_call_errhandler(cs->comm, rc);
    return rc;
}
