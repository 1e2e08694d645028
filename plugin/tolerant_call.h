/* The calls of a tolerant policy (quorum, groups, auto): which tensor
 * each is, learned and agreed by all ranks of its communicator
 * (identity.h, agree.h), then the engine's rounds, or exact where the
 * tensors are not told apart (tolerant_call.c).  interpose.c decides
 * which calls come here. */
#ifndef STARCOLL_TOLERANT_CALL_H
#define STARCOLL_TOLERANT_CALL_H
#include "comm_state.h"
#include "engine.h"
#include "eligibility.h"

/* quorum, groups or auto, with the thread level they need */
int sc_tolerant_policy(void);

/* cs's call identity and agreement communicator, made at its first call
 * that needs them (collective on cs); 0 when cs's calls stay exact. */
int sc_tolerant_ready(sc_comm *cs);

/* An eligible call: *mode gets the mode it counted in; with nb (a
 * nonblocking call's request), *pending says the engine completes it. */
int sc_tolerant_allreduce(sc_comm *cs, const sc_user_call *c, sc_dkind dk, sc_mode *mode, double t_in, sc_nb_call *nb,
                          int *pending);

/* An ineligible call (e, why) takes its place in the step too (a per-step
 * loss tells steps apart): while the step is learned it is agreed on and
 * made here, exact (1, its code in *rc); otherwise 0, and the caller
 * makes it. */
int sc_tolerant_ineligible(sc_comm *cs, const sc_user_call *c, sc_dkind dk, sc_elig e, double t_in, int *rc);
#endif
