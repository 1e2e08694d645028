/* The learned selector: an online model of the update interval of each mode
 * per coarse situation class, with bounded, deterministic exploration.
 *
 * Situation class (SC_LEARNED_CLASSES of them): stragglers (none, transient,
 * persistent) x cause of the worst one (none, cpu, network, work) x network
 * bound (no, yes) x spread of step times (<5%, <15%, <40%, more).
 *
 * Per class and mode the model keeps a running mean of the measured update
 * interval relative to the median compute time (a unitless ratio, so a model
 * trained on one job transfers to another with longer or shorter steps),
 * over at most SC_LEARNED_MEMORY epochs so it follows drift.  A prediction
 * blends that mean with the heuristic's prediction for the window (a prior
 * worth one epoch, scaled by how far the heuristic's prediction is off for
 * the mode in force: sc_situation.prior_scale), and the score of a mode is
 * the predicted ratio times the
 * iterations factor of its effective batch (the noise-scale model), so the
 * model learns step time and the update efficiency comes from the measured
 * gradient noise.
 *
 * Exploration: after SC_LEARNED_WARMUP epochs, at most one epoch in
 * SC_LEARNED_EXPLORE_GAP and never more than SC_LEARNED_EXPLORE_SHARE of all
 * epochs, a mode never tried in the current class (lowest mode first) is run
 * for one epoch.  Deterministic: the same inputs explore the same epochs. */
#ifndef STARCOLL_SELECTOR_LEARNED_H
#define STARCOLL_SELECTOR_LEARNED_H

#include <stddef.h>

#include "situation.h"

#define SC_LEARNED_CLASSES 96
#define SC_LEARNED_MODES 4 /* sync, hier, quorum, groups: the modes a selector may pick */
#define SC_LEARNED_MEMORY 50.0
#define SC_LEARNED_PRIOR_WEIGHT 1.0
#define SC_LEARNED_WARMUP 3
#define SC_LEARNED_EXPLORE_GAP 10
#define SC_LEARNED_EXPLORE_SHARE 0.1

typedef struct sc_learned_cell {
    double count; /* epochs folded in (capped at SC_LEARNED_MEMORY) */
    double mean;  /* mean update interval / median compute time */
} sc_learned_cell;

typedef struct sc_learned {
    sc_learned_cell cell[SC_LEARNED_CLASSES][SC_LEARNED_MODES];
    long epochs;       /* decisions taken */
    long explored;     /* of which explorations */
    long last_explore; /* epoch of the latest exploration, -1 none */
} sc_learned;

void sc_learned_init(sc_learned *m);

/* Class of a situation, in [0, SC_LEARNED_CLASSES). */
int sc_learned_class(const sc_situation *sit);
/* Human-readable class, e.g. "persistent cpu straggler, spread <15%". */
void sc_learned_class_name(int cls, char *buf, size_t len);

/* Folds one epoch's measured interval ratio of `mode` in class cls. */
void sc_learned_add(sc_learned *m, int cls, sc_mode mode, double ratio);
/* Number of epochs learned for (cls, mode). */
double sc_learned_count(const sc_learned *m, int cls, sc_mode mode);

/* Score of a mode on the situation (lower is better): predicted ratio times
 * the iterations factor.  k and child as for sc_objective. */
double sc_learned_score(const sc_learned *m, const sc_situation *sit, int cls, sc_mode mode, int k,
                        const unsigned char *child);

/* The learned choice for the situation.  Sets *explore to 1 when the choice
 * is an exploration.  out->child must hold nranks flags. */
void sc_learned_choose(sc_learned *m, const sc_situation *sit, const sc_limits *pol, sc_mode current,
                       sc_candidate *out, int *explore);

#endif
