/* The heuristic selector: the paper's rule plus grouping of persistent
 * stragglers.
 *
 *   1. Persistent stragglers whose cause is cpu or network (and ranks with a
 *      lone slow link) become children: `groups`, at most half the ranks.
 *   2. Otherwise, when the network is the job's bottleneck and nobody
 *      straggles: `hier`.
 *   3. Otherwise, when the spread of step times is under 5%: `sync` (6% to
 *      leave sync: a dead band against flapping).
 *   4. Otherwise the paper's rule: choose the quorum k in [ceil(n/2), n]
 *      that minimises E[update interval(k)] x iterations(k), where the
 *      interval is the mean k-th order statistic of the ranks' own step
 *      times and iterations(k) is proportional to 1 + B_noise / k (B_noise
 *      in per-rank batches, McCandlish et al. 2018).  k = n is `sync`.
 *      k = 1 (at 2 ranks) only while the change-point test holds a
 *      straggler: a round of one buffer averages nothing.
 * Modes the policy does not allow fall back towards sync. */
#ifndef STARCOLL_SELECTOR_HEURISTIC_H
#define STARCOLL_SELECTOR_HEURISTIC_H

#include "situation.h"

#define SC_SPREAD_SYNC 0.05  /* below this spread of step times: sync */
#define SC_SPREAD_LEAVE 0.06 /* above this spread: leave sync */

/* Relative number of optimisation steps for an effective batch of k ranks. */
double sc_iterations_factor(double noise_scale, int k);

/* Predicted update interval (seconds) of a mode on the situation's window:
 * sync: mean over steps of the slowest own time; quorum: of the k-th
 * smallest; groups: of the slowest ring member (children flagged in child);
 * hier: sync, less half the transfer time when the network is the
 * bottleneck, else a little more (one extra stage). */
double sc_predict_interval(const sc_situation *sit, sc_mode mode, int k, const unsigned char *child);

/* interval x iterations factor (k for quorum, all ranks otherwise). */
double sc_objective(const sc_situation *sit, sc_mode mode, int k, const unsigned char *child);

/* The best quorum k under the policy and its objective. */
int sc_best_quorum(const sc_situation *sit, const sc_limits *pol, double *objective);

/* Ranks to make children: persistent stragglers at least
 * SC_STRAGGLER_RATIO slow over the window (of cause cpu or network unless
 * any_cause), and lone slow links; the slowest first, at most half the
 * ranks.  Fills child[] and returns their count. */
int sc_pick_children(const sc_situation *sit, int any_cause, unsigned char *child);

/* The heuristic's choice; current is the mode in force (for the dead band). */
void sc_heuristic_choose(const sc_situation *sit, const sc_limits *pol, sc_mode current,
                         sc_candidate *out);

/* 1 when the policy allows the mode (sync always). */
int sc_limits_allow(const sc_limits *pol, sc_mode mode);

#endif
