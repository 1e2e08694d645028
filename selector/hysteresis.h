/* Hysteresis between successive choices, so the selector does not flap.
 *
 * A candidate that differs from the choice in force replaces it when
 *   - it is the first choice, or
 *   - a straggler appeared or became persistent since the last decision
 *     (onset, SC_ONSET_* bits), the choice in force is exact (sync, hier:
 *     everybody waits for it) and the candidate is tolerant, or one became
 *     persistent and the candidate turns quorum into groups: at once, or
 *   - the same candidate (same mode and children; quorum sizes within
 *     max(1, n/8)) won two decisions in a row and, where the objectives are
 *     comparable (use_margin), is better than the choice in force by at
 *     least SC_HYSTERESIS_MARGIN; a return to sync by rule (the spread is
 *     small: sync is the exact fallback) needs no margin.
 * Quorum sizes within that tolerance count as no change at all. */
#ifndef STARCOLL_SELECTOR_HYSTERESIS_H
#define STARCOLL_SELECTOR_HYSTERESIS_H

#include <stddef.h>

#include "situation.h"

#define SC_HYSTERESIS_MARGIN 0.03 /* relative objective gain a planned change needs */
#define SC_HYSTERESIS_WINS 2      /* consecutive decisions a planned change needs */

typedef struct sc_hysteresis {
    int n;
    int decided;        /* a first choice was taken */
    sc_mode pend_mode;  /* candidate waiting for confirmation */
    int pend_k;
    int pend_wins;      /* 0: nothing pending */
    unsigned char *pend_child;
} sc_hysteresis;

/* Returns 0, or -1 when out of memory. */
int sc_hysteresis_init(sc_hysteresis *h, int nranks);
void sc_hysteresis_free(sc_hysteresis *h);

/* Counts a decision taken outside the rules (an exploration): the next
 * one starts with nothing pending. */
void sc_hysteresis_restart(sc_hysteresis *h);

/* 1 when cand and cur are the same choice (quorum sizes within tolerance). */
int sc_choice_same(int nranks, const sc_candidate *a, const sc_candidate *b);

/* Decides whether cand replaces cur.  cur->objective and cand->objective
 * must be evaluated on the same window.  Writes a one-line note on why
 * (held or switched) into note.  Returns 1 to switch. */
int sc_hysteresis_accept(sc_hysteresis *h, const sc_candidate *cur, const sc_candidate *cand,
                         int onset, int use_margin, char *note, size_t notelen);

#endif
