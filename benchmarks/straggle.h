/* Straggler emulation shared by the benchmarks: a parsed spec says which
 * rank sleeps how long at which step.  Plain C, no MPI, no global state, and
 * deterministic: the delay of any rank at any step is a pure function of the
 * spec (including its seed), the rank, the world size and the step, so every
 * rank can compute every other rank's delay.
 *
 * Spec grammar:  PATTERN[,key=value...]   or   key=value[,key=value...]
 * (the second form means pattern "fixed").  Patterns and their keys:
 *   none
 *   fixed       [rank=R] ms=M [prob=P]    rank R (default: last) sleeps M at each step
 *                                         with probability P (default 1)
 *   persistent  [rank=R] [factor=F | ms=M] rank R (default: last) is F times slower (default 2)
 *   jitter      [sigma=S] [ms=M]          every rank's step times a lognormal factor
 *                                         (median 1, sigma S, default 0.5); M replaces
 *                                         the step's base time when given
 *   burst       [period=P] [factor=F | ms=M] one rank at a time, rotating every P steps
 *                                         (default 10), is F times slower (default 4)
 *   onset       [rank=R] [start=S] [end=E] [factor=F | ms=M]
 *                                         rank R (default: last) is F times slower
 *                                         (default 2) from step S (default 50) until
 *                                         step E (default: never)
 * Every pattern also accepts seed=N.  ms takes a number of milliseconds or a
 * number with a unit suffix us, ms or s.  rank accepts "last".  "F times
 * slower" means an extra (F-1)*base_s per step; ms=M makes it a fixed M. */
#ifndef STARCOLL_STRAGGLE_H
#define STARCOLL_STRAGGLE_H

#include <stddef.h>

typedef enum straggle_pattern {
    STRAGGLE_NONE = 0,
    STRAGGLE_FIXED,
    STRAGGLE_PERSISTENT,
    STRAGGLE_JITTER,
    STRAGGLE_BURST,
    STRAGGLE_ONSET
} straggle_pattern;

#define STRAGGLE_LAST_RANK (-1)   /* rank value meaning "the last rank" */
#define STRAGGLE_NEVER (-1L)      /* end value meaning "never recovers" */

typedef struct straggle {
    straggle_pattern pattern;
    int rank;                 /* straggling rank, or STRAGGLE_LAST_RANK */
    double delay_s;           /* fixed extra delay in seconds; < 0 when not given */
    double prob;              /* fixed: probability of sleeping at a step */
    double factor;            /* slowdown factor (>= 1) */
    double sigma;             /* jitter: lognormal sigma */
    long period;              /* burst: steps per straggler before rotating */
    long start;               /* onset: first slow step */
    long end;                 /* onset: first recovered step, or STRAGGLE_NEVER */
    unsigned long long seed;  /* RNG seed for prob and jitter */
} straggle;

/* Parse spec (NULL or "" mean none); 0 on success, -1 with a one-line
 * message in err naming the bad part and what is accepted. */
int straggle_parse(const char *spec, straggle *out, char *err, size_t errlen);

/* Check the spec against a world size (a named rank must exist); 0 when it
 * fits, -1 with a one-line message in err otherwise. */
int straggle_check(const straggle *s, int nranks, char *err, size_t errlen);

/* Extra seconds rank `rank` of `nranks` sleeps at step `step` (>= 0; a
 * negative step gives 0), where base_s is the step's normal compute time
 * (may be 0 for microbenchmarks). */
double straggle_delay_s(const straggle *s, int rank, int nranks, long step, double base_s);

/* One line for headers, in the spec grammar, so it can be parsed back.
 * Returns buf. */
const char *straggle_describe(const straggle *s, char *buf, size_t len);

/* Name of a pattern as written in specs. */
const char *straggle_pattern_name(straggle_pattern p);

#endif
