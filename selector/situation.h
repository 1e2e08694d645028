/* What a decision is taken from, shared by the heuristic and the learned
 * selector: the window's timing, the detection and cause per rank, the
 * noise scale, and the limits the environment sets on the modes. */
#ifndef STARCOLL_SELECTOR_SITUATION_H
#define STARCOLL_SELECTOR_SITUATION_H

#include "detect.h"
#include "sc_features.h"

enum { SC_ONSET_NEW = 1, SC_ONSET_PERSISTENT = 2 };

typedef struct sc_situation {
    int nranks;
    long step;                     /* last step of the window */
    int nrows;                     /* steps in the window (since the latest change point) */
    const double *own_rows;        /* nrows x nranks own step times, oldest first */
    const double *kth_mean;        /* [k-1]: mean over the rows of the k-th smallest own time */
    double spread;                 /* median over the rows of (max - median) / median own time */
    const sc_rank_status *rank;    /* detection and cause per rank */
    const sc_detect_summary *sum;
    double noise_scale;            /* B_noise in per-rank batches (a prior when not measured) */
    int noise_measured;
    int onset;                     /* since the last decision: SC_ONSET_NEW a straggler appeared,
                                      SC_ONSET_PERSISTENT one became persistent, or is persistent,
                                      short of CPU or link, and not a child yet (or'ed) */
    double prior_scale;            /* measured / predicted interval of the mode in force (1: unknown) */
    int keep_member;               /* a rank never made a child (the placed coordinator), -1 none */
} sc_situation;

typedef struct sc_limits {
    unsigned allowed;  /* bit (1u << mode) per allowed sc_mode; sync is always allowed */
    int quorum_fixed;  /* > 0: quorum rounds wait for this many ranks */
    int staleness;     /* rounds a buffer may wait; 0 makes quorum pointless */
} sc_limits;

/* A proposed choice, before hysteresis and placement. */
typedef struct sc_candidate {
    sc_mode mode;
    int k;                 /* ranks a round waits for (ring size for groups) */
    int nchildren;
    unsigned char *child;  /* nranks flags, owned by the caller */
    double interval;       /* predicted update interval, seconds */
    double objective;      /* interval x iterations factor: lower is better */
    int by_rule;           /* 1: a rule picked it (spread under 5%, stragglers, network), not the objective */
    char reason[160];
} sc_candidate;

#endif
