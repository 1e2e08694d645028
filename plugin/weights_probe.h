/* Weights averaged, not gradients summed: what a step's values say.
 *
 * A code that averages its weights (local SGD, model averaging:
 * MPI_Allreduce(w, s); w = s / size) hands each tensor back the next step
 * as about what the last sum gave it over the number of ranks, changed a
 * little by the local update.  Gradients are not
 * that: each step's differs from the last sum by the batch's noise.  A
 * tolerant round is right for gradients (a late copy rides into a later
 * sum) and wrong for an average (that sum holds another number of copies).
 *
 * While a step is learned (exact calls), a few elements of each eligible
 * call's contribution and result are kept; when the step is agreed, each
 * tensor's contribution is compared with its result one step before.
 * Pure logic, no MPI: the verdict is this rank's; the caller agrees it. */
#ifndef STARCOLL_WEIGHTS_PROBE_H
#define STARCOLL_WEIGHTS_PROBE_H
#include "eligibility.h"

#define SC_WPROBE_SAMPLES 16    /* elements kept per call, evenly spaced */
#define SC_WPROBE_CALLS 1024    /* calls kept: steps of up to 1024 - 8 tensors are judged */
#define SC_WPROBE_CLOSE 0.05    /* relative misfit below which a tensor follows the last sum */

typedef struct sc_wprobe sc_wprobe;

sc_wprobe *sc_wprobe_new(void);   /* NULL out of memory: no verdict, the caller judges nothing */
void sc_wprobe_free(sc_wprobe *p);
/* An eligible call is about to be made: contrib is what this rank gives
 * (the receive buffer for MPI_IN_PLACE), host memory, float or double. */
void sc_wprobe_before(sc_wprobe *p, const void *contrib, long count, sc_dkind dk);
/* It returned: result is its sum (ok 0: it failed, the call is forgotten). */
void sc_wprobe_after(sc_wprobe *p, const void *result, int ok);
/* The step was agreed: it has `slots` eligible calls, the last calls kept
 * are one step of it and those before the one before.  1 when most of its
 * tensors that changed since the last step are their last sum over
 * comm_size within SC_WPROBE_CLOSE: weights being averaged.  0 otherwise,
 * or when too little is kept to tell.  *follow and *judged (either may be
 * NULL) get the counts behind it.  Forgets what it kept. */
int sc_wprobe_averaged(sc_wprobe *p, int slots, int comm_size, int *follow, int *judged);

#endif
