/* Blocking point-to-point calls while tolerant engines run.  A rank
 * blocked in MPI_Recv for a straggler's message cannot deposit, and the
 * straggler's own call may wait for rounds that need that deposit: each
 * such wait lasted until the stall rule (10 s; engine_coord.c).  Measured
 * here, 4 ranks in quorum, one 3x slow, 60 steps: rank 0 collecting a
 * figure from each rank by MPI_Recv every 10 steps took the job 44 s
 * against 3.8 s under sync; an MPI_Sendrecv ring, 54 s.
 *
 * So the call starts nonblocking and is tested, as MPI's own wait polls,
 * for up to SPIN_S; only a call still not complete then makes the rank
 * away, and it waits by tests and naps (polite_wait.h).  Most messages
 * come within that: testing once and napping at once made an 8-byte
 * round trip take 115 us against 2.4 us, where a spin keeps it (figures
 * in the README).  With no engine here the calls pass straight through.
 * MPI_Bsend completes locally and is not wrapped. */
#include <mpi.h>
#include "comm_state.h"
#include "polite_wait.h"
#include "away_around.h"

#define SPIN_S 100e-6

/* Whether reqs completed while tested for SPIN_S (or failed: *rc). */
static int completes_soon(int count, MPI_Request reqs[], MPI_Status statuses[], int *rc)
{
    double until = PMPI_Wtime() + SPIN_S;
    int done = 0;
    do {
        *rc = count == 1 ? PMPI_Test(reqs, &done, statuses) : PMPI_Testall(count, reqs, &done, statuses);
        if (*rc != MPI_SUCCESS || done) return 1;
    } while (PMPI_Wtime() < until);
    return 0;
}

/* Completes req: soon, or away, waiting politely. */
static int complete(MPI_Request *req, MPI_Status *status, int what)
{
    int rc;
    if (completes_soon(1, req, status, &rc)) return rc;
    sc_comm_away(NULL, 1, what);
    rc = sc_polite_wait(req, status);
    sc_comm_away(NULL, 0, what);
    return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (!sc_comm_engines_here()) return PMPI_Send(buf, count, dt, dest, tag, comm);
    MPI_Request req;
    int rc = PMPI_Isend(buf, count, dt, dest, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(&req, MPI_STATUS_IGNORE, SC_AWAY_SEND);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (!sc_comm_engines_here()) return PMPI_Ssend(buf, count, dt, dest, tag, comm);
    MPI_Request req;
    int rc = PMPI_Issend(buf, count, dt, dest, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(&req, MPI_STATUS_IGNORE, SC_AWAY_SEND);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (!sc_comm_engines_here()) return PMPI_Rsend(buf, count, dt, dest, tag, comm);
    MPI_Request req;
    int rc = PMPI_Irsend(buf, count, dt, dest, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(&req, MPI_STATUS_IGNORE, SC_AWAY_SEND);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!sc_comm_engines_here()) return PMPI_Recv(buf, count, dt, source, tag, comm, status);
    MPI_Request req;
    int rc = PMPI_Irecv(buf, count, dt, source, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(&req, status, SC_AWAY_RECV);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    if (!sc_comm_engines_here()) return PMPI_Mrecv(buf, count, dt, message, status);
    MPI_Request req;
    int rc = PMPI_Imrecv(buf, count, dt, message, &req);
    return rc != MPI_SUCCESS ? rc : complete(&req, status, SC_AWAY_RECV);
}

/* The receive posted first, as MPI libraries do; the status is the
 * receive's. */
int MPI_Sendrecv(const void *sendbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *recvbuf, int rcount,
                 MPI_Datatype rdt, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    if (!sc_comm_engines_here())
        return PMPI_Sendrecv(sendbuf, scount, sdt, dest, stag, recvbuf, rcount, rdt, source, rtag, comm, status);
    MPI_Request reqs[2];
    MPI_Status st[2];
    int rc = PMPI_Irecv(recvbuf, rcount, rdt, source, rtag, comm, &reqs[1]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(sendbuf, scount, sdt, dest, stag, comm, &reqs[0]);
    if (rc != MPI_SUCCESS) {   /* the receive must not outlive the call */
        if (PMPI_Cancel(&reqs[1]) == MPI_SUCCESS) PMPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
        return rc;
    }
    if (!completes_soon(2, reqs, st, &rc)) {
        sc_comm_away(NULL, 1, SC_AWAY_SENDRECV);
        rc = sc_polite_waitall(2, reqs, st);
        sc_comm_away(NULL, 0, SC_AWAY_SENDRECV);
    }
    if (rc == MPI_ERR_IN_STATUS) rc = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
    if (status != MPI_STATUS_IGNORE) *status = st[1];
    return rc;
}

/* In place needs MPI's own buffering: away around the whole call. */
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_SENDRECV, PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, status));
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0;
    if (!sc_comm_engines_here()) return PMPI_Probe(source, tag, comm, status);
    int rc;
    double until = PMPI_Wtime() + SPIN_S;
    do {
        rc = PMPI_Iprobe(source, tag, comm, &flag, status);
        if (rc != MPI_SUCCESS || flag) return rc;
    } while (PMPI_Wtime() < until);
    sc_comm_away(NULL, 1, SC_AWAY_PROBE);
    for (long ns = SC_NAP_FIRST_NS; rc == MPI_SUCCESS && !flag;) {
        sc_polite_nap(&ns);
        rc = PMPI_Iprobe(source, tag, comm, &flag, status);
    }
    sc_comm_away(NULL, 0, SC_AWAY_PROBE);
    return rc;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag = 0;
    if (!sc_comm_engines_here()) return PMPI_Mprobe(source, tag, comm, message, status);
    int rc;
    double until = PMPI_Wtime() + SPIN_S;
    do {
        rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
        if (rc != MPI_SUCCESS || flag) return rc;
    } while (PMPI_Wtime() < until);
    sc_comm_away(NULL, 1, SC_AWAY_PROBE);
    for (long ns = SC_NAP_FIRST_NS; rc == MPI_SUCCESS && !flag;) {
        sc_polite_nap(&ns);
        rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
    }
    sc_comm_away(NULL, 0, SC_AWAY_PROBE);
    return rc;
}
