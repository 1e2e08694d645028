/* Process-wide state of the interposition layer. */
#ifndef STARCOLL_RUNTIME_H
#define STARCOLL_RUNTIME_H
#include <mpi.h>
#include <pthread.h>
#include "policy.h"
#include "eligibility.h"
#include "device.h"

#define SC_REPORT_ROWS SC_COMM_NUMBERS
#define SC_WHY_NO_ENGINE SC_ELIG_NREASONS   /* report rows: communicators by first use; the last row lumps the rest */

/* Counters kept per report row; summed over ranks at MPI_Finalize. */
#define SC_EXACT_SMALL_SEEN 4
typedef struct sc_stats {
    double eligible, passthrough, bytes, time_in;
    double mode_calls[SC_NMODES];
    double size;           /* communicator size (max over instances) */
    double instances;      /* communicators folded into this row on this rank */
    /* which communicator, the same on all its ranks (report.h, sc_report_label):
     * its first-use order at its rank 0 and that rank's world rank */
    double label_ord, leader;
    /* tolerant modes */
    double steps;          /* steps (slot-0 calls) run through the engine */
    double rounds, fresh_sum, late_calls, max_stale, wait_s, child_rounds, fused_calls;
    double exact_in_tolerant, exact_in_tolerant_s;  /* pass-through calls while tolerant, and their time */
    double exact_small[SC_EXACT_SMALL_SEEN];   /* ... the first element counts of sums under STARCOLL_MIN_BYTES
                                                  among them (0: none), for the report's advice */
    double exact_small_calls[SC_EXACT_SMALL_SEEN];   /* ... and the calls of each */
    double compute_s;      /* time outside the library between eligible calls while tolerant */
    double relaxed, min_fresh;
    /* call identity (identity.h): calls exact while the pattern was
     * learned, calls exact because the step's tensors are not told apart,
     * stray calls every rank made off the pattern, relearns, failed calls */
    double learning_calls, ambiguous_calls, stray_calls, relearns, failed;
    double carries_left;   /* results of dropped patterns never delivered (set at MPI_Finalize) */
    double turned;         /* 1 once this rank saw a tensor's buffer turn after learning (sc_identity_turns_since) */
    double misaligned;     /* steps whose calls did not line up with the learned step (sc_identity_misaligned) */
    double moved;          /* 1 once this rank's buffers showed a step's calls moved slots on (sc_identity_moves) */
    double nonblocking;    /* MPI_Iallreduce calls (eligible or not) */
    double overlapped;     /* ... of them completed by the rounds after MPI_Iallreduce returned */
    double copied_bytes;   /* bytes of callers' buffers the engine copied in and out (sc_engine_stats) */
    double polled;         /* rounds and direct-step calls whose collectives were polled (sc_engine_stats) */
    double device_calls, device_bytes, device_s;   /* calls on CUDA device buffers; bytes and seconds staged (device.h) */
    double device_mode[SC_NMODES];   /* ... of them eligible, by the mode that ran them */
    double device_exact;             /* ... of them not eligible: exact through MPI on host copies */
    double device_pinned;            /* ... of them staged in pinned host memory */
    double device_nccl;              /* eligible calls reduced with NCCL (nccl.h), device buffers or not */
    sc_driver_asked host_asked;      /* host pointers the CUDA driver was asked about, and what asking cost */
    double why_not[SC_ELIG_NREASONS_MAX];   /* calls kept exact, by sc_elig reason (0: the policy is sync;
                                               SC_WHY_NO_ENGINE: no rounds on this communicator, row_why says why) */
} sc_stats;

typedef struct sc_runtime {
    int active;                 /* between our MPI_Init and MPI_Finalize */
    int world_rank, world_size, nhosts;
    int spawned;                /* started by MPI_Comm_spawn: its report and traces are named apart */
    int thread_provided;
    sc_policy policy;
    char policy_msgs[8192];     /* bad-value lines, printed by rank 0 after init */
    int pcontrol_exact;         /* MPI_Pcontrol(0) in force */
    int next_ordinal;           /* report row of the next communicator seen */
    sc_stats rows[SC_REPORT_ROWS];
    double t_init;
    int said[32];               /* one-time notices already printed */
    struct sc_monitor *monitor; /* tolerant policies: per-step signals (application thread) */
    char decisions[8192];       /* selector decisions, for the report (this process's coordinators; gathered for the report) */
    char stragglers[16384];     /* straggler table rows of this process's coordinators (report_stragglers.h) */
    char row_why[SC_REPORT_ROWS][400];   /* why a row's agreed pattern stays exact (the same on every rank) */
    int ndecisions;
    int policy_disagreed;       /* the ranks' policies differed: sync everywhere, eligibility may differ by rank */
    int nccl_comms;             /* communicators whose eligible calls go through NCCL */
    char nccl_why[200];         /* why the first communicator that tried does not (the same on its ranks) */
} sc_runtime;

extern sc_runtime sc_rt;

/* What a spawned job's report and traces carry after their names, so they
 * do not take the parents' (report.c, engine.c). */
static inline const char *sc_spawned_suffix(void)
{
    return sc_rt.spawned ? ".spawned" : "";
}

/* One-time notices, each printed once per process (rank 0 unless noted). */
enum { SC_SAY_THREAD = 0, SC_SAY_HIER_FAIL, SC_SAY_COMM_STATE, SC_SAY_ERROR, SC_SAY_ENGINE, SC_SAY_RELEARN, SC_SAY_SELECTOR, SC_SAY_TRACE, SC_SAY_SCHEDULE,
       SC_SAY_TRACE_WRITE, SC_SAY_QUORUM, SC_SAY_NO_FUSION, SC_SAY_DEVICE, SC_SAY_FORTRAN, SC_SAY_OMPIO,
       SC_SAY_TURNS, SC_SAY_CROSSED, SC_SAY_MISALIGNED, SC_SAY_AVERAGED, SC_SAY_MOVED,
       SC_SAY_TWO_MODELS };
void sc_say(int which, int all_ranks, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
