/* Which MPI_Allreduce calls starcoll may reshape (DESIGN.md, "Which calls
 * are touched").  The decision itself is pure; interpose.c feeds it what it
 * learned from the MPI handles. */
#ifndef STARCOLL_ELIGIBILITY_H
#define STARCOLL_ELIGIBILITY_H
#include <stddef.h>

typedef enum sc_dkind { SC_DK_OTHER = 0, SC_DK_FLOAT, SC_DK_DOUBLE } sc_dkind;

typedef enum sc_elig {
    SC_ELIG_OK = 0,
    SC_ELIG_NOT_SUM,        /* op is not MPI_SUM */
    SC_ELIG_DATATYPE,       /* not MPI_FLOAT / MPI_DOUBLE */
    SC_ELIG_INTERCOMM,      /* intercommunicator */
    SC_ELIG_COMM_SIZE,      /* fewer than 2 ranks */
    SC_ELIG_COUNT,          /* count <= 0 */
    SC_ELIG_SMALL,          /* below STARCOLL_MIN_BYTES */
    SC_ELIG_ALIAS,          /* sendbuf == recvbuf (erroneous in MPI: let MPI say so) */
    SC_ELIG_NAMED,          /* its shape is named in STARCOLL_EXACT (a metric vector, say) */
    SC_ELIG_THREAD,         /* two threads call on one communicator at once (decided in interpose.c) */
    SC_ELIG_NREASONS
} sc_elig;
#define SC_ELIG_NREASONS_MAX 16   /* room kept in the report's counters */

typedef struct sc_call_shape {
    int op_is_sum;
    sc_dkind dkind;
    int is_inter;
    int comm_size;
    long count;
    int aliased;
} sc_call_shape;

/* STARCOLL_EXACT: shapes whose calls stay exact whatever their size, for
 * values over the size floor that are no gradient (a confusion matrix, a
 * per-class count, batch-norm statistics): the size floor alone cannot
 * tell them from a gradient, and a tolerant sum would approximate them. */
#define SC_EXACT_MAX 16
typedef struct sc_exact_list {
    int n;
    long count[SC_EXACT_MAX];
    sc_dkind dkind[SC_EXACT_MAX];   /* SC_DK_OTHER: float or double */
} sc_exact_list;

sc_elig sc_eligibility(const sc_call_shape *c, size_t min_bytes, const sc_exact_list *exact);
size_t sc_dkind_size(sc_dkind k);
const char *sc_elig_reason(sc_elig e);
#endif
