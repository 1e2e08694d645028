/* hier: exact hierarchical all-reduce.  Reduce inside groups (node-local,
 * or STARCOLL_GROUP ranks each), leaders all-reduce across groups, then the
 * leaders broadcast the result inside their group. */
#ifndef STARCOLL_MODE_HIER_H
#define STARCOLL_MODE_HIER_H
#include <mpi.h>

/* Sub-communicators of one communicator, built once on first use. */
typedef struct sc_hier {
    int state;                  /* 0 not built, 1 ready, -1 failed (plain all-reduce) */
    int single;                 /* one group: plain reduction */
    MPI_Comm local;             /* ranks of my group */
    MPI_Comm leaders;           /* one leader per group; MPI_COMM_NULL off leaders */
} sc_hier;

void sc_hier_init(sc_hier *h);
void sc_hier_free(sc_hier *h);
/* Build the sub-communicators now (collective over comm), rather than at
 * the first hier call; a failure leaves plain all-reduces. */
void sc_hier_prepare(sc_hier *h, MPI_Comm comm, int group_size);
/* Collective over comm; group_size 0 = node-local groups.  polled: its
 * collectives tested to completion (polled_coll.h), the same on every
 * rank of comm; 0: MPI's blocking ones. */
int sc_hier_allreduce(sc_hier *h, MPI_Comm comm, int group_size, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype dt, int polled);
#endif
