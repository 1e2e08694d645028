/* Per-communicator state, cached on the user's communicator with an
 * attribute keyval so it is freed when the user frees the communicator. */
#ifndef STARCOLL_COMM_STATE_H
#define STARCOLL_COMM_STATE_H
#include <mpi.h>
#include "runtime.h"
#include "pattern.h"
#include "engine.h"
#include "mode_hier.h"

typedef struct sc_comm {
    MPI_Comm comm;
    int size, rank, is_inter;
    sc_stats *row;              /* report row these calls count into */
    long eligible_calls;
    sc_hier hier;               /* hier: built once on first use */
    /* tolerant modes */
    sc_pattern pattern;
    sc_engine *engine;
    int engine_failed;
    double last_exit;           /* when the last eligible call returned (compute time in between) */
    double learn_compute_s;     /* compute time between the calls that learned the pattern: places the coordinator */
    struct sc_carry *carry;
    struct sc_comm *next_live;     /* results drained from a dropped pattern, owed to the next call of that shape */
} sc_comm;

typedef struct sc_carry {
    sc_sig sig;
    void *buf;
    struct sc_carry *next;
} sc_carry;

/* Stop cs's engine (collective over cs->comm), folding its figures into
 * the report row; keep_leftovers: results not yet returned become carries. */
void sc_comm_stop_engine(sc_comm *cs, int keep_leftovers);

int sc_comm_keyval_init(void);
/* State for comm, created on first use; NULL when it cannot be had (then pass through). */
sc_comm *sc_comm_get(MPI_Comm comm);
/* MPI_Finalize: leave every tolerant engine (returns when all ranks left). */
void sc_comm_stop_all_engines(void);
/* The main thread blocks in a call outside the engines' rounds (away=1)
 * or is back (away=0): every engine but `except` is told. */
void sc_comm_away(sc_engine *except, int away);
/* Number of running engines in this process. */
int sc_comm_engines(void);
/* The same, 0 when called from a thread other than MPI_Init's. */
int sc_comm_engines_here(void);
/* MPI_Pcontrol(2) on every communicator. */
void sc_comm_flush_all(void);
/* Free every sub-communicator and the keyval; before PMPI_Finalize. */
void sc_comm_finalize(void);
#endif
