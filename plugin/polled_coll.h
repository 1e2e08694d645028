/* starcoll's own collectives where another thread may be in one too:
 * with STARCOLL_COLL_WAIT=polled, started nonblocking and tested to
 * completion with naps between the tests, never left in MPI's blocking
 * wait; by default, MPI's blocking calls themselves.
 *
 * Open MPI 4.1 (Debian 12's) holds a call for seconds to minutes when two
 * threads of a process are in collectives on two communicators at once
 * while other threads poll MPI_Iprobe; benchmarks/thread_stall shows it
 * with plain MPI and no starcoll (README, "Limits").  starcoll makes that
 * layout whenever one communicator's rounds run on its engine thread while
 * the application thread is in another communicator's step.  In that
 * program, with both collectives started nonblocking and tested with naps
 * between the tests (--wait polled), no call was held; left blocking, or
 * tested back to back (--wait spin), calls were.  Polled is not the
 * default: Open MPI's nonblocking collectives and the naps made exact
 * steps 20 to 45% slower here (README, "Limits").
 *
 * Every rank of a communicator must wait the same way (a blocking
 * collective does not match a nonblocking one): the setting is part of
 * the policy the ranks agree on at start-up.  Not for calls whose result
 * must be bitwise MPI's blocking call's (pass-through calls; sync and hier
 * as the fixed policy): a nonblocking collective may sum in another
 * order.  Contiguous datatypes only (starcoll's eligible calls' and its
 * own). */
#ifndef STARCOLL_POLLED_COLL_H
#define STARCOLL_POLLED_COLL_H
#include <mpi.h>

/* Polled from now on (1) or MPI's blocking calls (0, the default); set
 * once at start-up, before any engine runs. */
void sc_polled_enable(int on);

int sc_polled_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int sc_polled_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                     MPI_Comm comm);
int sc_polled_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int sc_polled_allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm);
int sc_polled_barrier(MPI_Comm comm);
/* MPI_Sendrecv as a receive and a send started together. */
int sc_polled_sendrecv(const void *sendbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *recvbuf,
                       int rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm);
#endif
