/* Holding children that keep coming back (see child_hold.h). */
#include "child_hold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_child_hold_init(sc_child_hold *h, int nranks)
{
    memset(h, 0, sizeof *h);
    size_t n = (size_t)(nranks > 0 ? nranks : 1);
    h->n = nranks;
    h->was_child = calloc(n, 1);
    h->released_at = malloc(n * sizeof(long));
    h->until = malloc(n * sizeof(long));
    h->epochs = calloc(n, sizeof(int));
    if (!h->was_child || !h->released_at || !h->until || !h->epochs) {
        sc_child_hold_free(h);
        return -1;
    }
    for (int i = 0; i < nranks; i++)
        h->released_at[i] = h->until[i] = -1;
    return 0;
}

void sc_child_hold_free(sc_child_hold *h)
{
    free(h->was_child);
    free(h->released_at);
    free(h->until);
    free(h->epochs);
    memset(h, 0, sizeof *h);
}

void sc_child_hold_update(sc_child_hold *h, long step, int epoch_steps, const unsigned char *child,
                          const sc_rank_status *st)
{
    for (int i = 0; i < h->n; i++) {
        if (child[i] && !h->was_child[i] && !sc_rank_short_of_resource(&st[i])) {
            h->until[i] = -1;   /* made a child on timing alone: not held */
        } else if (child[i] && !h->was_child[i]) {
            int soon = h->released_at[i] >= 0 && step - h->released_at[i] <= (long)SC_HOLD_FLAP_EPOCHS * epoch_steps;
            if (soon) {
                int e = h->epochs[i] ? 2 * h->epochs[i] : SC_HOLD_FIRST_EPOCHS;
                h->epochs[i] = e > SC_HOLD_MAX_EPOCHS ? SC_HOLD_MAX_EPOCHS : e;
            } else {
                h->epochs[i] = 0;
            }
            h->until[i] = step + (long)(h->epochs[i] ? h->epochs[i] : SC_HOLD_MIN_EPOCHS) * epoch_steps;
        } else if (!child[i] && h->was_child[i]) {
            h->released_at[i] = step;
        }
        h->was_child[i] = child[i] ? 1 : 0;
    }
}

int sc_child_hold_apply(const sc_child_hold *h, long step, const sc_candidate *cur, sc_candidate *cand)
{
    int put = 0, first = -1;
    for (int i = 0; i < h->n; i++)
        if (cur->child[i] && !cand->child[i] && h->until[i] > step) {
            if (first < 0)
                first = i;
            put++;
        }
    if (!put)
        return 0;
    if (cand->mode != SC_MODE_GROUPS) {
        /* Whatever else was proposed, the held children stay children. */
        memset(cand->child, 0, (size_t)h->n);
        cand->nchildren = 0;
        cand->mode = SC_MODE_GROUPS;
        cand->interval = cur->interval;
        cand->objective = cur->objective;
        cand->reason[0] = '\0';
    }
    for (int i = 0; i < h->n; i++)
        if (cur->child[i] && h->until[i] > step && !cand->child[i]) {
            cand->child[i] = 1;
            cand->nchildren++;
        }
    cand->k = h->n - cand->nchildren;
    cand->by_rule = 1;
    size_t len = strlen(cand->reason);
    snprintf(cand->reason + len, sizeof cand->reason - len,
             "%sgroups: rank %d%s held a child until step %ld (slow again soon after its release); ring %d",
             len ? "; " : "", first, put > 1 ? " and others" : "", h->until[first], cand->k);
    return put;
}
