/* Collectives tested to completion: see polled_coll.h. */
#include "polled_coll.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Tests back to back for the first 20 us (a small collective is done
 * within it), then one every 50 us.  The naps are what cures the stall:
 * tested back to back for the whole call, 1 of 8 runs of thread_stall
 * still held a call for 41 s. */
#define SPIN_S 20e-6
#define NAP_NS 50000L

static void nap(void)
{
    struct timespec ts = {0, NAP_NS};
    nanosleep(&ts, NULL);
}

/* MPI_Waitall of one or two requests by their tests (real statuses:
 * MPICH's header makes gcc warn about MPI_STATUSES_IGNORE). */
static int wait_all(int n, MPI_Request reqs[])
{
    double spin_until = PMPI_Wtime() + SPIN_S;
    for (;;) {
        int done = 0;
        MPI_Status st[2];
        int rc = PMPI_Testall(n, reqs, &done, st);
        if (rc != MPI_SUCCESS || done) return rc;
        if (PMPI_Wtime() >= spin_until) nap();
    }
}

/* Never MPI_IN_PLACE: Open MPI 4.1.4's MPI_Iallreduce fails with
 * MPI_ERR_TRUNCATE, and corrupted the heap here, when some ranks pass it
 * and others do not (legal MPI; starcoll's rounds do, a round's sum is in
 * place where the rank's deposits were summed first).  The send side is
 * a copy instead; without memory for one, the call stays in place (the
 * same call every rank makes; one rank alone must not fail it). */
int sc_polled_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                        int polled)
{
    if (!polled) return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    void *copy = NULL;
    if (sendbuf == MPI_IN_PLACE && count > 0) {
        int size = 0;
        int rc = PMPI_Type_size(dt, &size);
        if (rc != MPI_SUCCESS) return rc;
        copy = malloc((size_t)size * (size_t)count);
        if (copy) {
            memcpy(copy, recvbuf, (size_t)size * (size_t)count);
            sendbuf = copy;
        }
    }
    MPI_Request req;
    int rc = PMPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, &req);
    if (rc == MPI_SUCCESS) rc = wait_all(1, &req);
    free(copy);
    return rc;
}

int sc_polled_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                     MPI_Comm comm, int polled)
{
    if (!polled) return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
    MPI_Request req;
    int rc = PMPI_Ireduce(sendbuf, recvbuf, count, dt, op, root, comm, &req);
    return rc == MPI_SUCCESS ? wait_all(1, &req) : rc;
}

int sc_polled_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, int polled)
{
    if (!polled) return PMPI_Bcast(buf, count, dt, root, comm);
    MPI_Request req;
    int rc = PMPI_Ibcast(buf, count, dt, root, comm, &req);
    return rc == MPI_SUCCESS ? wait_all(1, &req) : rc;
}

int sc_polled_allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm, int polled)
{
    if (!polled) return PMPI_Allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm);
    MPI_Request req;
    int rc = PMPI_Iallgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, &req);
    return rc == MPI_SUCCESS ? wait_all(1, &req) : rc;
}

int sc_polled_barrier(MPI_Comm comm, int polled)
{
    if (!polled) return PMPI_Barrier(comm);
    MPI_Request req;
    int rc = PMPI_Ibarrier(comm, &req);
    return rc == MPI_SUCCESS ? wait_all(1, &req) : rc;
}

int sc_polled_sendrecv(const void *sendbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *recvbuf,
                       int rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm, int polled)
{
    if (!polled)
        return PMPI_Sendrecv(sendbuf, scount, sdt, dest, stag, recvbuf, rcount, rdt, source, rtag, comm,
                             MPI_STATUS_IGNORE);
    MPI_Request reqs[2];
    int rc = PMPI_Irecv(recvbuf, rcount, rdt, source, rtag, comm, &reqs[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(sendbuf, scount, sdt, dest, stag, comm, &reqs[1]);
    if (rc != MPI_SUCCESS) {
        /* the receive is posted: finish it off rather than leave it behind */
        if (PMPI_Cancel(&reqs[0]) == MPI_SUCCESS) PMPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        return rc;
    }
    return wait_all(2, reqs);
}
