/* Waiting for a request without taking a core from the engine threads.
 *
 * Open MPI's blocking calls poll: on a node with fewer cores than threads
 * (an oversubscribed test node, or ranks that share cores with their
 * engine and monitor threads) an application thread blocked in an exact
 * collective takes the CPU its own engine thread needs to serve the other
 * ranks' rounds, and every rank waits longer.  Measured: a 161-tensor step
 * with a 1-element loss at 8 ranks on 2 cores, 766 ms with the loss's
 * polling and 455 ms without the loss at all.  So while engines run, the
 * ineligible calls on an engine's communicator first meet at a nonblocking
 * barrier, and the application's blocking waits test its requests, with
 * short, growing sleeps between tests (the engine threads' own MPI calls
 * progress the requests meanwhile). */
#ifndef STARCOLL_POLITE_WAIT_H
#define STARCOLL_POLITE_WAIT_H
#include <mpi.h>

/* MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome by their tests,
 * sleeping between them (20 us, doubling to 1 ms). */
int sc_polite_wait(MPI_Request *req, MPI_Status *status);
int sc_polite_waitall(int count, MPI_Request reqs[], MPI_Status statuses[]);
int sc_polite_waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status);
int sc_polite_waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]);

/* The sleep between two tests, for waits made of other tests (Fortran's,
 * fortran_blocking.c): start *ns at SC_NAP_FIRST_NS. */
#define SC_NAP_FIRST_NS 20000L
void sc_polite_nap(long *ns);

/* A blocking point-to-point call made of its nonblocking form's tests or
 * probes (blocking_p2p.c, fortran_blocking.c): polls over(ctx) until it
 * returns nonzero, first for up to SC_SPIN_S as MPI's own waits poll (most
 * messages come within it: a round trip stays microseconds, no notice);
 * then with the engines told this rank is away (what: SC_AWAY_*), a poll
 * and a nap at a time. */
#define SC_SPIN_S 100e-6
void sc_poll_away(int (*over)(void *ctx), void *ctx, int what);
#endif
