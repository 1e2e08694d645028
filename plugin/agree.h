/* The agreement collectives that keep every rank's view of call identity
 * the same (identity.h): nothing a rank sees alone moves it between plain
 * collectives and rounds.
 *
 * Learning: each call is preceded by a small vote (MPI_MAX over the
 * communicator's private duplicate): the shapes must be equal everywhere,
 * and the address hints are combined.  A call some ranks make and others
 * do not is found before its data collective: the ranks whose call is not
 * the one most ranks make get an error for it (it does not count), the
 * others wait for their next call.
 *
 * Lockstep: once a pattern is agreed, calls that run as plain collectives
 * (an exact mode, a pattern not told apart) pay nothing extra.  A rank
 * whose call is off the pattern cannot know whether the others are too,
 * and they may already wait in the collective of the pattern's slot, so it
 * joins that collective with a poisoned buffer (a NaN first element, zeros
 * else); every rank then finds a NaN first element, and all of them, and
 * only then, meet in a second small vote that says who was off. */
#ifndef STARCOLL_AGREE_H
#define STARCOLL_AGREE_H
#include <mpi.h>
#include "identity.h"

/* Learning: agree on call k before it runs.  Returns an MPI error code, or
 * MPI_SUCCESS with *outcome: SC_LEARN_GO_ON or SC_LEARN_DONE (run the call
 * exact), or SC_LEARN_DISAGREE: this rank's call is not the one most ranks
 * make here; it must fail (and *others gets how many ranks call another
 * shape).  polled: the votes tested to completion (polled_coll.h), the
 * same on every rank; so for the lockstep calls below. */
int sc_agree_learning(sc_identity *id, MPI_Comm agree, const sc_call_key *k, sc_learn_outcome *outcome, int *others,
                      int polled);

typedef enum {
    SC_LS_DONE = 0,        /* the collective gave the result */
    SC_LS_STRAY,           /* every rank was off, with one shape: run the call exact */
    SC_LS_REJECT           /* some rank was off (*first_off names one): this call fails */
} sc_ls_outcome;

/* One data collective of a lockstep call: reduce(ctx, sendbuf, recvbuf,
 * count, datatype) on the communicator where every rank makes it. */
typedef int (*sc_reduce_fn)(void *ctx, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt);

/* On the pattern: the collective, then the check of its first element.
 * dkind says the type (sc_dkind); vote_comm carries the second vote. */
int sc_lockstep_on(sc_reduce_fn reduce, void *ctx, MPI_Comm vote_comm, const void *sendbuf, void *recvbuf,
                   int count, MPI_Datatype dt, int dkind, sc_ls_outcome *out, int *first_off, int polled);

/* Off the pattern: the expected slot's collective with a poisoned buffer
 * (scratch: at least exp_count elements of exp_dkind), then the vote; shape
 * is this rank's call.  exp_count 0: no slot expected (a step of no
 * eligible calls), the vote only; scratch may be NULL. */
int sc_lockstep_off(sc_reduce_fn reduce, void *ctx, MPI_Comm vote_comm, void *scratch, int exp_count, int exp_dkind,
                    uint64_t shape, sc_ls_outcome *out, int *first_off, int polled);
#endif
