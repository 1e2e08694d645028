/* Hysteresis between successive choices. */
#include "hysteresis.h"
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_hysteresis_init(sc_hysteresis *h, int nranks)
{
    memset(h, 0, sizeof *h);
    h->n = nranks;
    h->pend_child = calloc((size_t)(nranks > 0 ? nranks : 1), 1);
    return h->pend_child ? 0 : -1;
}

void sc_hysteresis_free(sc_hysteresis *h)
{
    free(h->pend_child);
    h->pend_child = NULL;
}

void sc_hysteresis_restart(sc_hysteresis *h)
{
    h->decided = 1;
    h->pend_wins = 0;
}

static int k_tolerance(int n) { return n / 8 > 1 ? n / 8 : 1; }

static int same_mode_children_k(int n, sc_mode ma, int ka, const unsigned char *ca, sc_mode mb,
                                int kb, const unsigned char *cb)
{
    if (ma != mb)
        return 0;
    if (ma == SC_MODE_QUORUM && abs(ka - kb) > k_tolerance(n))
        return 0;
    if (ma == SC_MODE_GROUPS && memcmp(ca, cb, (size_t)n) != 0)
        return 0;
    return 1;
}

int sc_choice_same(int nranks, const sc_candidate *a, const sc_candidate *b)
{
    return same_mode_children_k(nranks, a->mode, a->k, a->child, b->mode, b->k, b->child);
}

int sc_hysteresis_accept(sc_hysteresis *h, const sc_candidate *cur, const sc_candidate *cand,
                         int onset, int use_margin, char *note, size_t notelen)
{
    int n = h->n;
    if (!h->decided) {
        h->decided = 1;
        h->pend_wins = 0;
        snprintf(note, notelen, "first decision");
        return 1;
    }
    if (sc_choice_same(n, cur, cand)) {
        h->pend_wins = 0;
        snprintf(note, notelen, "kept %s", sc_sel_mode_name(cur->mode));
        return 0;
    }
    /* At once: out of an exact mode, where every rank waits for the new
     * straggler at every step; and from quorum to groups when a straggler
     * became persistent.  Smaller quorums and more children wait for their
     * two wins: the rounds already go on without the straggler, and on a
     * busy machine "onsets" come with every scheduler hiccup (switching at
     * each made the selector churn, and every swap costs a round or two). */
    int cur_exact = cur->mode == SC_MODE_SYNC || cur->mode == SC_MODE_HIER;
    int tolerant = cand->mode == SC_MODE_QUORUM || cand->mode == SC_MODE_GROUPS;
    if ((onset && cur_exact && tolerant) ||
        ((onset & SC_ONSET_PERSISTENT) && cur->mode == SC_MODE_QUORUM && cand->mode == SC_MODE_GROUPS)) {
        h->pend_wins = 0;
        snprintf(note, notelen, "straggler onset: switched at once");
        return 1;
    }
    if (h->pend_wins > 0 && same_mode_children_k(n, h->pend_mode, h->pend_k, h->pend_child, cand->mode,
                                                 cand->k, cand->child)) {
        h->pend_wins++;
    } else {
        h->pend_wins = 1;
        memcpy(h->pend_child, cand->child, (size_t)n);
    }
    h->pend_mode = cand->mode;
    h->pend_k = cand->k;
    if (h->pend_wins < SC_HYSTERESIS_WINS) {
        snprintf(note, notelen, "held %s: %s k=%d won %d of %d decisions", sc_sel_mode_name(cur->mode),
                 sc_sel_mode_name(cand->mode), cand->k, h->pend_wins, SC_HYSTERESIS_WINS);
        return 0;
    }
    /* Back to sync because the spread is small (exact, the safe fallback)
     * needs no gain; anything chosen on the objective must pay for the swap. */
    if (use_margin && !(cand->mode == SC_MODE_SYNC && cand->by_rule) &&
        !(cand->objective <= (1.0 - SC_HYSTERESIS_MARGIN) * cur->objective)) {
        snprintf(note, notelen, "held %s: %s k=%d gains under %.0f%% (%.4g vs %.4g)",
                 sc_sel_mode_name(cur->mode), sc_sel_mode_name(cand->mode), cand->k,
                 100.0 * SC_HYSTERESIS_MARGIN, cand->objective, cur->objective);
        return 0;
    }
    h->pend_wins = 0;
    snprintf(note, notelen, "%s won %d decisions in a row", sc_sel_mode_name(cand->mode), SC_HYSTERESIS_WINS);
    return 1;
}
