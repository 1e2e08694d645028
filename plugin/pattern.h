/* The per-step pattern of eligible calls on a communicator (DESIGN.md,
 * "Tolerant semantics"): learned from call signatures during the first
 * steps, which run exact; afterwards each call maps to its slot.  Pure C:
 * every rank sees the same signatures, so every rank learns the same
 * pattern at the same call. */
#ifndef STARCOLL_PATTERN_H
#define STARCOLL_PATTERN_H

#define SC_PATTERN_MAX 64     /* longest step pattern learned (slots) */
#define SC_PATTERN_HIST 256   /* calls remembered while learning */
#define SC_PATTERN_MIN_CALLS 12  /* evidence needed before trusting a short period */

/* A call's signature: its shape, and its buffers, which tell apart two
 * tensors of the same shape in one step (training codes keep a buffer per
 * tensor).  Calls whose buffers move every step never show a period, and
 * stay exact. */
typedef struct sc_sig {
    long count;
    int dkind;
    const void *sendbuf, *recvbuf;
} sc_sig;

typedef struct sc_pattern {
    int learned;
    int len;                  /* L, slots per step */
    int cursor;               /* slot the next call should be */
    int miss_streak;          /* consecutive calls off the pattern */
    long relearns;
    int nhist;
    sc_sig hist[SC_PATTERN_HIST];
    sc_sig pat[SC_PATTERN_MAX];
} sc_pattern;

enum { SC_PAT_LEARNING = -1, SC_PAT_MISMATCH = -2, SC_PAT_RELEARN = -3 };

void sc_pattern_init(sc_pattern *p);
/* Map one eligible call to its slot (>= 0).  Negative: run this call exact;
 * SC_PAT_RELEARN also says the learned pattern was dropped (the caller
 * drains the old slots) and learning starts again with this call. */
int sc_pattern_next(sc_pattern *p, sc_sig sig);
#endif
