#include "mode_hier.h"

/* Build the group and leader communicators once per user communicator.
 * Collective over cs->comm: every rank reaches its first hier call on this
 * communicator at the same call, since the mode is the same everywhere. */
static int hier_build(sc_comm *cs)
{
    int rc, group_size = sc_rt.policy.group_size;
    if (group_size == 0)
        rc = PMPI_Comm_split_type(cs->comm, MPI_COMM_TYPE_SHARED, cs->rank, MPI_INFO_NULL, &cs->hier_local);
    else
        rc = PMPI_Comm_split(cs->comm, cs->rank / group_size, cs->rank, &cs->hier_local);
    if (rc != MPI_SUCCESS) return rc;
    int local_rank, local_size;
    PMPI_Comm_rank(cs->hier_local, &local_rank);
    PMPI_Comm_size(cs->hier_local, &local_size);
    /* Leaders: local rank 0 of each group. */
    rc = PMPI_Comm_split(cs->comm, local_rank == 0 ? 0 : MPI_UNDEFINED, cs->rank, &cs->hier_leaders);
    if (rc != MPI_SUCCESS) return rc;
    /* One group holding everybody (one node, or a group size >= n): the
     * hierarchy adds nothing, so reduce plainly. */
    cs->hier_single = local_size == cs->size;
    return MPI_SUCCESS;
}

int sc_hier_allreduce(sc_comm *cs, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt)
{
    if (cs->hier_state == 0) {
        int rc = hier_build(cs);
        cs->hier_state = rc == MPI_SUCCESS ? 1 : -1;
        if (rc != MPI_SUCCESS)
            sc_say(SC_SAY_HIER_FAIL, 0, "starcoll: could not build hier sub-communicators (MPI error %d); using sync on this communicator", rc);
    }
    if (cs->hier_state < 0 || cs->hier_single)
        return PMPI_Allreduce(sendbuf, recvbuf, count, dt, MPI_SUM, cs->comm);

    int local_rank, rc;
    PMPI_Comm_rank(cs->hier_local, &local_rank);
    if (local_rank == 0)
        rc = PMPI_Reduce(sendbuf, recvbuf, count, dt, MPI_SUM, 0, cs->hier_local);
    else  /* MPI_IN_PLACE is only legal at the root: a member sends its recvbuf */
        rc = PMPI_Reduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, NULL, count, dt, MPI_SUM, 0, cs->hier_local);
    if (rc != MPI_SUCCESS) return rc;
    if (cs->hier_leaders != MPI_COMM_NULL) {
        rc = PMPI_Allreduce(MPI_IN_PLACE, recvbuf, count, dt, MPI_SUM, cs->hier_leaders);
        if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Bcast(recvbuf, count, dt, 0, cs->hier_local);
}
