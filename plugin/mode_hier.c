#include "mode_hier.h"
#include "polled_coll.h"
#include "runtime.h"

void sc_hier_init(sc_hier *h)
{
    h->state = 0;
    h->single = 0;
    h->local = h->leaders = MPI_COMM_NULL;
}

void sc_hier_free(sc_hier *h)
{
    if (h->local != MPI_COMM_NULL) PMPI_Comm_free(&h->local);
    if (h->leaders != MPI_COMM_NULL) PMPI_Comm_free(&h->leaders);
    h->state = 0;
}

/* Build the group and leader communicators.  Collective over comm: every
 * rank reaches its first hier call on comm at the same call, since the
 * mode is the same everywhere. */
static int hier_build(sc_hier *h, MPI_Comm comm, int group_size)
{
    int rank, size, rc;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    if (group_size == 0)
        rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &h->local);
    else
        rc = PMPI_Comm_split(comm, rank / group_size, rank, &h->local);
    if (rc != MPI_SUCCESS) return rc;
    int local_rank, local_size;
    PMPI_Comm_rank(h->local, &local_rank);
    PMPI_Comm_size(h->local, &local_size);
    /* Leaders: local rank 0 of each group. */
    rc = PMPI_Comm_split(comm, local_rank == 0 ? 0 : MPI_UNDEFINED, rank, &h->leaders);
    if (rc != MPI_SUCCESS) return rc;
    /* One group holding everybody (one node, or a group size >= n): the
     * hierarchy adds nothing, so reduce plainly. */
    h->single = local_size == size;
    return MPI_SUCCESS;
}

void sc_hier_prepare(sc_hier *h, MPI_Comm comm, int group_size)
{
    if (h->state != 0) return;
    int rc = hier_build(h, comm, group_size);
    h->state = rc == MPI_SUCCESS ? 1 : -1;
    if (rc != MPI_SUCCESS)
        sc_say(SC_SAY_HIER_FAIL, 0, "starcoll: could not build hier sub-communicators (MPI error %d); using sync on this communicator", rc);
}

int sc_hier_allreduce(sc_hier *h, MPI_Comm comm, int group_size, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype dt, int polled)
{
    sc_hier_prepare(h, comm, group_size);
    if (h->state < 0 || h->single)
        return sc_polled_allreduce(sendbuf, recvbuf, count, dt, MPI_SUM, comm, polled);

    int local_rank, rc;
    PMPI_Comm_rank(h->local, &local_rank);
    /* MPI_IN_PLACE is only legal at the root: a member sends its recvbuf */
    const void *in = local_rank == 0 || sendbuf != MPI_IN_PLACE ? sendbuf : recvbuf;
    void *out = local_rank == 0 ? recvbuf : NULL;
    rc = sc_polled_reduce(in, out, count, dt, MPI_SUM, 0, h->local, polled);
    if (rc != MPI_SUCCESS) return rc;
    if (h->leaders != MPI_COMM_NULL) {
        rc = sc_polled_allreduce(MPI_IN_PLACE, recvbuf, count, dt, MPI_SUM, h->leaders, polled);
        if (rc != MPI_SUCCESS) return rc;
    }
    return sc_polled_bcast(recvbuf, count, dt, 0, h->local, polled);
}
