/* Blocking collectives other than MPI_Allreduce.  While tolerant engines
 * run, a rank blocked in one of these cannot deposit; its engines'
 * coordinators are told it is away meanwhile, so no round waits for it
 * (the ranks that would release it may be the ones waiting).  Otherwise
 * these pass straight through. */
#include <mpi.h>
#include "comm_state.h"

#define AWAY_AROUND(what, call)                   \
    do {                                          \
        int engines_ = sc_comm_engines_here();    \
        if (engines_) sc_comm_away(NULL, 1, what); \
        int rc_ = (call);                         \
        if (engines_) sc_comm_away(NULL, 0, what); \
        return rc_;                               \
    } while (0)

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
