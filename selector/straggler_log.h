/* Who straggled, when, why, and what it cost: the rows of the report's
 * straggler table, kept by the coordinator from what the selector already
 * sees.  Plain C, no MPI.
 *
 * A row is one episode of one rank: from the change-point test's estimated
 * onset (or the first step its link probe was far slower than its peers')
 * to its last slow step (or the end of the run), episodes of a rank at most
 * SC_SLOG_MERGE_GAP steps apart merged.  The slowdown is the rank's own
 * step time over the median of the ranks not held slow, averaged over the
 * episode's slow steps: in exact steps the own time
 * is measured by arrival at the collective (the selector's
 * compute_by_arrival), never by the compute phase, which an exact
 * collective makes look alike on every rank.  The sync cost is what every
 * other rank would have waited for it in sync: the sum over the episode of
 * its own time beyond the median (or its link's extra time for the step's
 * bytes, where that is more).  The cause and the signal that showed it
 * come from the classifications at the decisions while the episode is open
 * (the cause most of them found, the signal of the latest that found it).
 * An episode with fewer than SC_SLOG_MIN_STEPS slow steps, or whose mean
 * slowdown stays under SC_STRAGGLER_RATIO without a far slower link, is a
 * false alarm and is not listed. */
#ifndef STARCOLL_SELECTOR_STRAGGLER_LOG_H
#define STARCOLL_SELECTOR_STRAGGLER_LOG_H

#include <stddef.h>

#include "detect.h"
#include "sc_features.h"

#define SC_SLOG_MERGE_GAP 5   /* steps: a rank slow again this soon continues its episode */
#define SC_SLOG_MIN_STEPS 5   /* steps held slow, at least, to be listed */
#define SC_SLOG_END_STEPS 8   /* slow this close to the end: slow to the end (ranks leave one by one) */
#define SC_SLOG_MAX_ROWS 64   /* episodes kept; later ones are counted, not kept */
#define SC_SLOG_LINK_FAR 4.0  /* a link probe this times the median's: slow behind its link (detect.c's PROBE_FACTOR) */

typedef struct sc_straggler_row {
    int rank;             /* in the communicator */
    long from_step;       /* coordinator steps */
    long to_step;         /* last slow step; -1: still slow when the run ended */
    long slow_steps;      /* steps it was slow */
    double slowdown;      /* mean own step time over the median's */
    double sync_cost_s;   /* seconds each other rank would have waited for it under sync */
    sc_cause cause;       /* SC_CAUSE_NONE: no resource signal explained it */
    char signal[96];      /* the signal that showed the cause, e.g. "throttled 71% of wall by its CPU quota" */
    long child_steps;     /* steps it was a child of a ring member (groups) */
    long quorum_out_steps; /* slow steps under quorum rounds that waited for fewer than all ranks */
} sc_straggler_row;

typedef struct sc_straggler_log sc_straggler_log;

/* nranks >= 1.  NULL when out of memory or nranks is invalid. */
sc_straggler_log *sc_straggler_log_new(int nranks);
void sc_straggler_log_free(sc_straggler_log *l);

/* One coordinator step: the mode in force, the quorum k (ranks a quorum
 * round waits for; <= 0 or nranks: all), parent[] per rank (-1 a ring
 * member; NULL: all members), own[] the step's own times
 * (sc_detect_own_times), feat[] the step's features (nranks x SC_NFEAT;
 * NULL: none; the link probe and bytes are read) and st[] the detector's
 * status after the step.  A step counts for a rank when the test holds it
 * slow and its own time is SC_STRAGGLER_RATIO times the median's or more,
 * or when its link probe is SC_SLOG_LINK_FAR times the median's or more. */
void sc_straggler_log_step(sc_straggler_log *l, long step, sc_mode mode, int k, const int *parent,
                           const double *own, const double *feat, const sc_rank_status *st);

/* A classification ran (a decision): open episodes take its cause and
 * signal where it found one (the cause most classifications found; those
 * of a rank that was a child at the latest step do not vote once a cause
 * is known). */
void sc_straggler_log_classified(sc_straggler_log *l, const sc_rank_status *st);

/* A decision made without a classification found rank's cause (the
 * children from the start: short of CPU while the pattern was learned).
 * Its open episode, and each that opens while it stays a child, takes it
 * where no cause is known yet, as a classification's would be; once a
 * cause is known, a child's classifications do not vote. */
void sc_straggler_log_found(sc_straggler_log *l, int rank, sc_cause cause, const char *signal);

/* Steps observed so far. */
long sc_straggler_log_steps(const sc_straggler_log *l);

/* The listed rows, in order of onset, at most max; returns how many were
 * written.  *dropped (may be NULL) gets the episodes not kept. */
int sc_straggler_log_rows(const sc_straggler_log *l, sc_straggler_row *rows, int max, int *dropped);

/* One line naming the signal behind a status's cause, e.g. "run-queue 40%
 * of wall" or "link probe 3.1x its peers'"; median_compute_s (0: unknown)
 * gives the compute growth for work. */
void sc_straggler_signal(const sc_rank_status *st, double median_compute_s, char *buf, size_t len);

#endif
