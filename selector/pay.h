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
 * Nor once a mode has lost twice in a row: a noisy node's short slow
 * spells each lift sync's figure by estimate (the straggler's slowdown),
 * and auto went back to a losing quorum at nearly every onset.  From then
 * on only sync's measured figure counts, and the mode is held off for an
 * epoch, then 2, 4, 8 and 16 at each further loss (sync's measured figure
 * alone, noisy there, let it back every few epochs), unless sync measures
 * SC_PAY_CLEAR worse than the mode did (a real straggler in sync); its
 * figure is kept 2, 4, then 8 times SC_PAY_AGE_EPOCHS.  A spell that
 * measures no worse than sync ends the count.
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
    int quorum_losses;   /* quorum spells in a row left for measuring no better */
    int groups_losses;
    long quorum_hold;    /* quorum is not entered before this step (SC_PAY_STRICT_LOSSES), 0 none */
    long groups_hold;
    long quorum_lost_spell; /* start of the last spell counted as lost (while losses > 0) */
    long groups_lost_spell;
} sc_pay;

#define SC_PAY_STRICT_LOSSES 2   /* from this many losses in a row: no lift by estimate, and a hold */
#define SC_PAY_HOLD_MAX_EPOCHS 16
#define SC_PAY_CLEAR 0.25        /* sync measured this much worse than the held mode ends a hold */

/* An epoch's measured interval / compute in the mode in force at `step`
 * (sync, quorum and groups are kept; other modes are ignored). */
void sc_pay_measured(sc_pay *p, sc_mode mode, double ratio, long step);
/* Forget quorum's and groups' figures when older than max_age steps
 * (longer for a mode that keeps losing). */
void sc_pay_age(sc_pay *p, long step, long max_age);
/* The verdicts below take sync_wait: the largest slowdown of the
 * stragglers held now whose onset came after sync's figure was measured
 * (sync_step), since sync would wait for them; <= 1 none.  sync's figure
 * counts it.  (A straggler found two steps in had quorum measured against
 * a sync that had never waited for it, and auto left quorum while the
 * straggler lasted.) */
/* The verdict at `step` on the mode in force, `mode`, in force since
 * spell_start: lost (it is left; from the second spell lost in a row, held
 * off for epoch_steps times 1, 2, 4 ... SC_PAY_HOLD_MAX_EPOCHS from step)
 * or not (a win ends the count).  A spell counts once, however many
 * verdicts it takes to leave (a child's hold keeps groups). */
void sc_pay_spell(sc_pay *p, sc_mode mode, int lost, long spell_start, long step, long epoch_steps);
/* 1 when quorum measured no better than sync, or is held off at `step`,
 * with one line in why. */
int sc_pay_quorum_loses(const sc_pay *p, double sync_wait, long step, char *why, size_t len);
/* 1 when groups measured no better than sync or than quorum, with one line
 * in why; *instead: the mode to try in its place (quorum, unless quorum is
 * known to lose to sync or measured no better than groups). */
int sc_pay_groups_loses(const sc_pay *p, double sync_wait, long step, sc_mode *instead, char *why, size_t len);
/* 1 when groups measured SC_PAY_CLEAR worse than sync or quorum: then not
 * even children held for a resource they lack keep it (child_hold.h). */
int sc_pay_groups_loses_clearly(const sc_pay *p, double sync_wait);

#endif
