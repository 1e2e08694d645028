/* Blocking collectives other than MPI_Allreduce, and the blocking waits.
 * While tolerant engines run, a rank blocked in one of these cannot
 * deposit; its engines' coordinators are told it is away meanwhile, so no
 * round waits for it (the ranks that would release it may be the ones
 * waiting).  Otherwise these pass straight through.  Point-to-point calls
 * are in blocking_p2p.c; communicators, MPI-IO and windows in
 * blocking_setup_io.c. */
#include <mpi.h>
#include "comm_state.h"
#include "polite_wait.h"
#include "away_around.h"

int MPI_Barrier(MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_BARRIER, PMPI_Barrier(comm));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_BCAST, PMPI_Bcast(buf, count, dt, root, comm));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_REDUCE, PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm));
}

int MPI_Allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt,
                  MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_ALLGATHER, PMPI_Allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm));
}

int MPI_Gather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt,
               int root, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_GATHER, PMPI_Gather(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm));
}

int MPI_Scatter(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt,
                int root, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_SCATTER, PMPI_Scatter(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm));
}

int MPI_Alltoall(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt,
                 MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_ALLTOALL, PMPI_Alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm));
}

/* The vector and prefix collectives: what a code gathers its results or
 * shards its optimiser with (a rank blocked unseen there costs the others
 * a 10 s stall; engine_coord.c). */
int MPI_Allgatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rdt, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_ALLGATHERV, PMPI_Allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm));
}

int MPI_Gatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int rcounts[],
                const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_GATHERV, PMPI_Gatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, root, comm));
}

int MPI_Scatterv(const void *sendbuf, const int scounts[], const int displs[], MPI_Datatype sdt, void *recvbuf,
                 int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_SCATTERV, PMPI_Scatterv(sendbuf, scounts, displs, sdt, recvbuf, rcount, rdt, root, comm));
}

int MPI_Alltoallv(const void *sendbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt, void *recvbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rdt, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_ALLTOALLV,
                PMPI_Alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm));
}

int MPI_Alltoallw(const void *sendbuf, const int scounts[], const int sdispls[], const MPI_Datatype sdts[],
                  void *recvbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rdts[], MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_ALLTOALLV,
                PMPI_Alltoallw(sendbuf, scounts, sdispls, sdts, recvbuf, rcounts, rdispls, rdts, comm));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_REDUCE_SCATTER, PMPI_Reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int rcount, MPI_Datatype dt, MPI_Op op,
                             MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_REDUCE_SCATTER, PMPI_Reduce_scatter_block(sendbuf, recvbuf, rcount, dt, op, comm));
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_SCAN, PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm));
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_SCAN, PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm));
}

/* Neighbourhood collectives on a graph or Cartesian communicator (a
 * stencil's halo, a gossip step among peers): each waits for its
 * neighbours only, a straggler's too. */
int MPI_Neighbor_allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                           MPI_Datatype rdt, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_NEIGHBOR, PMPI_Neighbor_allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm));
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int rcounts[],
                            const int displs[], MPI_Datatype rdt, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_NEIGHBOR,
                PMPI_Neighbor_allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm));
}

int MPI_Neighbor_alltoall(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                          MPI_Datatype rdt, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_NEIGHBOR, PMPI_Neighbor_alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm));
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt,
                           void *recvbuf, const int rcounts[], const int rdispls[], MPI_Datatype rdt, MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_NEIGHBOR,
                PMPI_Neighbor_alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm));
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int scounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sdts[], void *recvbuf, const int rcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype rdts[], MPI_Comm comm)
{
    AWAY_AROUND(SC_AWAY_NEIGHBOR,
                PMPI_Neighbor_alltoallw(sendbuf, scounts, sdispls, sdts, recvbuf, rcounts, rdispls, rdts, comm));
}

/* The blocking completion calls.  A rank blocked in one cannot deposit
 * either (it may wait for a request of its own collective that the other
 * ranks have not started yet): away, as in the collectives above, but
 * only when the requests are not complete already, so a wait on requests
 * the rounds have finished costs a test and no notices.  Pending, they
 * wait by tests and short sleeps, leaving the CPU to the engine threads
 * that complete them (polite_wait.h). */
int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int done = 0;
    if (!sc_comm_engines_here()) return PMPI_Wait(request, status);
    int rc = PMPI_Test(request, &done, status);
    if (rc != MPI_SUCCESS || done) return rc;
    AWAY_AROUND(SC_AWAY_WAIT, sc_polite_wait(request, status));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int done = 0;
    if (!sc_comm_engines_here()) return PMPI_Waitall(count, requests, statuses);
    int rc = PMPI_Testall(count, requests, &done, statuses);
    if (rc != MPI_SUCCESS || done) return rc;
    AWAY_AROUND(SC_AWAY_WAIT, sc_polite_waitall(count, requests, statuses));
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int done = 0;
    if (!sc_comm_engines_here()) return PMPI_Waitany(count, requests, index, status);
    int rc = PMPI_Testany(count, requests, index, &done, status);
    if (rc != MPI_SUCCESS || done) return rc;
    AWAY_AROUND(SC_AWAY_WAIT, sc_polite_waitany(count, requests, index, status));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    if (!sc_comm_engines_here()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;   /* some completed, or MPI_UNDEFINED: none active */
    AWAY_AROUND(SC_AWAY_WAIT, sc_polite_waitsome(incount, requests, outcount, indices, statuses));
}

/* The tests: polling requests that are not complete is waiting too, in
 * small pieces; the engines treat this rank as away until a test finds
 * them complete or it makes a call of its own. */
#define POLLING(done)                                      \
    do {                                                   \
        if (rc == MPI_SUCCESS) sc_comm_polling(!(done));   \
        return rc;                                         \
    } while (0)

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int rc = PMPI_Test(request, flag, status);
    POLLING(*flag);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int rc = PMPI_Testall(count, requests, flag, statuses);
    POLLING(*flag);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    int rc = PMPI_Testany(count, requests, index, flag, status);
    POLLING(*flag);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    POLLING(*outcount != 0);
}

/* A probe or a status query finding nothing is polling too: a master
 * polling MPI_Iprobe for a straggler's message waits for it as MPI_Recv
 * would (unseen, it cost a 10 s stall a time under tolerant modes). */
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    POLLING(*flag);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
    POLLING(*flag);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    int rc = PMPI_Request_get_status(request, flag, status);
    POLLING(*flag);
}
