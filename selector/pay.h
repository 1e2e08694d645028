/* Does tolerance pay?  The heuristic predicts quorum's update interval
 * from the ranks' own step times alone, but a tolerant round costs more
 * than a plain collective: on an oversubscribed node, more than the
 * waiting it saves, and a noisy machine's spread alone can then send a
 * job into quorum that is slower there.  So the update interval measured
 * in sync and in quorum (per epoch, relative to compute: the median step,
 * so that a few stalls, a backlog drained after a mode change, do not
 * outweigh the many steps quorum saves; by the mean, one such epoch sent a
 * ResNet-50-shaped trainer back to sync for 226 steps) is kept, and
 * quorum is left, or not entered again, while it measured no better than
 * sync by SC_PAY_MARGIN.  A new straggler shows as a worse sync, measured
 * every epoch in sync, which lifts the verdict by itself; quorum's figure
 * is also forgotten once SC_PAY_AGE_EPOCHS old, so a changed situation
 * gets a new try.  Not at every onset: jitter alone makes those often.
 * Groups (a ring with stragglers as children) is held to the same rule
 * against sync and quorum: its ring waits for every member, so on a noisy
 * node it can cost more than a quorum that waits for the fastest k.
 * Pure bookkeeping, no MPI. */
#ifndef STARCOLL_SELECTOR_PAY_H
#define STARCOLL_SELECTOR_PAY_H

#include <stddef.h>

#include "sc_features.h"

#define SC_PAY_MARGIN 0.03   /* quorum must measure this much better than sync */
#define SC_PAY_AGE_EPOCHS 10 /* quorum's figure is tried again after this many epochs */

typedef struct sc_pay {
    double sync_ratio;   /* latest epoch measured in sync: interval / compute; 0 unknown */
    long sync_step;      /* step at which sync_ratio was measured (the middle of the steps its median took) */
    double quorum_ratio; /* latest epoch measured in quorum; 0 unknown */
    long quorum_step;    /* step at which quorum_ratio was measured */
    double groups_ratio; /* latest epoch measured in groups; 0 unknown */
    long groups_step;
} sc_pay;

/* An epoch's measured interval / compute in the mode in force at `step`
 * (sync, quorum and groups are kept; other modes are ignored). */
void sc_pay_measured(sc_pay *p, sc_mode mode, double ratio, long step);
/* Forget quorum's and groups' figures when older than max_age steps. */
void sc_pay_age(sc_pay *p, long step, long max_age);
/* The verdicts below take sync_wait: the largest slowdown of the
 * stragglers held now whose onset came after sync's figure was measured
 * (sync_step), since sync would wait for them; <= 1 none.  sync's figure
 * counts it.  (A straggler found two steps in had quorum measured against
 * a sync that had never waited for it, and auto left quorum while the
 * straggler lasted.) */
/* 1 when quorum measured no better than sync, with one line in why. */
int sc_pay_quorum_loses(const sc_pay *p, double sync_wait, char *why, size_t len);
/* 1 when groups measured no better than sync or than quorum, with one line
 * in why; *instead: the mode to try in its place (quorum, unless quorum is
 * known to lose to sync or measured no better than groups). */
int sc_pay_groups_loses(const sc_pay *p, double sync_wait, sc_mode *instead, char *why, size_t len);

#endif
