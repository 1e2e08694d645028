/* Blocking point-to-point calls while tolerant engines run.  A rank
 * blocked in MPI_Recv for a straggler's message cannot deposit, and the
 * straggler's own call may wait for rounds that need that deposit: each
 * such wait lasted until the stall rule (10 s; engine_coord.c).  Measured
 * here, 4 ranks in quorum, one 3x slow, 60 steps: rank 0 collecting a
 * figure from each rank by MPI_Recv every 10 steps took the job 44 s
 * against 3.8 s under sync; an MPI_Sendrecv ring, 54 s.
 *
 * So the call starts nonblocking and is tested, as MPI's own wait polls,
 * for up to SC_SPIN_S; only a call still not complete then makes the rank
 * away, and it waits by tests and naps (sc_poll_away, polite_wait.h).  Most messages
 * come within that: testing once and napping at once made an 8-byte
 * round trip take 115 us against 2.4 us, where a spin keeps it (figures
 * in the README).  With no engine here the calls pass straight through.
 * MPI_Bsend completes locally and is not wrapped. */
#include <mpi.h>
#include "comm_state.h"
#include "polite_wait.h"
#include "away_around.h"

/* Requests tested as MPI_Test(all) does, for sc_poll_away. */
typedef struct {
    int count, rc;
    MPI_Request *reqs;
    MPI_Status *statuses;
} tested;

static int tested_over(void *ctx)
{
    tested *t = ctx;
    int done = 0;
    t->rc = t->count == 1 ? PMPI_Test(t->reqs, &done, t->statuses) : PMPI_Testall(t->count, t->reqs, &done, t->statuses);
    return t->rc != MPI_SUCCESS || done;
}

/* Completes the requests: soon, or away, waiting politely. */
static int complete(int count, MPI_Request *reqs, MPI_Status *statuses, int what)
{
    tested t = {.count = count, .reqs = reqs, .statuses = statuses};
    sc_poll_away(tested_over, &t, what);
    return t.rc;
}

/* A probe, as MPI_Iprobe (message NULL) or MPI_Improbe does, for sc_poll_away. */
typedef struct {
    int source, tag, rc;
    MPI_Comm comm;
    MPI_Message *message;
    MPI_Status *status;
} probed;

static int probed_over(void *ctx)
{
    probed *p = ctx;
    int flag = 0;
    p->rc = p->message ? PMPI_Improbe(p->source, p->tag, p->comm, &flag, p->message, p->status)
                       : PMPI_Iprobe(p->source, p->tag, p->comm, &flag, p->status);
    return p->rc != MPI_SUCCESS || flag;
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (!sc_comm_engines_here()) return PMPI_Send(buf, count, dt, dest, tag, comm);
    MPI_Request req;
    int rc = PMPI_Isend(buf, count, dt, dest, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(1, &req, MPI_STATUS_IGNORE, SC_AWAY_SEND);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (!sc_comm_engines_here()) return PMPI_Ssend(buf, count, dt, dest, tag, comm);
    MPI_Request req;
    int rc = PMPI_Issend(buf, count, dt, dest, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(1, &req, MPI_STATUS_IGNORE, SC_AWAY_SEND);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (!sc_comm_engines_here()) return PMPI_Rsend(buf, count, dt, dest, tag, comm);
    MPI_Request req;
    int rc = PMPI_Irsend(buf, count, dt, dest, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(1, &req, MPI_STATUS_IGNORE, SC_AWAY_SEND);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!sc_comm_engines_here()) return PMPI_Recv(buf, count, dt, source, tag, comm, status);
    MPI_Request req;
    int rc = PMPI_Irecv(buf, count, dt, source, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : complete(1, &req, status, SC_AWAY_RECV);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    if (!sc_comm_engines_here()) return PMPI_Mrecv(buf, count, dt, message, status);
    MPI_Request req;
    int rc = PMPI_Imrecv(buf, count, dt, message, &req);
    return rc != MPI_SUCCESS ? rc : complete(1, &req, status, SC_AWAY_RECV);
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
    rc = complete(2, reqs, st, SC_AWAY_SENDRECV);
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
    if (!sc_comm_engines_here()) return PMPI_Probe(source, tag, comm, status);
    probed p = {.source = source, .tag = tag, .comm = comm, .status = status};
    sc_poll_away(probed_over, &p, SC_AWAY_PROBE);
    return p.rc;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!sc_comm_engines_here()) return PMPI_Mprobe(source, tag, comm, message, status);
    probed p = {.source = source, .tag = tag, .comm = comm, .message = message, .status = status};
    sc_poll_away(probed_over, &p, SC_AWAY_PROBE);
    return p.rc;
}
