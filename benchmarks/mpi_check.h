/* Every MPI call of a starcoll test or benchmark program checks its return
 * code, as user code must: MPI_CHECK(call) counts a failure and prints one
 * line naming the call, where it was made and MPI's error string.  The
 * programs set MPI_ERRORS_RETURN on MPI_COMM_WORLD (and so on the
 * communicators made from it), so errors come back as codes rather than
 * stopping the job, and end with a check that none failed. */
#ifndef STARCOLL_MPI_CHECK_H
#define STARCOLL_MPI_CHECK_H
#include <mpi.h>
#include <stdio.h>

static int sc_mpi_failures;

static inline int sc_mpi_check(int rc, const char *call, const char *file, int line)
{
    if (rc != MPI_SUCCESS && sc_mpi_failures++ < 5) {
        char err[MPI_MAX_ERROR_STRING] = "";
        int len = 0, rank = -1;
        PMPI_Error_string(rc, err, &len);
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "rank %d: %s failed at %s:%d: %s\n", rank, call, file, line, err);
    }
    return rc;
}

#define MPI_CHECK(call) sc_mpi_check((call), #call, __FILE__, __LINE__)
#endif
