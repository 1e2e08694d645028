#include "polite_wait.h"
#include <time.h>
#include "comm_state.h"

/* Between tests: 20 us, doubling to 1 ms. */
void sc_polite_nap(long *ns)
{
    struct timespec ts = {0, *ns};
    nanosleep(&ts, NULL);
    if (*ns < 1000000) *ns *= 2;
}

void sc_poll_away(int (*over)(void *ctx), void *ctx, int what)
{
    double until = PMPI_Wtime() + SC_SPIN_S;
    do {
        if (over(ctx)) return;
    } while (PMPI_Wtime() < until);
    sc_comm_away(NULL, 1, what);
    for (long ns = SC_NAP_FIRST_NS; !over(ctx); sc_polite_nap(&ns)) continue;
    sc_comm_away(NULL, 0, what);
}

int sc_polite_wait(MPI_Request *req, MPI_Status *status)
{
    for (long ns = SC_NAP_FIRST_NS;; sc_polite_nap(&ns)) {
        int done = 0;
        int rc = PMPI_Test(req, &done, status);
        if (rc != MPI_SUCCESS || done) return rc;
    }
}

int sc_polite_waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    for (long ns = SC_NAP_FIRST_NS;; sc_polite_nap(&ns)) {
        int done = 0;
        int rc = PMPI_Testall(count, reqs, &done, statuses);
        if (rc != MPI_SUCCESS || done) return rc;
    }
}

int sc_polite_waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    for (long ns = SC_NAP_FIRST_NS;; sc_polite_nap(&ns)) {
        int done = 0;
        int rc = PMPI_Testany(count, reqs, index, &done, status);
        if (rc != MPI_SUCCESS || done) return rc;   /* done with MPI_UNDEFINED: none active */
    }
}

int sc_polite_waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    for (long ns = SC_NAP_FIRST_NS;; sc_polite_nap(&ns)) {
        int rc = PMPI_Testsome(incount, reqs, outcount, indices, statuses);
        if (rc != MPI_SUCCESS || *outcount != 0) return rc;   /* some completed, or MPI_UNDEFINED */
    }
}
