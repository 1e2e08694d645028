/* Per-communicator state, cached on the user's communicator with an
 * attribute keyval so it is freed when the user frees the communicator. */
#ifndef STARCOLL_COMM_STATE_H
#define STARCOLL_COMM_STATE_H
#include <mpi.h>
#include "runtime.h"

typedef struct sc_comm {
    MPI_Comm comm;
    int size, rank, is_inter;
    sc_stats *row;              /* report row these calls count into */
    long eligible_calls;
    /* hier: built once on first use */
    int hier_state;             /* 0 not built, 1 ready, -1 failed (use sync) */
    int hier_single;            /* one group: plain reduction */
    MPI_Comm hier_local;        /* ranks of my group */
    MPI_Comm hier_leaders;      /* one leader per group; MPI_COMM_NULL off leaders */
} sc_comm;

int sc_comm_keyval_init(void);
/* State for comm, created on first use; NULL when it cannot be had (then pass through). */
sc_comm *sc_comm_get(MPI_Comm comm);
/* Free every sub-communicator and the keyval; before PMPI_Finalize. */
void sc_comm_finalize(void);
#endif
