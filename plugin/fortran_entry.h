/* What starcoll's Fortran entry points share (fortran_blocking.c,
 * fortran_setup_io.c).  Each runs Open MPI's own implementation of the
 * call (ompi_X_f, which every Fortran name of it aliases), found after
 * starcoll's by dlsym(RTLD_NEXT), so handles, statuses, LOGICALs and
 * strings convert as they always do.  Open MPI only. */
#ifndef STARCOLL_FORTRAN_ENTRY_H
#define STARCOLL_FORTRAN_ENTRY_H
#include <mpi.h>
#include <dlfcn.h>
#include <stddef.h>
#include "comm_state.h"
#include "runtime.h"

typedef MPI_Fint fint;

static inline void set_ierr(fint *ierr, fint rc)
{
    if (ierr) *ierr = rc;
}

/* One of Open MPI's implementations and where its address goes. */
typedef struct {
    const char *name;
    void **fn;
} sc_f_entry;
#define SC_F_ENTRY(table, fn) {"ompi_" #fn "_f", (void **)&table.fn}

/* Looks each up; one missing is said once, and the Fortran calls of it
 * fail with MPI_ERR_INTERN. */
static inline void sc_f_look_up(const sc_f_entry *entries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(*entries[i].fn = dlsym(RTLD_NEXT, entries[i].name)))
            sc_say(SC_SAY_FORTRAN, 1, "starcoll: Open MPI's Fortran %s was not found after starcoll; Fortran calls of it "
                   "fail with MPI_ERR_INTERN", entries[i].name);
}

/* A blocking call with the engines told this rank is away around it:
 * call, an expression on ompi.fn storing its code in rc_.  Expands where
 * the file's own OMPI(fn) (looked up, or NULL) and its table `ompi` are
 * defined. */
#define AWAY_AROUND_CALL_F(what, fn, call)               \
    do {                                                 \
        fint rc_ = MPI_ERR_INTERN;                       \
        if (OMPI(fn)) {                                  \
            int engines_ = sc_comm_engines_here();       \
            if (engines_) sc_comm_away(NULL, 1, what);   \
            call;                                        \
            if (engines_) sc_comm_away(NULL, 0, what);   \
        }                                                \
        set_ierr(ierr, rc_);                             \
    } while (0)
#define AWAY_AROUND_F(what, fn, ...) AWAY_AROUND_CALL_F(what, fn, ompi.fn(__VA_ARGS__, &rc_))
/* a string's hidden length comes after the error code */
#define AWAY_AROUND_STRING_F(what, fn, len, ...) AWAY_AROUND_CALL_F(what, fn, ompi.fn(__VA_ARGS__, &rc_, len))

/* A test: polling what is not complete counts as away (blocking.c). */
#define POLLING_F(fn, done, ...)                                  \
    do {                                                          \
        fint rc_ = MPI_ERR_INTERN;                                \
        if (OMPI(fn)) ompi.fn(__VA_ARGS__, &rc_);                 \
        if (rc_ == MPI_SUCCESS) sc_comm_polling(!(done));         \
        set_ierr(ierr, rc_);                                      \
    } while (0)

/* mpif.h's and `use mpi`'s names for each, in every mangling (`use
 * mpi_f08` calls ompi_X_f itself). */
#define SC_F_NAMES(impl, lower, upper, ...)                          \
    void lower(__VA_ARGS__) __attribute__((alias(#impl)));         \
    void lower##_(__VA_ARGS__) __attribute__((alias(#impl)));      \
    void lower##__(__VA_ARGS__) __attribute__((alias(#impl)));     \
    void upper(__VA_ARGS__) __attribute__((alias(#impl)));
/* Those names and pmpi_X_: Open MPI 4.1's `use mpi_f08` reaches the calls
 * with a LOGICAL argument (the tests, the probes, MPI_CART_CREATE, ...)
 * through mpif.h's profiling name pmpi_X_, which converts it, not through
 * ompi_X_f; unanswered, its MPI_Iprobe polling or MPI_Cart_create was
 * unseen.  Answering that name is transparent: the entry runs Open MPI's
 * own implementation all the same. */
#define SC_F_NAMES_F08_PMPI(impl, lower, upper, ...) \
    SC_F_NAMES(impl, lower, upper, __VA_ARGS__)    \
    void p##lower##_(__VA_ARGS__) __attribute__((alias(#impl)));
#endif
