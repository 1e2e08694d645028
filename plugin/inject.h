/* STARCOLL_INJECT: straggler injection inside unchanged applications.
 * Spec: comma list of key=value:
 *   rank=R | rank=R1+R2+... | rank=all | rank=rotate   who sleeps (default: none):
 *                world ranks, on every communicator they call on
 *   delay=TIME   sleep before each eligible call (us, ms or s; plain = ms)
 *   prob=P       probability per call, 0..1 (default 1)
 *   every=N      only every Nth eligible call (default 1)
 *   from=N until=N   eligible-call window (default all)
 *   period=N     with rank=rotate: calls before the slow rank moves on (default 10)
 *   seed=N       random seed for prob (default 1)
 * Pure C: decisions are a deterministic function of (spec, rank, call). */
#ifndef STARCOLL_INJECT_H
#define STARCOLL_INJECT_H
#include <stddef.h>

#define SC_INJECT_MAX_RANKS 16

typedef struct sc_inject {
    int enabled;
    int all;                      /* every rank */
    int rotate;                   /* one rank at a time */
    int nranks;                   /* explicit list length */
    int ranks[SC_INJECT_MAX_RANKS];
    double delay_s;
    double prob;
    long every, from, until, period;
    unsigned long seed;
} sc_inject;

/* 0 on success; -1 with a message naming the bad part. */
int sc_inject_parse(const char *spec, sc_inject *out, char *err, size_t errlen);

/* Seconds world rank `rank` of `size` should sleep before its eligible call
 * number `call` (counted from 0 on the communicator it calls on). */
double sc_inject_delay(const sc_inject *in, int rank, int size, long call);

void sc_inject_describe(const sc_inject *in, char *buf, size_t len);
#endif
