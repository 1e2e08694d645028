#include "pay.h"

#include <stdio.h>

void sc_pay_measured(sc_pay *p, sc_mode mode, double ratio, long step)
{
    if (!(ratio > 0.0))
        return;
    if (mode == SC_MODE_SYNC) {
        p->sync_ratio = ratio;
        p->sync_step = step;
    } else if (mode == SC_MODE_QUORUM) {
        p->quorum_ratio = ratio;
        p->quorum_step = step;
    } else if (mode == SC_MODE_GROUPS) {
        p->groups_ratio = ratio;
        p->groups_step = step;
    }
}

/* A mode that keeps losing keeps its figure longer: 2, 4 and 8 times
 * max_age from the second loss in a row (a new try at every aging was
 * most of what was left of the flapping). */
static long age_for(long max_age, int losses)
{
    int extra = losses - SC_PAY_STRICT_LOSSES + 1;
    return extra <= 0 ? max_age : max_age << (extra < 3 ? extra : 3);
}

void sc_pay_age(sc_pay *p, long step, long max_age)
{
    if (p->quorum_ratio > 0.0 && step - p->quorum_step > age_for(max_age, p->quorum_losses))
        p->quorum_ratio = 0.0;
    if (p->groups_ratio > 0.0 && step - p->groups_step > age_for(max_age, p->groups_losses))
        p->groups_ratio = 0.0;
}

void sc_pay_spell(sc_pay *p, sc_mode mode, int lost, long spell_start, long step, long epoch_steps)
{
    int q = mode == SC_MODE_QUORUM;
    if (!q && mode != SC_MODE_GROUPS)
        return;
    int *losses = q ? &p->quorum_losses : &p->groups_losses;
    long *hold = q ? &p->quorum_hold : &p->groups_hold, *counted = q ? &p->quorum_lost_spell : &p->groups_lost_spell;
    if (!lost) {
        *losses = 0;
        *hold = 0;
        return;
    }
    if (*losses == 0 || *counted != spell_start)
        ++*losses;
    *counted = spell_start;
    *hold = 0;
    if (*losses >= SC_PAY_STRICT_LOSSES) {
        long epochs = 1L << (*losses - SC_PAY_STRICT_LOSSES < 4 ? *losses - SC_PAY_STRICT_LOSSES : 4);
        *hold = step + (epochs < SC_PAY_HOLD_MAX_EPOCHS ? epochs : SC_PAY_HOLD_MAX_EPOCHS) * epoch_steps;
    }
}

/* a measured no better than b by the margin (both known) */
static int no_better(double a, double b) { return a > 0.0 && b > 0.0 && a >= b * (1.0 - SC_PAY_MARGIN); }

/* sync's figure now: as measured, times the slowdown of stragglers come
 * since, unless the mode judged has lost too often for an estimate */
static double sync_now(const sc_pay *p, double sync_wait, int losses)
{
    return sync_wait > 1.0 && losses < SC_PAY_STRICT_LOSSES ? p->sync_ratio * sync_wait : p->sync_ratio;
}

/* The mode (its last figure, its losses, its hold) is held off at step:
 * one line in why. */
static int held(const char *instead, const char *name, double ratio, int losses, long hold, const sc_pay *p, long step,
                char *why, size_t len)
{
    if (step >= hold || (ratio > 0.0 && p->sync_ratio >= ratio * (1.0 + SC_PAY_CLEAR)))
        return 0;
    if (why && len)
        snprintf(why, len, "%s: %s lost %d spells in a row (last %.2fx compute per step against sync's %.2fx); "
                           "not tried again before step %ld unless sync measures %.0f%% worse", instead, name, losses, ratio,
                 p->sync_ratio, hold, 100.0 * SC_PAY_CLEAR);
    return 1;
}

int sc_pay_groups_loses(const sc_pay *p, double sync_wait, long step, sc_mode *instead, char *why, size_t len)
{
    double sync = sync_now(p, sync_wait, p->groups_losses);
    int quorum_held = step < p->quorum_hold;
    sc_mode other = quorum_held || no_better(p->quorum_ratio, sync_now(p, sync_wait, p->quorum_losses)) ? SC_MODE_SYNC
                                                                                                         : SC_MODE_QUORUM;
    if (held(other == SC_MODE_SYNC ? "sync" : "quorum", "groups", p->groups_ratio, p->groups_losses, p->groups_hold, p,
             step, why, len)) {
        *instead = other;
        return 1;
    }
    /* against sync, groups must pay by the margin, as quorum must; against
     * quorum, quorum must measure better by the margin (both tolerate) */
    int to_quorum = p->groups_ratio > 0.0 && p->quorum_ratio > 0.0 && !quorum_held &&
                    p->quorum_ratio < p->groups_ratio * (1.0 - SC_PAY_MARGIN);
    int to_sync = no_better(p->groups_ratio, sync);
    if (!to_sync && !to_quorum)
        return 0;
    *instead = !quorum_held && (to_quorum || !no_better(p->quorum_ratio, sync)) ? SC_MODE_QUORUM : SC_MODE_SYNC;
    if (why && len)
        snprintf(why, len, "%s: groups measured %.2fx compute per step against %s's %.2fx: its ring costs more than "
                           "the waiting it saves", *instead == SC_MODE_SYNC ? "sync" : "quorum", p->groups_ratio,
                 to_quorum ? "quorum" : "sync", to_quorum ? p->quorum_ratio : sync);
    return 1;
}

int sc_pay_quorum_loses(const sc_pay *p, double sync_wait, long step, char *why, size_t len)
{
    if (held("sync", "quorum", p->quorum_ratio, p->quorum_losses, p->quorum_hold, p, step, why, len))
        return 1;
    double sync = sync_now(p, sync_wait, p->quorum_losses);
    if (!no_better(p->quorum_ratio, sync))
        return 0;
    if (why && len)
        snprintf(why, len, "sync: quorum measured %.2fx compute per step against sync's %.2fx: its rounds cost more "
                           "than the waiting they save", p->quorum_ratio, sync);
    return 1;
}

int sc_pay_groups_loses_clearly(const sc_pay *p, double sync_wait)
{
    double best = sync_now(p, sync_wait, p->groups_losses);
    if (p->quorum_ratio > 0.0 && (best <= 0.0 || p->quorum_ratio < best))
        best = p->quorum_ratio;
    return p->groups_ratio > 0.0 && best > 0.0 && p->groups_ratio >= best * (1.0 + SC_PAY_CLEAR);
}
