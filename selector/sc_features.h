/* Per-rank, per-step signals and the selector's decision: the contract
 * between monitor/ (which measures), selector/ (which decides) and plugin/
 * (which gathers the features over MPI and applies the decision).
 * Plain C, no MPI.  The feature record is a flat array of doubles so the
 * plugin can gather it with one MPI_Gather of SC_NFEAT doubles. */
#ifndef STARCOLL_FEATURES_H
#define STARCOLL_FEATURES_H

enum sc_feature_index {
    SC_F_STEP_S = 0,      /* wall seconds from one step's first eligible call to the next */
    SC_F_COMPUTE_S,       /* seconds outside the library during the step */
    SC_F_WAIT_S,          /* seconds inside the library during the step */
    SC_F_AWAY_S,          /* the part of SC_F_WAIT_S blocked in MPI outside the engine's calls (an
                             exact loss, a barrier, MPI_Wait*): waiting for the others, not own transfer */
    SC_F_CPU_S,           /* process CPU seconds consumed during the step */
    SC_F_RUNQ_S,          /* run-queue delay (schedstat) accrued during the step */
    SC_F_NVCSW,           /* involuntary context switches during the step */
    SC_F_THROTTLED_S,     /* seconds the process's cgroup CPU quota throttled it during the step */
    SC_F_NIC_TX_BPS,      /* NIC bytes sent per second over the step */
    SC_F_NIC_RX_BPS,      /* NIC bytes received per second over the step */
    SC_F_NIC_SPEED_BPS,   /* link speed in bytes per second, 0 when unknown */
    SC_F_IB_WAIT_PS,      /* InfiniBand port_xmit_wait increments per second */
    SC_F_BYTES,           /* bytes this rank reduced during the step */
    SC_F_GRAD_SQNORM,     /* sum over the step's buffers of ||local buffer||^2 */
    SC_F_SUM_SQNORM,      /* sum over the step's buffers of ||reduced result||^2 */
    SC_F_LINK_SPB,        /* seconds per byte of this rank's latest link probe, 0 before one */
    SC_F_PAPI0,           /* first PAPI counter delta (events in STARCOLL_PAPI_EVENTS order) */
    SC_F_PAPI1,
    SC_F_PAPI2,
    SC_F_PAPI3,
    SC_F_ARRIVE_S,        /* when this rank reached the step's first call, seconds on its own clock
                             (the plugin's mechanism for SC_F_LAG_S; the selector does not read it) */
    SC_F_LAG_S,           /* how much later than the earliest rank this rank reached the step's
                             first call, seconds (the coordinator fills it from SC_F_ARRIVE_S) */
    SC_F_APP_RUNQ_S,      /* the part of SC_F_RUNQ_S that the application's threads accrued (the
                             library's engine threads left out); 0 in traces from before it */
    SC_NFEAT
};

typedef enum sc_mode {
    SC_MODE_SYNC = 0,
    SC_MODE_HIER,
    SC_MODE_QUORUM,
    SC_MODE_GROUPS,
    SC_MODE_AUTO,
    SC_NMODES
} sc_mode;

typedef enum sc_cause {
    SC_CAUSE_NONE = 0,
    SC_CAUSE_CPU,
    SC_CAUSE_NETWORK,
    SC_CAUSE_WORK
} sc_cause;

/* What the selector decides for one communicator.  parent[] has nranks
 * entries owned by the caller: -1 for a ring member, else the rank of the
 * ring member that serves it as parent. */
typedef struct sc_decision {
    sc_mode mode;
    int quorum_k;        /* ranks (or ring members) a quorum round waits for */
    int coordinator;     /* rank that runs the selector and opens rounds */
    int nranks;
    int *parent;
    char reason[160];    /* one line for the report */
} sc_decision;

#endif
