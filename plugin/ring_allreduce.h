/* A sum over some ranks of a communicator, by point-to-point alone.
 *
 * The groups ring runs on the members' part of the engine's communicator.
 * Building a communicator for it (MPI_Comm_create_group) allocates a
 * context id, which Open MPI serialises process-wide: with two engines in
 * one process (two communicators), one engine's ring creation waited for the
 * other's, and a call stalled for seconds.  This needs no new communicator. */
#ifndef STARCOLL_RING_ALLREDUCE_H
#define STARCOLL_RING_ALLREDUCE_H
#include <mpi.h>
#include <stddef.h>
#include "eligibility.h"

/* Reduce-scatter then all-gather around members[0..m-1] (ranks of comm;
 * `me` is this rank's index in it), on `tag`.  sendbuf may be MPI_IN_PLACE.
 * tmp holds count/m + 1 elements.  Every member ends with the same bits:
 * each chunk is summed once, by one member, in one order, then copied.
 * polled: its exchanges tested with naps (polled_coll.h). */
int sc_ring_allreduce(const void *sendbuf, void *recvbuf, long count, MPI_Datatype dt, sc_dkind dk,
                      const int *members, int m, int me, MPI_Comm comm, int tag, void *tmp, int polled);
#endif
