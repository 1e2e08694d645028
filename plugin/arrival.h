/* Arrival lag: how much later than the earliest rank each rank reached a
 * step's first call, as the coordinator sees it.
 *
 * Phase times mislead: under a collective every rank's step looks equally
 * long, and a rank held up between its calls (compute stretched, or
 * throttled after it left MPI) may show less time outside the library than
 * it cost.  Its arrival does not.  (A rank under a CPU quota whose compute
 * fits the quota arrives on time and is throttled inside the collective:
 * its cgroup's throttled time finds that one, monitor/cgroup_source.h.)
 * Each rank stamps its arrival on its own
 * clock (SC_F_ARRIVE_S); the coordinator maps the stamps onto its clock
 * with the smallest receive-minus-stamp seen from that rank (the one-way
 * delay filter: clock offset plus the least delay, microseconds), and
 * compares the ranks at the latest step every rank has reported.
 * Plain C, no MPI: the coordinator's engine thread feeds it. */
#ifndef STARCOLL_PLUGIN_ARRIVAL_H
#define STARCOLL_PLUGIN_ARRIVAL_H

/* Steps of stamps kept per rank. */
#define SC_ARRIVAL_STEPS 64
/* Ranks more steps apart than this give no lag: a rank left steps behind
 * by a tolerant mode, in exact rounds that pair deposits by round, not by
 * step, reaches every step late without being slow (after a quorum, every
 * rank behind looked 12x slow and auto went back to quorum on it).  In
 * exact steps run in lockstep the ranks are at most a step or two apart. */
#define SC_ARRIVAL_LEVEL 3

typedef struct sc_arrival sc_arrival;

sc_arrival *sc_arrival_new(int nranks);
void sc_arrival_free(sc_arrival *a);

/* Rank r's next step row: its arrival stamp (its clock; <= 0: none) and
 * when the coordinator received it (the coordinator's clock). */
void sc_arrival_add(sc_arrival *a, int r, double stamp, double received);

/* Fills lag[0..n) (seconds after the earliest rank, >= 0) at the latest
 * step every rank has stamped, and returns that step's index (counted
 * from each rank's first row); -1, lag untouched, when there is none or
 * the ranks are more than SC_ARRIVAL_LEVEL steps apart. */
long sc_arrival_lags(const sc_arrival *a, double *lag);

#endif
