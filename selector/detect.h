/* Per-rank straggler detection and cause.
 *
 * Detection runs every step on each rank's own step time t_i (compute plus
 * the rank's own transfer time, see sc_detect_own_times) relative to the
 * median of the ring's non-straggling members: r_i = log(t_i / median).
 * A CUSUM change-point test on r_i, scaled by the cross-rank noise level,
 * detects the onset of a slowdown of at least SC_STRAGGLER_RATIO (the
 * paper's 1.2x) within a step or two for a clear straggler, and a second
 * CUSUM against the episode's own level detects its end.  Unlike a fixed
 * window average, the test reacts as soon as the evidence is sufficient and
 * estimates the step where the change happened.
 *
 * Classification runs at each decision on the window's per-rank means and
 * says why a slow rank is slow:
 *   cpu      run-queue delay share well above its peers', throttled by its
 *            cgroup's CPU quota for a fifth of the wall time or more (its
 *            peers not), or CPU seconds per wall second low with many
 *            involuntary context switches;
 *   network  link near its speed, InfiniBand waits far above its peers', its
 *            link probe far slower than its peers' (SC_F_LINK_SPB: in an exact
 *            collective every rank waits alike, so only a probe tells whose
 *            link is slow), or own transfer time up while compute is unchanged;
 *   work     more compute time while the CPU is fully used;
 *   none     not slow, or slow for no visible reason (e.g. sleeping).
 * It also tells whether the network is the bottleneck for the whole job,
 * and each rank's CPU and NIC headroom for placement.  Plain C, no MPI. */
#ifndef STARCOLL_SELECTOR_DETECT_H
#define STARCOLL_SELECTOR_DETECT_H

#include "sc_features.h"

#define SC_STRAGGLER_RATIO 1.2 /* slower than this times the median: a straggler */

typedef struct sc_rank_status {
    /* Change-point test, updated every step. */
    int straggler;     /* 1 while the test holds the rank slow */
    long onset_step;   /* estimated first slow step of the current or last episode, -1 none */
    long detect_step;  /* step at which that onset was detected, -1 none */
    long end_step;     /* estimated first normal step after the last episode, -1 none */
    long end_detect_step; /* step at which that end was detected, -1 none */
    /* Classification over the last window (sc_detect_classify). */
    int persistent;    /* slow for at least the persistence span */
    int net_pressure;  /* link near its speed, InfiniBand waits or probe far above its peers' */
    int probe_slow;    /* its link probe far slower than its peers', and that matters to the step */
    int slow_link;     /* net_pressure on this rank only (not the majority), held persistently */
    int starved;       /* run-queue share far above its peers' where transfers matter, held persistently */
    int runq_far;      /* run-queue share (every thread's) far above its peers' in this window (STARVED_EXCESS, RUNQ_FACTOR) */
    int cpu_short;     /* given a share of the CPU it waits for far below its peers', on a node where it queues as they do (SC_GIVEN_FACTOR) */
    sc_cause cause;    /* why it is slow; SC_CAUSE_NONE when not slow or unexplained */
    double slowdown;   /* own step time / median over the ring's non-stragglers */
    double own_s, compute_s, xfer_s, step_s; /* window means, seconds */
    /* Run-queue delay of the application's threads (SC_F_APP_RUNQ_S; of
     * every thread where no rank reports that, as traces from before it):
     * what stretches its compute.  Every thread's, the engine's included,
     * is runq_all_share: a rank whose compute sleeps shows starvation
     * there only, and a rank late for its rounds queues there too. */
    double runq_share;   /* per wall second */
    double runq_all_share; /* every thread's, per wall second */
    double throttled_share; /* time its cgroup's CPU quota throttled it, per wall second */
    double runq_s;       /* per step, seconds (summed over threads, not capped) */
    double cpu_per_wall; /* CPU seconds per wall second */
    double cpu_given;    /* CPU seconds per runnable second (CPU plus the application threads' run-queue delay); 0 unknown */
    double nvcsw_rate;   /* involuntary context switches per second */
    double link_util;    /* max(tx, rx) / link speed; 0 when the speed is unknown */
    double speed_bps;    /* link speed, bytes per second; 0 when unknown */
    double ib_wait_ps;   /* InfiniBand port_xmit_wait increments per second */
    double link_s;       /* the step's bytes at the latest link probe's rate, seconds; 0 before one */
    double link_ratio;   /* link_s over the peers' median; 0 when unknown */
    double load_bps;     /* bytes reduced per second: what a parent takes on for it */
    double cpu_headroom; /* [0, 1]: 1 = idle CPU to spare */
    double nic_headroom; /* [0, 1]: 1 = idle link (or speed unknown) */
} sc_rank_status;

/* Given at most this times the median share of the CPU while runnable
 * (CPU time over CPU time plus the application threads' run-queue delay):
 * far less of the CPU than its peers (detect.c's cpu_short, and the first
 * coordinator's placement). */
#define SC_GIVEN_FACTOR 0.6

/* Short of CPU by its share while runnable, though not queueing far longer
 * than its peers: what to name as its signal. */
static inline int sc_rank_short_by_share(const sc_rank_status *st)
{
    return st->cpu_short && !st->runq_far;
}

/* Short of a resource the rounds need, as the monitor measures it: CPU
 * (run-queue share far above its peers', or far less of the CPU given it
 * while runnable) or its link (the probe). */
static inline int sc_rank_short_of_resource(const sc_rank_status *st)
{
    return st->starved || st->runq_far || st->cpu_short || st->probe_slow;
}

typedef struct sc_detect_summary {
    int nstragglers;  /* ranks held slow by the change-point test */
    int nslow_links;  /* ranks with slow_link set */
    int nstarved;     /* ranks with starved set */
    int nlink_near;   /* ranks whose link runs near its speed */
    int ib_growing;   /* the median InfiniBand wait rate at least doubled */
    int net_bound;    /* the network is the bottleneck of the job */
    double comm_share;  /* median share of transfer time in the own step time */
    double med_own, med_compute, med_xfer; /* medians over the ring's non-stragglers */
    int worst;        /* rank with the largest slowdown */
} sc_detect_summary;

typedef struct sc_detect sc_detect;

/* nranks >= 1; persist_steps >= 1: how long a rank must stay slow to be
 * persistent.  NULL when out of memory or arguments are invalid. */
sc_detect *sc_detect_new(int nranks, int persist_steps);
void sc_detect_free(sc_detect *d);

/* Own step time and own transfer time per rank from one step's feature rows
 * (nranks x SC_NFEAT, values already sanitised to finite and >= 0).  A ring
 * member waits inside the library for the ranks a round waits for (the k-th
 * fastest compute among ring members: k = ring size for exact modes) and
 * for its own transfer, so xfer_i = wait_i - away_i - max(0, c_k - compute_i),
 * clamped at 0, where away_i (SC_F_AWAY_S) is the time blocked outside the
 * engine's calls (an exact loss, MPI_Waitall): waiting for others too;
 * in a quorum (k below the ring size) every member's xfer is the median
 * member's, since a late member waits in the engine for a later round, or
 * skips the round's transfer that sync would make it pay; a child's wait
 * is all its own exchange with its parent.
 * own_i = compute_i + xfer_i.  Where the monitor gives no compute and wait
 * split, own_i = step_s.  ring NULL: all ranks; k <= 0: the ring size.
 * scratch holds nranks doubles. */
void sc_detect_own_times(const double *feat, int nranks, const unsigned char *ring, int k,
                         double *scratch, double *own, double *xfer);

/* Feeds one step's own times; ring[i] = 1 for ring members (NULL: all
 * ranks).  Returns the number of onsets and ends detected at this step (a
 * rank released as a false alarm, showing no slowdown in the steps after
 * its onset, ends quietly). */
int sc_detect_step(sc_detect *d, long step, const double *own, const unsigned char *ring);

/* The own times' scale changed (the mode did: a straggler read 3.2x by
 * arrival in sync reads 1.6x in a quorum, where the others' transfer is
 * theirs): a held rank's episode level restarts from the next steps, so
 * the end test does not take the new scale for a recovery (it ended a
 * persistent straggler one step after entering quorum, and an urgent
 * decision followed). */
void sc_detect_rebase(sc_detect *d);

/* Classifies the ranks over a window ending at last_step: mean_feat holds
 * per-rank window means (nranks x SC_NFEAT), mean_own and mean_xfer the
 * window means of sc_detect_own_times; window_steps the window's length.
 * Fills the classification fields and *sum. */
void sc_detect_classify(sc_detect *d, long last_step, int window_steps, const double *mean_feat,
                        const double *mean_own, const double *mean_xfer,
                        const unsigned char *ring, sc_detect_summary *sum);

/* Per-rank status, nranks entries, owned by d. */
const sc_rank_status *sc_detect_status(const sc_detect *d);

/* Steps a condition must hold to be persistent in the classifications
 * that follow (at least 1; sc_detect_new's persist_steps until changed).
 * The selector shortens it for its first decision, which sees every step
 * since the start. */
void sc_detect_set_persist(sc_detect *d, int persist_steps);

/* While on, sc_detect_classify is a look only: the statuses it fills say
 * what a decision would see now, and the steps where held conditions
 * (starvation, a slow link) began are left for the decisions. */
void sc_detect_peek(sc_detect *d, int on);
/* Cross-rank noise level of log step times (robust, smoothed). */
double sc_detect_noise(const sc_detect *d);

#endif
