/* Fortran MPI_ALLREDUCE and MPI_IALLREDUCE.  Open MPI's Fortran bindings (mpif.h, `use mpi`,
 * and `use mpi_f08` through ompi_allreduce_f) call PMPI_Allreduce directly,
 * so the C wrapper never sees Fortran calls: provide the Fortran symbols
 * and route them through MPI_Allreduce.
 *
 * Open MPI only: the addresses of Fortran's MPI_IN_PLACE and MPI_BOTTOM are
 * found by Open MPI's names, and under another MPI a Fortran MPI_IN_PLACE
 * not recognised would be reduced as a buffer.  Built against MPICH, the
 * library leaves Fortran's symbols to MPICH (README, "MPICH"). */
#include <mpi.h>
#include <dlfcn.h>
#include <stddef.h>

#ifdef OPEN_MPI

void mpi_allreduce_(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
                    MPI_Fint *comm, MPI_Fint *ierr);

/* Fortran's MPI_IN_PLACE and MPI_BOTTOM are addresses of common blocks in
 * the Fortran bindings library; find them by name, whatever the mangling. */
static const char *const in_place_names[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                             "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE", NULL};
static const char *const bottom_names[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
                                           "MPI_FORTRAN_BOTTOM", NULL};

static void fortran_buffers(void **sendbuf, void **recvbuf)
{
    static void *in_place_addr, *bottom_addr;
    static int looked;
    if (!looked) {   /* one lookup per process; cache hits and misses alike */
        for (int i = 0; in_place_names[i] && !in_place_addr; i++) in_place_addr = dlsym(RTLD_DEFAULT, in_place_names[i]);
        for (int i = 0; bottom_names[i] && !bottom_addr; i++) bottom_addr = dlsym(RTLD_DEFAULT, bottom_names[i]);
        looked = 1;
    }
    if (*sendbuf && *sendbuf == in_place_addr) *sendbuf = MPI_IN_PLACE;
    if (*sendbuf && *sendbuf == bottom_addr) *sendbuf = MPI_BOTTOM;
    if (*recvbuf && *recvbuf == bottom_addr) *recvbuf = MPI_BOTTOM;
}

void mpi_allreduce_(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
                    MPI_Fint *comm, MPI_Fint *ierr)
{
    fortran_buffers(&sendbuf, &recvbuf);
    int rc = MPI_Allreduce(sendbuf, recvbuf, (int)*count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op),
                           PMPI_Comm_f2c(*comm));
    if (ierr) *ierr = (MPI_Fint)rc;
}

/* MPI_IALLREDUCE: the same, with the request handed back as Fortran's. */
void mpi_iallreduce_(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
                     MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr);
void mpi_iallreduce_(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
                     MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
    fortran_buffers(&sendbuf, &recvbuf);
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Iallreduce(sendbuf, recvbuf, (int)*count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op),
                            PMPI_Comm_f2c(*comm), &req);
    if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(req);
    if (ierr) *ierr = (MPI_Fint)rc;
}

/* The other manglings, and Open MPI's internal entry used by `use mpi_f08`. */
#define SC_FORTRAN_ALIAS(name) \
    void name(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *) \
        __attribute__((alias("mpi_allreduce_")));
SC_FORTRAN_ALIAS(mpi_allreduce)
SC_FORTRAN_ALIAS(mpi_allreduce__)
SC_FORTRAN_ALIAS(MPI_ALLREDUCE)
#ifdef OPEN_MPI
SC_FORTRAN_ALIAS(ompi_allreduce_f)
#endif
#define SC_FORTRAN_IALIAS(name) \
    void name(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *) \
        __attribute__((alias("mpi_iallreduce_")));
SC_FORTRAN_IALIAS(mpi_iallreduce)
SC_FORTRAN_IALIAS(mpi_iallreduce__)
SC_FORTRAN_IALIAS(MPI_IALLREDUCE)
#ifdef OPEN_MPI
SC_FORTRAN_IALIAS(ompi_iallreduce_f)
#endif

/* Init, finalize and pcontrol from Fortran go straight to PMPI_ as well;
 * without these the library would never start or write its report. */
void mpi_init_(MPI_Fint *ierr);
void mpi_init_(MPI_Fint *ierr)
{
    int rc = MPI_Init(NULL, NULL);
    if (ierr) *ierr = (MPI_Fint)rc;
}

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int p = 0;
    int rc = MPI_Init_thread(NULL, NULL, (int)*required, &p);
    if (provided) *provided = (MPI_Fint)p;
    if (ierr) *ierr = (MPI_Fint)rc;
}

void mpi_finalize_(MPI_Fint *ierr);
void mpi_finalize_(MPI_Fint *ierr)
{
    int rc = MPI_Finalize();
    if (ierr) *ierr = (MPI_Fint)rc;
}

void mpi_pcontrol_(MPI_Fint *level);
void mpi_pcontrol_(MPI_Fint *level)
{
    MPI_Pcontrol((int)*level);
}

#define SC_FORTRAN_ALIAS1(name, target, ...) void name(__VA_ARGS__) __attribute__((alias(#target)));
SC_FORTRAN_ALIAS1(mpi_init, mpi_init_, MPI_Fint *)
SC_FORTRAN_ALIAS1(mpi_init__, mpi_init_, MPI_Fint *)
SC_FORTRAN_ALIAS1(MPI_INIT, mpi_init_, MPI_Fint *)
SC_FORTRAN_ALIAS1(mpi_init_thread, mpi_init_thread_, MPI_Fint *, MPI_Fint *, MPI_Fint *)
SC_FORTRAN_ALIAS1(mpi_init_thread__, mpi_init_thread_, MPI_Fint *, MPI_Fint *, MPI_Fint *)
SC_FORTRAN_ALIAS1(MPI_INIT_THREAD, mpi_init_thread_, MPI_Fint *, MPI_Fint *, MPI_Fint *)
SC_FORTRAN_ALIAS1(mpi_finalize, mpi_finalize_, MPI_Fint *)
SC_FORTRAN_ALIAS1(mpi_finalize__, mpi_finalize_, MPI_Fint *)
SC_FORTRAN_ALIAS1(MPI_FINALIZE, mpi_finalize_, MPI_Fint *)
SC_FORTRAN_ALIAS1(mpi_pcontrol, mpi_pcontrol_, MPI_Fint *)
SC_FORTRAN_ALIAS1(mpi_pcontrol__, mpi_pcontrol_, MPI_Fint *)
SC_FORTRAN_ALIAS1(MPI_PCONTROL, mpi_pcontrol_, MPI_Fint *)
#ifdef OPEN_MPI
/* use mpi_f08 enters through these */
SC_FORTRAN_ALIAS1(ompi_init_f, mpi_init_, MPI_Fint *)
SC_FORTRAN_ALIAS1(ompi_init_thread_f, mpi_init_thread_, MPI_Fint *, MPI_Fint *, MPI_Fint *)
SC_FORTRAN_ALIAS1(ompi_finalize_f, mpi_finalize_, MPI_Fint *)
SC_FORTRAN_ALIAS1(ompi_pcontrol_f, mpi_pcontrol_, MPI_Fint *)
#endif
#else
typedef int sc_fortran_not_interposed;   /* an empty file is not C */
#endif
