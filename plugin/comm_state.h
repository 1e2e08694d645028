/* Per-communicator state, cached on the user's communicator with an
 * attribute keyval so it is freed when the user frees the communicator. */
#ifndef STARCOLL_COMM_STATE_H
#define STARCOLL_COMM_STATE_H
#include <mpi.h>
#include "runtime.h"
#include "identity.h"
#include "engine.h"
#include "mode_hier.h"
#include "nccl.h"
#include "weights_probe.h"

typedef struct sc_comm {
    MPI_Comm comm;
    int size, rank, is_inter;
    sc_stats *row;              /* report row these calls count into */
    char label[24];             /* its name in lines and the report (sc_report_label) */
    long eligible_calls;
    sc_hier hier;               /* hier: built once on first use */
    /* tolerant modes: which tensor each call is (identity.h), agreed on
     * over agree_comm, a private duplicate made at the first use */
    sc_identity *id;
    MPI_Comm agree_comm;
    sc_wprobe *wprobe;          /* while a step is learned: its values, to tell averaged weights (weights_probe.h) */
    void *lockstep_buf;         /* the poisoned buffer of an off-pattern lockstep call */
    size_t lockstep_bytes;
    sc_engine *engine;
    int engine_failed;
    int two_models;             /* another model's step came in turn on it: no rounds again (keep_exact_two_models) */
    int named_exact;            /* named in STARCOLL_EXACT_COMMS, crossed (sc_comm_crossed) or averaging: no identity, no rounds */
    double last_exit;           /* when the last eligible call returned (compute time in between) */
    double last_any_exit;       /* when the last MPI_Allreduce on it returned */
    double learn_compute_s;     /* compute time between the calls that learned the pattern: places the coordinator */
    double learn_throttled0;    /* the cgroup's throttled time at the first learning call (< 0: none yet) */
    double learn_cpu0, learn_runq0; /* the learning thread's CPU and run-queue seconds then (< 0: unknown) */
    struct sc_carry *carry;     /* results drained from a dropped pattern, owed to the same tensor later */
    int said_reject;            /* this rank said why a call failed on this communicator */
    char why_exact[400];        /* why the agreed pattern stays exact, "" when it does not */
    sc_nccl nccl;               /* sync and hier on device buffers: NCCL, decided at the first eligible call */
    uint64_t staged_where;      /* a call on device buffers staged to host copies: its device buffers' hint (identity.h), else 0 */
    /* A call under way (threads: two at once on one communicator is
     * erroneous MPI; the second passes through, said once). */
    int busy;
    struct sc_comm *next_live;
} sc_comm;

/* Results of a pattern that was dropped (the calls changed), one buffer
 * per slot of that pattern, owed to the same tensors when a pattern of
 * the same shapes comes back (identity.h: its slots may start elsewhere). */
typedef struct sc_carry {
    int nslots;
    long lineage;               /* the pattern's (sc_identity_lineage) */
    int rot;
    int marker_slot;            /* the old pattern's slot after its per-step call, -1 none (sc_identity_marker_slot) */
    uint64_t marker_shape;      /* that call's shape */
    uint64_t *shapes;           /* the old pattern's slot shapes */
    uint64_t *where;            /* per old slot, this rank's buffer hint at its last call (0 unknown) */
    int kept;                   /* this rank kept a buffer per tensor then: where names the tensor */
    void **buf;                 /* per old slot, NULL: nothing owed */
    size_t *bytes;
    int *to;                    /* per old slot: the slot of the current pattern, -1 not mapped */
    struct sc_carry *next;
} sc_carry;

/* Stop cs's engine (collective over cs->comm), folding its figures into
 * the report row; keep_leftovers: results not yet returned become carries. */
void sc_comm_stop_engine(sc_comm *cs, int keep_leftovers);
/* The same at a call every rank of cs makes at this same point, keeping
 * the leftovers, with cs's other engines told this rank is away on it
 * meanwhile (it may wait there for the slowest rank). */
void sc_comm_stop_engine_here(sc_comm *cs);
/* A new pattern was agreed: map the carries onto its slots. */
void sc_comm_map_carries(sc_comm *cs);
/* Add what is owed to slot `slot` of the current pattern into recvbuf. */
void sc_comm_pay_carry(sc_comm *cs, int slot, void *recvbuf, long count, int dkind);
/* A call while a pattern is learned, in buffer `where` (sc_where_hash)
 * with shape `shape`: add what is owed to the tensor this rank kept in
 * that buffer, where it kept a buffer per tensor (sc_carry.kept).  Its
 * next call, as a late result rides in the next step's rounds. */
void sc_comm_pay_carry_kept(sc_comm *cs, uint64_t where, uint64_t shape, void *recvbuf, long count, int dkind);
/* 1 when something is owed to slot `slot` */
int sc_comm_owes_carry(const sc_comm *cs, int slot);
/* Results still owed, counted into each communicator's report row. */
void sc_comm_count_carries(void);

int sc_comm_keyval_init(void);
/* State for comm, created on first use; NULL when it cannot be had (then pass through). */
sc_comm *sc_comm_get(MPI_Comm comm);
/* MPI_Finalize: leave every tolerant engine (returns when all ranks left). */
void sc_comm_stop_all_engines(void);
/* A thread of this rank blocks in a call outside the engines' rounds
 * (away=1) or is back (away=0): every engine but `except` is told; what:
 * SC_AWAY_*.  Whichever thread blocks: with calls from several threads,
 * a rank blocked on one communicator may be what another one's rounds
 * wait for (its next call there may come only after); a thread still
 * making calls there is known by its own deposits. */
void sc_comm_away(sc_engine *except, int away, int what);
/* Another communicator of this rank that has had eligible calls and whose
 * group neither holds cs's nor is held by it (a tensor-parallel group
 * beside its data-parallel replicas): 1, its label in other.  Local (group
 * arithmetic only): this rank's view, to be agreed on. */
int sc_comm_crossed(const sc_comm *cs, char *other, size_t len);
/* Number of running engines in this process. */
int sc_comm_engines(void);
/* cs's engine is e, just started (NULL: none started; nothing changes). */
void sc_comm_set_engine(sc_comm *cs, sc_engine *e);
/* The stall sentinel's look at every running engine (sc_engine_look), at
 * most max; returns how many. */
int sc_comm_look_engines(double now, sc_engine_view *views, int max);
/* The same, 0 before MPI_Init or after MPI_Finalize. */
int sc_comm_engines_here(void);
/* A call on cs starts (1; 0: another thread's call on cs is under way)
 * and ends. */
int sc_comm_enter(sc_comm *cs);

void sc_comm_leave(sc_comm *cs);
/* The application thread found requests not complete in a test (on=1:
 * it polls them, as overlapping codes do, and deposits nothing until
 * they are: the engines treat it as away) or is back (on=0: a test found
 * them complete, or it makes a call of its own). */
void sc_comm_polling(int on);
/* MPI_Pcontrol(2) on every communicator. */
void sc_comm_flush_all(void);
/* Free every sub-communicator and the keyval; before PMPI_Finalize. */
void sc_comm_finalize(void);
#endif
