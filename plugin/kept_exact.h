/* Communicators that keep every call exact for good: named in
 * STARCOLL_EXACT_COMMS (at their first tolerant call), or guessed where
 * their step is agreed: crossing another communicator (model-parallel
 * sums beside data-parallel ones), or weights being averaged
 * (weights_probe.h); or, keeping their agreed calls, once another model's
 * step came in turn with theirs.  Apart from tolerant_call.c, which makes the
 * calls. */
#ifndef STARCOLL_KEPT_EXACT_H
#define STARCOLL_KEPT_EXACT_H
#include "comm_state.h"

/* What a learned step's values said on this rank (sc_wprobe_averaged). */
typedef struct {
    int averaged, follow, judged;   /* the verdict and its counts */
} sc_values_said;

/* cs keeps every call exact from here on, for the reason why (its report
 * row's); collective over cs where it holds an agreement communicator. */
void sc_keep_exact(sc_comm *cs, const char *why);
/* At the call that adopts a trusted pattern (collective over cs): 1 when a
 * guess keeps cs exact, agreed by all its ranks, said in one line. */
int sc_keep_guessed_exact(sc_comm *cs, const sc_values_said *v);
/* At a per-step call after a step whose calls took the learned step's
 * places and then went off it where no gradient left out explains
 * (sc_identity_foreign): another model's step in turn.  cs's engine
 * stops and never starts again; its calls stay agreed and exact; said in
 * one line, its report row says why.  Every rank calls it at the same
 * call (shapes and positions are the same on every rank). */
void sc_keep_exact_two_models(sc_comm *cs);
#endif
