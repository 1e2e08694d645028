/* hier: exact hierarchical all-reduce.  Reduce inside groups (node-local,
 * or STARCOLL_GROUP ranks each), leaders all-reduce across groups, then the
 * leaders broadcast the result inside their group. */
#ifndef STARCOLL_MODE_HIER_H
#define STARCOLL_MODE_HIER_H
#include "comm_state.h"

int sc_hier_allreduce(sc_comm *cs, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt);
#endif
