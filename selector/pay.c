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

void sc_pay_age(sc_pay *p, long step, long max_age)
{
    if (p->quorum_ratio > 0.0 && step - p->quorum_step > max_age)
        p->quorum_ratio = 0.0;
    if (p->groups_ratio > 0.0 && step - p->groups_step > max_age)
        p->groups_ratio = 0.0;
}

/* a measured no better than b by the margin (both known) */
static int no_better(double a, double b) { return a > 0.0 && b > 0.0 && a >= b * (1.0 - SC_PAY_MARGIN); }

/* sync's figure now: as measured, times the slowdown of stragglers come since */
static double sync_now(const sc_pay *p, double sync_wait)
{
    return sync_wait > 1.0 ? p->sync_ratio * sync_wait : p->sync_ratio;
}

int sc_pay_groups_loses(const sc_pay *p, double sync_wait, sc_mode *instead, char *why, size_t len)
{
    double sync = sync_now(p, sync_wait);
    /* against sync, groups must pay by the margin, as quorum must; against
     * quorum, quorum must measure better by the margin (both tolerate) */
    int to_quorum = p->groups_ratio > 0.0 && p->quorum_ratio > 0.0 &&
                    p->quorum_ratio < p->groups_ratio * (1.0 - SC_PAY_MARGIN);
    int to_sync = no_better(p->groups_ratio, sync);
    if (!to_sync && !to_quorum)
        return 0;
    *instead = to_quorum || !no_better(p->quorum_ratio, sync) ? SC_MODE_QUORUM : SC_MODE_SYNC;
    if (why && len)
        snprintf(why, len, "%s: groups measured %.2fx compute per step against %s's %.2fx: its ring costs more than "
                           "the waiting it saves", *instead == SC_MODE_SYNC ? "sync" : "quorum", p->groups_ratio,
                 to_quorum ? "quorum" : "sync", to_quorum ? p->quorum_ratio : sync);
    return 1;
}

int sc_pay_quorum_loses(const sc_pay *p, double sync_wait, char *why, size_t len)
{
    double sync = sync_now(p, sync_wait);
    if (!no_better(p->quorum_ratio, sync))
        return 0;
    if (why && len)
        snprintf(why, len, "sync: quorum measured %.2fx compute per step against sync's %.2fx: its rounds cost more "
                           "than the waiting they save", p->quorum_ratio, sync);
    return 1;
}
