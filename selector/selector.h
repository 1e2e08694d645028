/* The selector's front end, called by the plugin on the coordinating rank.
 * Pure C, no MPI, no clocks, no randomness: the same sequence of calls
 * gives the same decisions, so a recorded trace replays exactly.
 *
 * Use:
 *     sc_selector *s = sc_selector_new(&cfg, msg, sizeof msg);
 *     if (msg[0]) print msg (one line);          // e.g. a bad model file
 *     every step:  sc_selector_observe(s, step, mode_in_force, feat);
 *     every cfg.epoch_steps steps, or at once when sc_selector_urgent(s):
 *         if (sc_selector_decide(s, step, &d)) apply d from an agreed round;
 *     sc_selector_free(s);
 *
 * Each decide looks at the steps since the latest change point (a straggler
 * appearing or going away), at most two epochs back.  The decision is the
 * heuristic's (heuristic.h) or the learned model's (learned.h), passed
 * through hysteresis (hysteresis.h) and placement (placement.h).
 *
 * Feature values that are negative or not finite are read as 0 (unknown). */
#ifndef STARCOLL_SELECTOR_SELECTOR_H
#define STARCOLL_SELECTOR_SELECTOR_H

#include <stddef.h>

#include "detect.h"
#include "sc_features.h"

/* Values of sc_selector_config.kind (the same numbers as STARCOLL_SELECTOR's
 * heuristic and learned in the plugin's policy). */
enum { SC_KIND_HEURISTIC = 0, SC_KIND_LEARNED = 1 };

typedef struct sc_selector_config {
    int kind;               /* SC_KIND_HEURISTIC (0) or SC_KIND_LEARNED (1) */
    int nranks;             /* ranks of the communicator, >= 1 */
    int epoch_steps;        /* steps between regular decisions, >= 1 */
    int quorum_fixed;       /* > 0: quorum rounds wait for this many ranks; 0: the selector chooses */
    int staleness;          /* STARCOLL_STALENESS; 0 rules quorum out */
    int allowed_modes_mask; /* bit (1 << sc_mode) per mode the selector may pick; 0: all; sync always */
    const char *model_path; /* learned: model file to start from (NULL: none); not kept */
    int coordinator_fixed;  /* 1: the caller placed the coordinator at `coordinator` and never moves it
                               (it is never made a child); 0: the selector places it */
    int coordinator;
} sc_selector_config;

typedef struct sc_selector sc_selector;

/* Creates a selector.  msg (may be NULL) receives one line when something
 * needs saying, else "".  A learned selector whose model file is missing or
 * bad says so and runs the heuristic.  Returns NULL (with msg) only on an
 * invalid configuration or when out of memory. */
sc_selector *sc_selector_new(const sc_selector_config *cfg, char *msg, size_t msglen);

/* Feeds one step: feat is nranks x SC_NFEAT row-major (the coordinator
 * gathers it); current_mode the mode in force during that step. */
void sc_selector_observe(sc_selector *s, long step, sc_mode current_mode, const double *feat);

/* Decides at an epoch boundary (or when urgent).  Fills *out: mode,
 * quorum_k (ranks a quorum round waits for; the ring size in groups; nranks
 * in exact modes), coordinator, nranks, reason, and parent[0..nranks) when
 * out->parent is not NULL (-1 for ring members).  Returns 1 when the
 * decision (mode, quorum_k, coordinator or a parent) differs from the one in
 * force, 0 otherwise.  The decision in force before the first change is
 * sync on all ranks with coordinator 0; it is also what decide returns
 * before any step was observed. */
int sc_selector_decide(sc_selector *s, long step, sc_decision *out);

/* Before any step is observed: ranks given at most SC_GIVEN_FACTOR
 * (detect.h) of their peers' median share of the CPU while the step's
 * pattern was learned (given[r], <= 0 unknown; sc_short_while_learning)
 * become children of the ring members with the least load then (load[r]),
 * dealt round-robin: the decision in force is then groups, on trial, and
 * *out says so.  Returns 1 when it made children (at 4 ranks or more, two
 * members left at least), 0 when the decision in force stays sync (and
 * on any call after the first, or once a step was observed).  The
 * first decision keeps them or takes them back: every exact step before
 * it would be paid at their pace. */
int sc_selector_start(sc_selector *s, const double *load, const double *given, sc_decision *out);

/* 1 when observe saw a straggler appear or go away since the last decision,
 * so the plugin may decide before the epoch ends. */
int sc_selector_urgent(const sc_selector *s);

/* Before the first decision, from SC_EARLY_STEPS observed steps on: 1 when
 * the steps seen already hold a rank persistently short of its CPU or link,
 * or at least SC_EARLY_SLOWDOWN times slower than its peers in every one of
 * them, so the first decision need not wait for the full first epoch (each
 * exact step of a run that starts with such a rank is paid at its pace).
 * Noise early in a run rarely lasts every step at that size. */
#define SC_EARLY_STEPS 5
#define SC_EARLY_SLOWDOWN 1.5
int sc_selector_early_case(sc_selector *s);

/* Learns from the steps since the last call without deciding (the learned
 * model only; for replaying traces in starcoll-train). */
void sc_selector_learn(sc_selector *s, long step);

/* Writes the learned model (model_file.h).  Returns 0, or -1 with msg. */
int sc_selector_save_model(const sc_selector *s, const char *path, const char *comment, char *msg,
                           size_t msglen);

/* 1 when the learned selector runs (it falls back to the heuristic on a
 * bad model file). */
int sc_selector_is_learned(const sc_selector *s);

/* Per-rank detection and cause as of the last decision (nranks entries). */
const sc_rank_status *sc_selector_ranks(const sc_selector *s);

/* Each rank's own step time at the latest observed step (nranks entries,
 * sc_detect_own_times; by arrival at the collective in exact steps). */
const double *sc_selector_own_times(const sc_selector *s);

/* Smoothed gradient noise scale in per-rank batches; *measured (may be
 * NULL) is 0 while it is still the prior (nranks). */
double sc_selector_noise_scale(const sc_selector *s, int *measured);

/* The last decide's raw candidate (before hysteresis) and a one-line note
 * on what hysteresis did with it ("kept", "held ...", "switched ..."). */
void sc_selector_last_candidate(const sc_selector *s, sc_mode *mode, int *k);
const char *sc_selector_note(const sc_selector *s);

/* One line of the signals behind the last decision, for the report: spread,
 * noise scale, network, and each straggler with slowdown and cause. */
void sc_selector_signals(const sc_selector *s, char *buf, size_t len);

void sc_selector_free(sc_selector *s);

#endif
