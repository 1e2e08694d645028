/* Synthetic telemetry for the selector's unit tests: a small simulator of
 * a data-parallel job that produces the per-rank feature rows the monitor
 * would, for a given mode, with per-rank slowdowns of a chosen cause, and a
 * driver that runs the plugin's loop (observe every step, decide at epoch
 * ends and when urgent, apply the decision from the next step). */
#ifndef UNIT_SELECTOR_SYNTH_H
#define UNIT_SELECTOR_SYNTH_H

#include <stdint.h>

#include "sc_features.h"
#include "selector.h"

#define SYNTH_MAX_RANKS 512
#define SYNTH_MAX_CHANGES 256

typedef struct synth_rank {
    double slow;        /* compute time multiplier (1: normal) */
    double runq_share;  /* share of its compute time spent on the run queue (cpu contention) */
    int sleeps;         /* slow from sleeping (CPU idle), not from computing */
    double link_util;   /* NIC load / link speed */
    double ib_wait_ps;  /* InfiniBand port_xmit_wait per second */
    double xfer_extra;  /* extra own transfer time, seconds (slow link) */
    double link_spb;    /* the link probe's seconds per byte (0: no probe yet) */
    int member_only;    /* slow (slow, runq_share) only while a ring member: as a child it looks healthy */
    double throttled;   /* share of the wall time its cgroup's CPU quota throttles it (throttled_s) */
    double engine_runq; /* run-queue delay of its engine thread, seconds per step (in runq_s only) */
    double hidden;      /* share of its extra compute that a CPU quota throttles inside MPI, where it
                           counts as wait: the phase times understate it, its arrival does not */
} synth_rank;

typedef struct synth {
    int n;
    double compute_s;   /* base compute time per step */
    double comm_s;      /* transfer time per step in exact modes */
    double hier_factor; /* transfer time factor in hier */
    double jitter;      /* lognormal sigma of compute times (0: none) */
    double noise_scale; /* B of the synthetic gradients (per-rank batches); < 0: no norms */
    double round_cost_s; /* what quorum's rounds cost per step over exact transfers (0: nothing) */
    double ring_cost_s;  /* what groups' ring costs per step over exact transfers (0: nothing) */
    double quorum_spike_s;   /* a stall added to every quorum_spike_every-th quorum step (0: none) */
    int quorum_spike_every;
    long quorum_steps;       /* quorum steps so far (for the spikes) */
    int app_runq;        /* rows carry SC_F_APP_RUNQ_S (the application's threads' part of runq_s) */
    int lags;            /* rows carry SC_F_LAG_S (arrival after the earliest rank) in exact modes */
    int paced;           /* a per-step exact loss after the step's calls: every rank waits there, outside
                            the engine's calls (away_s), until the last one arrives */
    synth_rank rank[SYNTH_MAX_RANKS];
    uint64_t rng;
} synth;

/* n ranks, base compute and transfer times; every rank normal. */
void synth_init(synth *s, int n, double compute_s, double comm_s, uint64_t seed);
/* One step's rows (n x SC_NFEAT) under mode, quorum k and parents (NULL: all ring). */
void synth_step(synth *s, sc_mode mode, int k, const int *parent, double *feat);
/* Standard normal deviate from the generator's stream (deterministic). */
double synth_normal(synth *s);

typedef struct driver {
    sc_selector *sel;
    synth syn;
    sc_decision d;
    int parent[SYNTH_MAX_RANKS];
    double feat[SYNTH_MAX_RANKS * SC_NFEAT];
    long step;
    int epoch;
    int first_decision;     /* > 0: no decision before this step (the plugin's first epoch) */
    int decides;            /* decisions taken */
    int changes;            /* decisions that changed something */
    long change_step[SYNTH_MAX_CHANGES];
    sc_mode change_mode[SYNTH_MAX_CHANGES];
    int change_k[SYNTH_MAX_CHANGES];
    char change_reason[SYNTH_MAX_CHANGES][160];
} driver;

/* Creates the selector (kind, n, epoch, everything else default) and the
 * simulator.  Returns 0, or -1 (message printed). */
int driver_init(driver *dr, int kind, int n, int epoch, const char *model_path, uint64_t seed);
/* As driver_init with a full configuration. */
int driver_init_cfg(driver *dr, const sc_selector_config *cfg, uint64_t seed);
/* Runs `steps` steps; urgent: also decide at once when the selector asks.
 * Returns the number of changes during the run. */
int driver_run(driver *dr, long steps, int urgent);
void driver_free(driver *dr);
/* First change at or after step `from` (index into change_*), or -1. */
int driver_change_after(const driver *dr, long from);

#endif
