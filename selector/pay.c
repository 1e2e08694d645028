#include "pay.h"

#include <stdio.h>

void sc_pay_measured(sc_pay *p, sc_mode mode, double ratio, long step)
{
    if (!(ratio > 0.0))
        return;
    if (mode == SC_MODE_SYNC) {
        p->sync_ratio = ratio;
    } else if (mode == SC_MODE_QUORUM) {
        p->quorum_ratio = ratio;
        p->quorum_step = step;
    }
}

void sc_pay_age(sc_pay *p, long step, long max_age)
{
    if (p->quorum_ratio > 0.0 && step - p->quorum_step > max_age)
        p->quorum_ratio = 0.0;
}

int sc_pay_quorum_loses(const sc_pay *p, char *why, size_t len)
{
    if (p->sync_ratio <= 0.0 || p->quorum_ratio <= 0.0)
        return 0;
    if (p->quorum_ratio < p->sync_ratio * (1.0 - SC_PAY_MARGIN))
        return 0;
    if (why && len)
        snprintf(why, len, "sync: quorum measured %.2fx compute per step against sync's %.2fx: its rounds cost more "
                           "than the waiting they save", p->quorum_ratio, p->sync_ratio);
    return 1;
}
