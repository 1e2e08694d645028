/* Fortran's waits, tests and blocking collectives: what blocking.c does
 * for C.  Open MPI's Fortran bindings (mpif.h, `use mpi`, and `use
 * mpi_f08` through ompi_*_f) call PMPI_ directly, so blocking.c never sees
 * a Fortran code's MPI_WAITALL or MPI_BARRIER.  A rank blocked there was
 * not known to be away: the engines' rounds waited for it, its engine
 * thread lost the core to Open MPI's polling, and the time it waited
 * counted as its compute, so a fast rank looked slower than the straggler
 * it waited for.  Measured here (4 ranks on 2 cores, one 2x slow, an
 * MPI_IALLREDUCE per tensor, MPI_WAITALL, a loss): the fast ranks'
 * compute read 32 to 59 ms against 20 ms slept, and groups steps took
 * 75 to 79 ms against 42.7 ms for the same loop in C.
 *
 * Each entry runs Open MPI's own implementation of the call (ompi_X_f,
 * which every Fortran name of it aliases; dlsym(RTLD_NEXT) finds the one
 * after starcoll's), so handles, statuses, LOGICALs and 1-based indices
 * convert as they always do.  Around it the engines hear that the rank is
 * away, and a wait is made of the call's test with naps in between
 * (polite_wait.h).  Point-to-point calls and probes are fortran_p2p.c's.
 * Open MPI only, as fortran.c. */
#include <mpi.h>
#include <pthread.h>
#include "comm_state.h"
#include "polite_wait.h"

#ifdef OPEN_MPI
#include "fortran_entry.h"

/* Open MPI's implementations (libmpi_mpifh), looked up once. */
static struct {
    void (*wait)(fint *req, fint *status, fint *ierr);
    void (*waitall)(fint *count, fint *reqs, fint *statuses, fint *ierr);
    void (*waitany)(fint *count, fint *reqs, fint *index, fint *status, fint *ierr);
    void (*waitsome)(fint *count, fint *reqs, fint *outcount, fint *indices, fint *statuses, fint *ierr);
    void (*test)(fint *req, fint *flag, fint *status, fint *ierr);
    void (*testall)(fint *count, fint *reqs, fint *flag, fint *statuses, fint *ierr);
    void (*testany)(fint *count, fint *reqs, fint *index, fint *flag, fint *status, fint *ierr);
    void (*testsome)(fint *count, fint *reqs, fint *outcount, fint *indices, fint *statuses, fint *ierr);
    void (*barrier)(fint *comm, fint *ierr);
    void (*bcast)(void *buf, fint *count, fint *dt, fint *root, fint *comm, fint *ierr);
    void (*reduce)(void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *root, fint *comm, fint *ierr);
    void (*allgather)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *ierr);
    void (*gather)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm,
                   fint *ierr);
    void (*scatter)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm,
                    fint *ierr);
    void (*alltoall)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *ierr);
    void (*allgatherv)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt,
                       fint *comm, fint *ierr);
    void (*gatherv)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt,
                    fint *root, fint *comm, fint *ierr);
    void (*scatterv)(void *sbuf, fint *scounts, fint *displs, fint *sdt, void *rbuf, fint *rcount, fint *rdt,
                     fint *root, fint *comm, fint *ierr);
    void (*alltoallw)(void *sbuf, fint *scounts, fint *sdispls, fint *sdts, void *rbuf, fint *rcounts,
                      fint *rdispls, fint *rdts, fint *comm, fint *ierr);
    void (*neighbor_allgather)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm,
                               fint *ierr);
    void (*neighbor_allgatherv)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs,
                                fint *rdt, fint *comm, fint *ierr);
    void (*neighbor_alltoall)(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm,
                              fint *ierr);
    void (*neighbor_alltoallv)(void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts,
                               fint *rdispls, fint *rdt, fint *comm, fint *ierr);
    void (*neighbor_alltoallw)(void *sbuf, fint *scounts, MPI_Aint *sdispls, fint *sdts, void *rbuf, fint *rcounts,
                               MPI_Aint *rdispls, fint *rdts, fint *comm, fint *ierr);
    void (*alltoallv)(void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts,
                      fint *rdispls, fint *rdt, fint *comm, fint *ierr);
    void (*reduce_scatter)(void *sbuf, void *rbuf, fint *rcounts, fint *dt, fint *op, fint *comm, fint *ierr);
    void (*reduce_scatter_block)(void *sbuf, void *rbuf, fint *rcount, fint *dt, fint *op, fint *comm, fint *ierr);
    void (*scan)(void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *comm, fint *ierr);
    void (*exscan)(void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *comm, fint *ierr);
    void (*comm_split)(fint *comm, fint *color, fint *key, fint *newcomm, fint *ierr);
    void (*comm_dup)(fint *comm, fint *newcomm, fint *ierr);
    void (*comm_create)(fint *comm, fint *group, fint *newcomm, fint *ierr);
} ompi;
static pthread_once_t looked_up = PTHREAD_ONCE_INIT;

#define ENTRY(fn) SC_F_ENTRY(ompi, fn)
static const sc_f_entry entries[] = {
    ENTRY(wait), ENTRY(waitall), ENTRY(waitany), ENTRY(waitsome), ENTRY(test), ENTRY(testall), ENTRY(testany),
    ENTRY(testsome), ENTRY(barrier), ENTRY(bcast), ENTRY(reduce), ENTRY(allgather), ENTRY(gather), ENTRY(scatter),
    ENTRY(alltoall), ENTRY(allgatherv), ENTRY(gatherv), ENTRY(scatterv), ENTRY(alltoallv), ENTRY(alltoallw),
    ENTRY(neighbor_allgather), ENTRY(neighbor_allgatherv), ENTRY(neighbor_alltoall), ENTRY(neighbor_alltoallv),
    ENTRY(neighbor_alltoallw), ENTRY(reduce_scatter), ENTRY(reduce_scatter_block), ENTRY(scan), ENTRY(exscan),
    ENTRY(comm_split), ENTRY(comm_dup), ENTRY(comm_create)};

static void look_up(void)
{
    sc_f_look_up(entries, sizeof entries / sizeof entries[0]);
}

/* Open MPI's function, or NULL: the caller's ierr then says MPI_ERR_INTERN. */
#define OMPI(fn) (pthread_once(&looked_up, look_up), ompi.fn)

/* ---- blocking collectives: away while in them ---------------------------- */

void ompi_barrier_f(fint *comm, fint *ierr);
void ompi_barrier_f(fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_BARRIER, barrier, comm);
}

void ompi_bcast_f(void *buf, fint *count, fint *dt, fint *root, fint *comm, fint *ierr);
void ompi_bcast_f(void *buf, fint *count, fint *dt, fint *root, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_BCAST, bcast, buf, count, dt, root, comm);
}

void ompi_reduce_f(void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *root, fint *comm, fint *ierr);
void ompi_reduce_f(void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *root, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_REDUCE, reduce, sbuf, rbuf, count, dt, op, root, comm);
}

void ompi_allgather_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *ierr);
void ompi_allgather_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_ALLGATHER, allgather, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
}

void ompi_gather_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm,
                   fint *ierr);
void ompi_gather_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm,
                   fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_GATHER, gather, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
}

void ompi_scatter_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm,
                    fint *ierr);
void ompi_scatter_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm,
                    fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_SCATTER, scatter, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
}

void ompi_alltoall_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *ierr);
void ompi_alltoall_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_ALLTOALL, alltoall, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
}

void ompi_allgatherv_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt,
                       fint *comm, fint *ierr);
void ompi_allgatherv_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt,
                       fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_ALLGATHERV, allgatherv, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm);
}

void ompi_gatherv_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt,
                    fint *root, fint *comm, fint *ierr);
void ompi_gatherv_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt,
                    fint *root, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_GATHERV, gatherv, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm);
}

void ompi_scatterv_f(void *sbuf, fint *scounts, fint *displs, fint *sdt, void *rbuf, fint *rcount, fint *rdt,
                     fint *root, fint *comm, fint *ierr);
void ompi_scatterv_f(void *sbuf, fint *scounts, fint *displs, fint *sdt, void *rbuf, fint *rcount, fint *rdt,
                     fint *root, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_SCATTERV, scatterv, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm);
}

void ompi_alltoallv_f(void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts,
                      fint *rdispls, fint *rdt, fint *comm, fint *ierr);
void ompi_alltoallv_f(void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts,
                      fint *rdispls, fint *rdt, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_ALLTOALLV, alltoallv, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm);
}

void ompi_alltoallw_f(void *sbuf, fint *scounts, fint *sdispls, fint *sdts, void *rbuf, fint *rcounts, fint *rdispls,
                      fint *rdts, fint *comm, fint *ierr);
void ompi_alltoallw_f(void *sbuf, fint *scounts, fint *sdispls, fint *sdts, void *rbuf, fint *rcounts, fint *rdispls,
                      fint *rdts, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_ALLTOALLV, alltoallw, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm);
}

/* the neighbourhood collectives (blocking.c) */
void ompi_neighbor_allgather_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm,
                               fint *ierr);
void ompi_neighbor_allgather_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm,
                               fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_NEIGHBOR, neighbor_allgather, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
}

void ompi_neighbor_allgatherv_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs,
                                fint *rdt, fint *comm, fint *ierr);
void ompi_neighbor_allgatherv_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs,
                                fint *rdt, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_NEIGHBOR, neighbor_allgatherv, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm);
}

void ompi_neighbor_alltoall_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm,
                              fint *ierr);
void ompi_neighbor_alltoall_f(void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm,
                              fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_NEIGHBOR, neighbor_alltoall, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
}

void ompi_neighbor_alltoallv_f(void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts,
                               fint *rdispls, fint *rdt, fint *comm, fint *ierr);
void ompi_neighbor_alltoallv_f(void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts,
                               fint *rdispls, fint *rdt, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_NEIGHBOR, neighbor_alltoallv, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt,
                  comm);
}

void ompi_neighbor_alltoallw_f(void *sbuf, fint *scounts, MPI_Aint *sdispls, fint *sdts, void *rbuf, fint *rcounts,
                               MPI_Aint *rdispls, fint *rdts, fint *comm, fint *ierr);
void ompi_neighbor_alltoallw_f(void *sbuf, fint *scounts, MPI_Aint *sdispls, fint *sdts, void *rbuf, fint *rcounts,
                               MPI_Aint *rdispls, fint *rdts, fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_NEIGHBOR, neighbor_alltoallw, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                  comm);
}

/* Four with a reduction's arguments (reduce-scatter's count is its counts
 * array). */
#define REDUCTION_F(fn, what)                                                                           \
    void ompi_##fn##_f(void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *comm, fint *ierr); \
    void ompi_##fn##_f(void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *comm, fint *ierr)  \
    {                                                                                                   \
        AWAY_AROUND_F(what, fn, sbuf, rbuf, count, dt, op, comm);                                       \
    }
REDUCTION_F(reduce_scatter, SC_AWAY_REDUCE_SCATTER)
REDUCTION_F(reduce_scatter_block, SC_AWAY_REDUCE_SCATTER)
REDUCTION_F(scan, SC_AWAY_SCAN)
REDUCTION_F(exscan, SC_AWAY_SCAN)

/* ---- waits: by their tests, politely, away while requests are pending ---- */

typedef enum { F_ONE, F_ALL, F_ANY, F_SOME } wait_kind;

/* One Fortran wait's arguments (those of its kind set). */
typedef struct f_wait {
    wait_kind kind;
    fint *count, *reqs, *index, *outcount, *indices, *statuses;
} f_wait;

/* One test of w's requests; whether the wait is over (a failure included).
 * A LOGICAL flag is 0 when false whatever the compiler's true is. */
static int test_once(const f_wait *w, fint *rc)
{
    fint flag = 0;
    switch (w->kind) {
    case F_ONE: ompi.test(w->reqs, &flag, w->statuses, rc); break;
    case F_ALL: ompi.testall(w->count, w->reqs, &flag, w->statuses, rc); break;
    case F_ANY: ompi.testany(w->count, w->reqs, w->index, &flag, w->statuses, rc); break;   /* flag also when none is active */
    case F_SOME:
        ompi.testsome(w->count, w->reqs, w->outcount, w->indices, w->statuses, rc);
        flag = *w->outcount != 0;   /* some done, or MPI_UNDEFINED: none active */
        break;
    }
    return *rc != MPI_SUCCESS || flag;
}

static void wait_plainly(const f_wait *w, fint *rc)
{
    switch (w->kind) {
    case F_ONE: ompi.wait(w->reqs, w->statuses, rc); break;
    case F_ALL: ompi.waitall(w->count, w->reqs, w->statuses, rc); break;
    case F_ANY: ompi.waitany(w->count, w->reqs, w->index, w->statuses, rc); break;
    case F_SOME: ompi.waitsome(w->count, w->reqs, w->outcount, w->indices, w->statuses, rc); break;
    }
}

/* Whether Open MPI's wait and test of w's kind were both found. */
static int found(wait_kind kind)
{
    pthread_once(&looked_up, look_up);
    switch (kind) {
    case F_ONE: return ompi.wait && ompi.test;
    case F_ALL: return ompi.waitall && ompi.testall;
    case F_ANY: return ompi.waitany && ompi.testany;
    case F_SOME: return ompi.waitsome && ompi.testsome;
    }
    return 0;
}

/* As MPI_Wait* in blocking.c: plain with no engine here; else a test, and
 * only if requests are pending, away and tests with naps between. */
static void wait_f(const f_wait *w, fint *ierr)
{
    fint rc = MPI_ERR_INTERN;
    if (!found(w->kind)) {
        set_ierr(ierr, rc);
        return;
    }
    if (!sc_comm_engines_here()) {
        wait_plainly(w, &rc);
    } else if (!test_once(w, &rc)) {
        sc_comm_away(NULL, 1, SC_AWAY_WAIT);
        for (long ns = SC_NAP_FIRST_NS;;) {
            sc_polite_nap(&ns);
            if (test_once(w, &rc)) break;
        }
        sc_comm_away(NULL, 0, SC_AWAY_WAIT);
    }
    set_ierr(ierr, rc);
}

void ompi_wait_f(fint *req, fint *status, fint *ierr);
void ompi_wait_f(fint *req, fint *status, fint *ierr)
{
    wait_f(&(f_wait){.kind = F_ONE, .reqs = req, .statuses = status}, ierr);
}

void ompi_waitall_f(fint *count, fint *reqs, fint *statuses, fint *ierr);
void ompi_waitall_f(fint *count, fint *reqs, fint *statuses, fint *ierr)
{
    wait_f(&(f_wait){.kind = F_ALL, .count = count, .reqs = reqs, .statuses = statuses}, ierr);
}

void ompi_waitany_f(fint *count, fint *reqs, fint *index, fint *status, fint *ierr);
void ompi_waitany_f(fint *count, fint *reqs, fint *index, fint *status, fint *ierr)
{
    wait_f(&(f_wait){.kind = F_ANY, .count = count, .reqs = reqs, .index = index, .statuses = status}, ierr);
}

void ompi_waitsome_f(fint *count, fint *reqs, fint *outcount, fint *indices, fint *statuses, fint *ierr);
void ompi_waitsome_f(fint *count, fint *reqs, fint *outcount, fint *indices, fint *statuses, fint *ierr)
{
    wait_f(&(f_wait){.kind = F_SOME, .count = count, .reqs = reqs, .outcount = outcount, .indices = indices,
                     .statuses = statuses},
           ierr);
}

void ompi_comm_split_f(fint *comm, fint *color, fint *key, fint *newcomm, fint *ierr);
void ompi_comm_split_f(fint *comm, fint *color, fint *key, fint *newcomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_split, comm, color, key, newcomm);
}

void ompi_comm_dup_f(fint *comm, fint *newcomm, fint *ierr);
void ompi_comm_dup_f(fint *comm, fint *newcomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_dup, comm, newcomm);
}

void ompi_comm_create_f(fint *comm, fint *group, fint *newcomm, fint *ierr);
void ompi_comm_create_f(fint *comm, fint *group, fint *newcomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_create, comm, group, newcomm);
}

/* ---- tests: polling pending requests counts as away (blocking.c) --------- */

void ompi_test_f(fint *req, fint *flag, fint *status, fint *ierr);
void ompi_test_f(fint *req, fint *flag, fint *status, fint *ierr)
{
    POLLING_F(test, *flag, req, flag, status);
}

void ompi_testall_f(fint *count, fint *reqs, fint *flag, fint *statuses, fint *ierr);
void ompi_testall_f(fint *count, fint *reqs, fint *flag, fint *statuses, fint *ierr)
{
    POLLING_F(testall, *flag, count, reqs, flag, statuses);
}

void ompi_testany_f(fint *count, fint *reqs, fint *index, fint *flag, fint *status, fint *ierr);
void ompi_testany_f(fint *count, fint *reqs, fint *index, fint *flag, fint *status, fint *ierr)
{
    POLLING_F(testany, *flag, count, reqs, index, flag, status);
}

void ompi_testsome_f(fint *count, fint *reqs, fint *outcount, fint *indices, fint *statuses, fint *ierr);
void ompi_testsome_f(fint *count, fint *reqs, fint *outcount, fint *indices, fint *statuses, fint *ierr)
{
    POLLING_F(testsome, *outcount != 0, count, reqs, outcount, indices, statuses);
}

/* mpif.h's and `use mpi`'s names for each (fortran_entry.h). */
#define BUF_ARGS void *, fint *, fint *, void *, fint *, fint *
SC_F_NAMES(ompi_barrier_f, mpi_barrier, MPI_BARRIER, fint *, fint *)
SC_F_NAMES(ompi_bcast_f, mpi_bcast, MPI_BCAST, void *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_reduce_f, mpi_reduce, MPI_REDUCE, void *, void *, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_allgather_f, mpi_allgather, MPI_ALLGATHER, BUF_ARGS, fint *, fint *)
SC_F_NAMES(ompi_gather_f, mpi_gather, MPI_GATHER, BUF_ARGS, fint *, fint *, fint *)
SC_F_NAMES(ompi_scatter_f, mpi_scatter, MPI_SCATTER, BUF_ARGS, fint *, fint *, fint *)
SC_F_NAMES(ompi_alltoall_f, mpi_alltoall, MPI_ALLTOALL, BUF_ARGS, fint *, fint *)
#define VBUF_ARGS void *, fint *, fint *, void *, fint *, fint *, fint *
#define RED_ARGS void *, void *, fint *, fint *, fint *, fint *, fint *
SC_F_NAMES(ompi_allgatherv_f, mpi_allgatherv, MPI_ALLGATHERV, VBUF_ARGS, fint *, fint *)
SC_F_NAMES(ompi_gatherv_f, mpi_gatherv, MPI_GATHERV, VBUF_ARGS, fint *, fint *, fint *)
SC_F_NAMES(ompi_scatterv_f, mpi_scatterv, MPI_SCATTERV, void *, fint *, fint *, fint *, void *, fint *, fint *,
           fint *, fint *, fint *)
SC_F_NAMES(ompi_alltoallv_f, mpi_alltoallv, MPI_ALLTOALLV, void *, fint *, fint *, fint *, void *, fint *, fint *,
           fint *, fint *, fint *)
SC_F_NAMES(ompi_alltoallw_f, mpi_alltoallw, MPI_ALLTOALLW, void *, fint *, fint *, fint *, void *, fint *, fint *,
           fint *, fint *, fint *)
SC_F_NAMES(ompi_neighbor_allgather_f, mpi_neighbor_allgather, MPI_NEIGHBOR_ALLGATHER, BUF_ARGS, fint *, fint *)
SC_F_NAMES(ompi_neighbor_allgatherv_f, mpi_neighbor_allgatherv, MPI_NEIGHBOR_ALLGATHERV, VBUF_ARGS, fint *, fint *)
SC_F_NAMES(ompi_neighbor_alltoall_f, mpi_neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL, BUF_ARGS, fint *, fint *)
SC_F_NAMES(ompi_neighbor_alltoallv_f, mpi_neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV, void *, fint *, fint *, fint *,
           void *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_neighbor_alltoallw_f, mpi_neighbor_alltoallw, MPI_NEIGHBOR_ALLTOALLW, void *, fint *, MPI_Aint *,
           fint *, void *, fint *, MPI_Aint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_reduce_scatter_f, mpi_reduce_scatter, MPI_REDUCE_SCATTER, RED_ARGS)
SC_F_NAMES(ompi_reduce_scatter_block_f, mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, RED_ARGS)
SC_F_NAMES(ompi_scan_f, mpi_scan, MPI_SCAN, RED_ARGS)
SC_F_NAMES(ompi_exscan_f, mpi_exscan, MPI_EXSCAN, RED_ARGS)
SC_F_NAMES(ompi_comm_split_f, mpi_comm_split, MPI_COMM_SPLIT, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_comm_dup_f, mpi_comm_dup, MPI_COMM_DUP, fint *, fint *, fint *)
SC_F_NAMES(ompi_comm_create_f, mpi_comm_create, MPI_COMM_CREATE, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_wait_f, mpi_wait, MPI_WAIT, fint *, fint *, fint *)
SC_F_NAMES(ompi_waitall_f, mpi_waitall, MPI_WAITALL, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_waitany_f, mpi_waitany, MPI_WAITANY, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_waitsome_f, mpi_waitsome, MPI_WAITSOME, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_test_f, mpi_test, MPI_TEST, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_testall_f, mpi_testall, MPI_TESTALL, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_testany_f, mpi_testany, MPI_TESTANY, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_testsome_f, mpi_testsome, MPI_TESTSOME, fint *, fint *, fint *, fint *, fint *, fint *)
#else
typedef int sc_fortran_blocking_not_interposed;   /* an empty file is not C */
#endif
