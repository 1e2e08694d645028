#include "pattern.h"
#include <string.h>

static int same(sc_sig a, sc_sig b)
{
    return a.count == b.count && a.dkind == b.dkind && a.sendbuf == b.sendbuf && a.recvbuf == b.recvbuf;
}

void sc_pattern_init(sc_pattern *p)
{
    memset(p, 0, sizeof *p);
}

/* Smallest period L that the recent calls repeat at least three times,
 * over enough calls that a run of equal signatures inside a longer step
 * (A A A B) is not mistaken for a step of one.  Only the recent calls are
 * checked, so a few one-off calls before the training loop do not matter. */
static int find_period(const sc_pattern *p)
{
    for (int L = 1; L <= SC_PATTERN_MAX; L++) {
        int window = 3 * L > SC_PATTERN_MIN_CALLS ? 3 * L : SC_PATTERN_MIN_CALLS;
        if (window > p->nhist) break;
        int ok = 1;
        for (int i = p->nhist - window + L; i < p->nhist && ok; i++) ok = same(p->hist[i], p->hist[i - L]);
        if (ok) return L;
    }
    return 0;
}

static void start_learning(sc_pattern *p, sc_sig sig)
{
    p->learned = 0;
    p->nhist = 0;
    p->miss_streak = 0;
    p->hist[p->nhist++] = sig;
}

int sc_pattern_next(sc_pattern *p, sc_sig sig)
{
    if (!p->learned) {
        if (p->nhist == SC_PATTERN_HIST) {   /* keep the recent half and look on */
            memmove(p->hist, p->hist + SC_PATTERN_HIST / 2, sizeof(sc_sig) * (SC_PATTERN_HIST / 2));
            p->nhist = SC_PATTERN_HIST / 2;
        }
        p->hist[p->nhist++] = sig;
        int L = find_period(p);
        if (L) {
            p->learned = 1;
            p->len = L;
            p->cursor = 0;
            /* the next call repeats the call L back: slot 0 */
            memcpy(p->pat, p->hist + p->nhist - L, sizeof(sc_sig) * (size_t)L);
        }
        return SC_PAT_LEARNING;
    }
    if (same(sig, p->pat[p->cursor])) {
        int slot = p->cursor;
        p->cursor = (p->cursor + 1) % p->len;
        p->miss_streak = 0;
        return slot;
    }
    /* Off the pattern: one stray call runs exact and the step goes on; a
     * whole step of strays means the pattern changed. */
    if (++p->miss_streak > p->len) {
        p->relearns++;
        start_learning(p, sig);
        return SC_PAT_RELEARN;
    }
    return SC_PAT_MISMATCH;
}
