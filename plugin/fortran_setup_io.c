/* Fortran's calls that make communicators, join two groups or start
 * processes, collective MPI-IO (split collectives too), and windows'
 * collective and active-target calls: what
 * blocking_setup_io.c does for C.  Open MPI's Fortran bindings call
 * PMPI_ directly, so a Fortran code blocked in MPI_FILE_WRITE_AT_ALL (a
 * checkpoint) or MPI_WIN_FENCE was not known to be away, and each cost a
 * 10 s stall under tolerant modes while a straggler's rounds were open
 * (mpi_fortran.sh).  Each entry runs Open MPI's own implementation
 * (fortran_entry.h) with the engines told this rank is away; MPI_WIN_WAIT
 * is made of MPI_WIN_TEST's polls, as the C one is.  Open MPI only. */
#include <mpi.h>
#include <pthread.h>
#include "comm_state.h"
#include "polite_wait.h"

#ifdef OPEN_MPI
#include "fortran_entry.h"

typedef MPI_Offset off;
/* Open MPI's implementations (libmpi_mpifh), looked up once; a string's
 * length comes last, as an int, as Open MPI declares it. */
static struct {
    void (*comm_split_type)(fint *comm, fint *split_type, fint *key, fint *info, fint *newcomm, fint *ierr);
    void (*comm_dup_with_info)(fint *comm, fint *info, fint *newcomm, fint *ierr);
    void (*comm_create_group)(fint *comm, fint *group, fint *tag, fint *newcomm, fint *ierr);
    void (*comm_accept)(char *port, fint *info, fint *root, fint *comm, fint *newcomm, fint *ierr, int port_len);
    void (*comm_connect)(char *port, fint *info, fint *root, fint *comm, fint *newcomm, fint *ierr, int port_len);
    void (*comm_disconnect)(fint *comm, fint *ierr);
    void (*comm_spawn)(char *command, char *argv, fint *maxprocs, fint *info, fint *root, fint *comm, fint *intercomm,
                       fint *errcodes, fint *ierr, int command_len, int argv_len);
    void (*comm_spawn_multiple)(fint *count, char *commands, char *argvs, fint *maxprocs, fint *infos, fint *root,
                                fint *comm, fint *intercomm, fint *errcodes, fint *ierr, int commands_len,
                                int argvs_len);
    void (*comm_join)(fint *fd, fint *intercomm, fint *ierr);
    void (*file_open)(fint *comm, char *name, fint *amode, fint *info, fint *fh, fint *ierr, int name_len);
    void (*file_close)(fint *fh, fint *ierr);
    void (*file_set_view)(fint *fh, off *disp, fint *etype, fint *filetype, char *datarep, fint *info, fint *ierr,
                          int datarep_len);
    void (*file_set_size)(fint *fh, off *size, fint *ierr);
    void (*file_preallocate)(fint *fh, off *size, fint *ierr);
    void (*file_sync)(fint *fh, fint *ierr);
    void (*file_read_all)(fint *fh, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
    void (*file_write_all)(fint *fh, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
    void (*file_read_at_all)(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
    void (*file_write_at_all)(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
    void (*file_read_ordered)(fint *fh, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
    void (*file_write_ordered)(fint *fh, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
    void (*file_seek_shared)(fint *fh, off *offset, fint *whence, fint *ierr);
    void (*file_set_atomicity)(fint *fh, fint *flag, fint *ierr);
    /* split collectives: four _begin of one shape, two with an offset, six _end */
    void (*file_read_all_begin)(fint *fh, void *buf, fint *count, fint *dt, fint *ierr);
    void (*file_write_all_begin)(fint *fh, void *buf, fint *count, fint *dt, fint *ierr);
    void (*file_read_ordered_begin)(fint *fh, void *buf, fint *count, fint *dt, fint *ierr);
    void (*file_write_ordered_begin)(fint *fh, void *buf, fint *count, fint *dt, fint *ierr);
    void (*file_read_at_all_begin)(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *ierr);
    void (*file_write_at_all_begin)(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *ierr);
    void (*file_read_all_end)(fint *fh, void *buf, fint *status, fint *ierr);
    void (*file_write_all_end)(fint *fh, void *buf, fint *status, fint *ierr);
    void (*file_read_ordered_end)(fint *fh, void *buf, fint *status, fint *ierr);
    void (*file_write_ordered_end)(fint *fh, void *buf, fint *status, fint *ierr);
    void (*file_read_at_all_end)(fint *fh, void *buf, fint *status, fint *ierr);
    void (*file_write_at_all_end)(fint *fh, void *buf, fint *status, fint *ierr);
    void (*win_create)(void *base, MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, fint *win, fint *ierr);
    void (*win_fence)(fint *assertion, fint *win, fint *ierr);
    void (*win_free)(fint *win, fint *ierr);
    void (*win_start)(fint *group, fint *assertion, fint *win, fint *ierr);
    void (*win_complete)(fint *win, fint *ierr);
    void (*win_wait)(fint *win, fint *ierr);
    void (*win_test)(fint *win, fint *flag, fint *ierr);
    void (*intercomm_create)(fint *local_comm, fint *local_leader, fint *bridge_comm, fint *remote_leader, fint *tag,
                             fint *newintercomm, fint *ierr);
    void (*intercomm_merge)(fint *intercomm, fint *high, fint *newintracomm, fint *ierr);
    void (*cart_create)(fint *old_comm, fint *ndims, fint *dims, fint *periods, fint *reorder, fint *comm_cart,
                        fint *ierr);
    void (*cart_sub)(fint *comm, fint *remain_dims, fint *new_comm, fint *ierr);
    void (*graph_create)(fint *old_comm, fint *nnodes, fint *index, fint *edges, fint *reorder, fint *comm_graph,
                         fint *ierr);
    void (*dist_graph_create)(fint *old_comm, fint *n, fint *sources, fint *degrees, fint *destinations,
                              fint *weights, fint *info, fint *reorder, fint *comm_graph, fint *ierr);
    void (*dist_graph_create_adjacent)(fint *old_comm, fint *indegree, fint *sources, fint *sourceweights,
                                       fint *outdegree, fint *destinations, fint *destweights, fint *info,
                                       fint *reorder, fint *comm_graph, fint *ierr);
    /* baseptr: where the address goes (an INTEGER(MPI_ADDRESS_KIND), or a
     * TYPE(C_PTR) in the _cptr forms); passed on as it came */
    void (*win_allocate)(MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, void *baseptr, fint *win,
                         fint *ierr);
    void (*win_allocate_cptr)(MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, void *baseptr, fint *win,
                              fint *ierr);
    void (*win_allocate_shared)(MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, void *baseptr, fint *win,
                                fint *ierr);
    void (*win_allocate_shared_cptr)(MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, void *baseptr,
                                     fint *win, fint *ierr);
    void (*win_create_dynamic)(fint *info, fint *comm, fint *win, fint *ierr);
} ompi;
static pthread_once_t looked_up = PTHREAD_ONCE_INIT;

#define ENTRY(fn) SC_F_ENTRY(ompi, fn)
static const sc_f_entry entries[] = {
    ENTRY(comm_split_type), ENTRY(comm_dup_with_info), ENTRY(comm_create_group), ENTRY(comm_accept),
    ENTRY(comm_connect), ENTRY(comm_disconnect), ENTRY(comm_spawn), ENTRY(comm_spawn_multiple), ENTRY(comm_join),
    ENTRY(file_open), ENTRY(file_close), ENTRY(file_set_view), ENTRY(file_set_size), ENTRY(file_preallocate),
    ENTRY(file_sync), ENTRY(file_read_all), ENTRY(file_write_all), ENTRY(file_read_at_all), ENTRY(file_write_at_all),
    ENTRY(file_read_ordered), ENTRY(file_write_ordered), ENTRY(file_seek_shared), ENTRY(file_set_atomicity),
    ENTRY(file_read_all_begin), ENTRY(file_write_all_begin), ENTRY(file_read_ordered_begin),
    ENTRY(file_write_ordered_begin), ENTRY(file_read_at_all_begin), ENTRY(file_write_at_all_begin),
    ENTRY(file_read_all_end), ENTRY(file_write_all_end), ENTRY(file_read_ordered_end), ENTRY(file_write_ordered_end),
    ENTRY(file_read_at_all_end), ENTRY(file_write_at_all_end), ENTRY(win_create), ENTRY(win_fence), ENTRY(win_free),
    ENTRY(win_start), ENTRY(win_complete), ENTRY(win_wait), ENTRY(win_test), ENTRY(intercomm_create),
    ENTRY(intercomm_merge), ENTRY(cart_create), ENTRY(cart_sub), ENTRY(graph_create), ENTRY(dist_graph_create),
    ENTRY(dist_graph_create_adjacent), ENTRY(win_allocate), ENTRY(win_allocate_cptr), ENTRY(win_allocate_shared),
    ENTRY(win_allocate_shared_cptr), ENTRY(win_create_dynamic)};

static void look_up(void)
{
    sc_f_look_up(entries, sizeof entries / sizeof entries[0]);
}
#define OMPI(fn) (pthread_once(&looked_up, look_up), ompi.fn)

/* ---- communicators ------------------------------------------------------ */

void ompi_comm_split_type_f(fint *comm, fint *split_type, fint *key, fint *info, fint *newcomm, fint *ierr);
void ompi_comm_split_type_f(fint *comm, fint *split_type, fint *key, fint *info, fint *newcomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_split_type, comm, split_type, key, info, newcomm);
}

void ompi_comm_dup_with_info_f(fint *comm, fint *info, fint *newcomm, fint *ierr);
void ompi_comm_dup_with_info_f(fint *comm, fint *info, fint *newcomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_dup_with_info, comm, info, newcomm);
}

void ompi_comm_create_group_f(fint *comm, fint *group, fint *tag, fint *newcomm, fint *ierr);
void ompi_comm_create_group_f(fint *comm, fint *group, fint *tag, fint *newcomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_create_group, comm, group, tag, newcomm);
}

void ompi_intercomm_create_f(fint *local_comm, fint *local_leader, fint *bridge_comm, fint *remote_leader, fint *tag,
                             fint *newintercomm, fint *ierr);
void ompi_intercomm_create_f(fint *local_comm, fint *local_leader, fint *bridge_comm, fint *remote_leader, fint *tag,
                             fint *newintercomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, intercomm_create, local_comm, local_leader, bridge_comm, remote_leader, tag,
                  newintercomm);
}

void ompi_intercomm_merge_f(fint *intercomm, fint *high, fint *newintracomm, fint *ierr);
void ompi_intercomm_merge_f(fint *intercomm, fint *high, fint *newintracomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, intercomm_merge, intercomm, high, newintracomm);
}

/* LOGICAL arrays and flags pass as Open MPI takes them */
void ompi_cart_create_f(fint *old_comm, fint *ndims, fint *dims, fint *periods, fint *reorder, fint *comm_cart,
                        fint *ierr);
void ompi_cart_create_f(fint *old_comm, fint *ndims, fint *dims, fint *periods, fint *reorder, fint *comm_cart,
                        fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, cart_create, old_comm, ndims, dims, periods, reorder, comm_cart);
}

void ompi_cart_sub_f(fint *comm, fint *remain_dims, fint *new_comm, fint *ierr);
void ompi_cart_sub_f(fint *comm, fint *remain_dims, fint *new_comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, cart_sub, comm, remain_dims, new_comm);
}

void ompi_graph_create_f(fint *old_comm, fint *nnodes, fint *index, fint *edges, fint *reorder, fint *comm_graph,
                         fint *ierr);
void ompi_graph_create_f(fint *old_comm, fint *nnodes, fint *index, fint *edges, fint *reorder, fint *comm_graph,
                         fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, graph_create, old_comm, nnodes, index, edges, reorder, comm_graph);
}

/* Fortran's MPI_UNWEIGHTED is known to Open MPI by its address: passed on as it came */
void ompi_dist_graph_create_f(fint *old_comm, fint *n, fint *sources, fint *degrees, fint *destinations,
                              fint *weights, fint *info, fint *reorder, fint *comm_graph, fint *ierr);
void ompi_dist_graph_create_f(fint *old_comm, fint *n, fint *sources, fint *degrees, fint *destinations,
                              fint *weights, fint *info, fint *reorder, fint *comm_graph, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, dist_graph_create, old_comm, n, sources, degrees, destinations, weights, info,
                  reorder, comm_graph);
}

void ompi_dist_graph_create_adjacent_f(fint *old_comm, fint *indegree, fint *sources, fint *sourceweights,
                                       fint *outdegree, fint *destinations, fint *destweights, fint *info,
                                       fint *reorder, fint *comm_graph, fint *ierr);
void ompi_dist_graph_create_adjacent_f(fint *old_comm, fint *indegree, fint *sources, fint *sourceweights,
                                       fint *outdegree, fint *destinations, fint *destweights, fint *info,
                                       fint *reorder, fint *comm_graph, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, dist_graph_create_adjacent, old_comm, indegree, sources, sourceweights,
                  outdegree, destinations, destweights, info, reorder, comm_graph);
}

void ompi_comm_accept_f(char *port, fint *info, fint *root, fint *comm, fint *newcomm, fint *ierr, int port_len);
void ompi_comm_accept_f(char *port, fint *info, fint *root, fint *comm, fint *newcomm, fint *ierr, int port_len)
{
    AWAY_AROUND_STRING_F(SC_AWAY_COMM_CREATE, comm_accept, port_len, port, info, root, comm, newcomm);
}

void ompi_comm_connect_f(char *port, fint *info, fint *root, fint *comm, fint *newcomm, fint *ierr, int port_len);
void ompi_comm_connect_f(char *port, fint *info, fint *root, fint *comm, fint *newcomm, fint *ierr, int port_len)
{
    AWAY_AROUND_STRING_F(SC_AWAY_COMM_CREATE, comm_connect, port_len, port, info, root, comm, newcomm);
}

void ompi_comm_disconnect_f(fint *comm, fint *ierr);
void ompi_comm_disconnect_f(fint *comm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_disconnect, comm);
}

/* Two strings' hidden lengths after the error code. */
void ompi_comm_spawn_f(char *command, char *argv, fint *maxprocs, fint *info, fint *root, fint *comm, fint *intercomm,
                       fint *errcodes, fint *ierr, int command_len, int argv_len);
void ompi_comm_spawn_f(char *command, char *argv, fint *maxprocs, fint *info, fint *root, fint *comm, fint *intercomm,
                       fint *errcodes, fint *ierr, int command_len, int argv_len)
{
    AWAY_AROUND_CALL_F(SC_AWAY_COMM_CREATE, comm_spawn,
                       ompi.comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, errcodes, &rc_,
                                       command_len, argv_len));
}

void ompi_comm_spawn_multiple_f(fint *count, char *commands, char *argvs, fint *maxprocs, fint *infos, fint *root,
                                fint *comm, fint *intercomm, fint *errcodes, fint *ierr, int commands_len,
                                int argvs_len);
void ompi_comm_spawn_multiple_f(fint *count, char *commands, char *argvs, fint *maxprocs, fint *infos, fint *root,
                                fint *comm, fint *intercomm, fint *errcodes, fint *ierr, int commands_len,
                                int argvs_len)
{
    AWAY_AROUND_CALL_F(SC_AWAY_COMM_CREATE, comm_spawn_multiple,
                       ompi.comm_spawn_multiple(count, commands, argvs, maxprocs, infos, root, comm, intercomm,
                                                errcodes, &rc_, commands_len, argvs_len));
}

void ompi_comm_join_f(fint *fd, fint *intercomm, fint *ierr);
void ompi_comm_join_f(fint *fd, fint *intercomm, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_COMM_CREATE, comm_join, fd, intercomm);
}

/* ---- collective MPI-IO -------------------------------------------------- */

void ompi_file_open_f(fint *comm, char *name, fint *amode, fint *info, fint *fh, fint *ierr, int name_len);
void ompi_file_open_f(fint *comm, char *name, fint *amode, fint *info, fint *fh, fint *ierr, int name_len)
{
    AWAY_AROUND_STRING_F(SC_AWAY_FILE, file_open, name_len, comm, name, amode, info, fh);
}

void ompi_file_close_f(fint *fh, fint *ierr);
void ompi_file_close_f(fint *fh, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_close, fh);
}

void ompi_file_set_view_f(fint *fh, off *disp, fint *etype, fint *filetype, char *datarep, fint *info, fint *ierr,
                          int datarep_len);
void ompi_file_set_view_f(fint *fh, off *disp, fint *etype, fint *filetype, char *datarep, fint *info, fint *ierr,
                          int datarep_len)
{
    AWAY_AROUND_STRING_F(SC_AWAY_FILE, file_set_view, datarep_len, fh, disp, etype, filetype, datarep, info);
}

void ompi_file_set_size_f(fint *fh, off *size, fint *ierr);
void ompi_file_set_size_f(fint *fh, off *size, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_set_size, fh, size);
}

void ompi_file_preallocate_f(fint *fh, off *size, fint *ierr);
void ompi_file_preallocate_f(fint *fh, off *size, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_preallocate, fh, size);
}

void ompi_file_sync_f(fint *fh, fint *ierr);
void ompi_file_sync_f(fint *fh, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_sync, fh);
}

/* read_all, write_all, read_ordered, write_ordered: one shape */
#define FILE_ALL_F(fn)                                                                     \
    void ompi_##fn##_f(fint *fh, void *buf, fint *count, fint *dt, fint *status, fint *ierr); \
    void ompi_##fn##_f(fint *fh, void *buf, fint *count, fint *dt, fint *status, fint *ierr)  \
    {                                                                                      \
        AWAY_AROUND_F(SC_AWAY_FILE, fn, fh, buf, count, dt, status);                       \
    }
FILE_ALL_F(file_read_all)
FILE_ALL_F(file_write_all)
FILE_ALL_F(file_read_ordered)
FILE_ALL_F(file_write_ordered)

void ompi_file_read_at_all_f(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
void ompi_file_read_at_all_f(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *status, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_read_at_all, fh, offset, buf, count, dt, status);
}

void ompi_file_write_at_all_f(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *status, fint *ierr);
void ompi_file_write_at_all_f(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *status, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_write_at_all, fh, offset, buf, count, dt, status);
}

void ompi_file_seek_shared_f(fint *fh, off *offset, fint *whence, fint *ierr);
void ompi_file_seek_shared_f(fint *fh, off *offset, fint *whence, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_seek_shared, fh, offset, whence);
}

void ompi_file_set_atomicity_f(fint *fh, fint *flag, fint *ierr);
void ompi_file_set_atomicity_f(fint *fh, fint *flag, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_FILE, file_set_atomicity, fh, flag);
}

/* Split collectives (blocking_setup_io.c): _begin and _end may block. */
#define FILE_BEGIN_F(fn)                                                         \
    void ompi_##fn##_f(fint *fh, void *buf, fint *count, fint *dt, fint *ierr); \
    void ompi_##fn##_f(fint *fh, void *buf, fint *count, fint *dt, fint *ierr)  \
    {                                                                            \
        AWAY_AROUND_F(SC_AWAY_FILE, fn, fh, buf, count, dt);                     \
    }
#define FILE_AT_BEGIN_F(fn)                                                                   \
    void ompi_##fn##_f(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *ierr); \
    void ompi_##fn##_f(fint *fh, off *offset, void *buf, fint *count, fint *dt, fint *ierr)  \
    {                                                                                         \
        AWAY_AROUND_F(SC_AWAY_FILE, fn, fh, offset, buf, count, dt);                          \
    }
#define FILE_END_F(fn)                                                  \
    void ompi_##fn##_f(fint *fh, void *buf, fint *status, fint *ierr); \
    void ompi_##fn##_f(fint *fh, void *buf, fint *status, fint *ierr)  \
    {                                                                   \
        AWAY_AROUND_F(SC_AWAY_FILE, fn, fh, buf, status);               \
    }
FILE_BEGIN_F(file_read_all_begin)
FILE_BEGIN_F(file_write_all_begin)
FILE_BEGIN_F(file_read_ordered_begin)
FILE_BEGIN_F(file_write_ordered_begin)
FILE_AT_BEGIN_F(file_read_at_all_begin)
FILE_AT_BEGIN_F(file_write_at_all_begin)
FILE_END_F(file_read_all_end)
FILE_END_F(file_write_all_end)
FILE_END_F(file_read_ordered_end)
FILE_END_F(file_write_ordered_end)
FILE_END_F(file_read_at_all_end)
FILE_END_F(file_write_at_all_end)

/* ---- windows ------------------------------------------------------------ */

void ompi_win_create_f(void *base, MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, fint *win, fint *ierr);
void ompi_win_create_f(void *base, MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, fint *win, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_WIN, win_create, base, size, disp_unit, info, comm, win);
}

/* the four allocating forms: one shape */
#define WIN_ALLOCATE_F(fn)                                                                                   \
    void ompi_##fn##_f(MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, void *baseptr, fint *win,     \
                       fint *ierr);                                                                          \
    void ompi_##fn##_f(MPI_Aint *size, fint *disp_unit, fint *info, fint *comm, void *baseptr, fint *win,     \
                       fint *ierr)                                                                           \
    {                                                                                                        \
        AWAY_AROUND_F(SC_AWAY_WIN, fn, size, disp_unit, info, comm, baseptr, win);                           \
    }
WIN_ALLOCATE_F(win_allocate)
WIN_ALLOCATE_F(win_allocate_cptr)
WIN_ALLOCATE_F(win_allocate_shared)
WIN_ALLOCATE_F(win_allocate_shared_cptr)

void ompi_win_create_dynamic_f(fint *info, fint *comm, fint *win, fint *ierr);
void ompi_win_create_dynamic_f(fint *info, fint *comm, fint *win, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_WIN, win_create_dynamic, info, comm, win);
}

void ompi_win_fence_f(fint *assertion, fint *win, fint *ierr);
void ompi_win_fence_f(fint *assertion, fint *win, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_WIN, win_fence, assertion, win);
}

void ompi_win_free_f(fint *win, fint *ierr);
void ompi_win_free_f(fint *win, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_WIN, win_free, win);
}

void ompi_win_start_f(fint *group, fint *assertion, fint *win, fint *ierr);
void ompi_win_start_f(fint *group, fint *assertion, fint *win, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_WIN, win_start, group, assertion, win);
}

void ompi_win_complete_f(fint *win, fint *ierr);
void ompi_win_complete_f(fint *win, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_WIN, win_complete, win);
}

/* MPI_WIN_TEST by Open MPI's, for sc_poll_away */
typedef struct {
    fint *win, rc;
} f_win_tested;

static int f_win_tested_over(void *ctx)
{
    f_win_tested *t = ctx;
    fint flag = 0;
    ompi.win_test(t->win, &flag, &t->rc);
    return t->rc != MPI_SUCCESS || flag;
}

void ompi_win_wait_f(fint *win, fint *ierr);
void ompi_win_wait_f(fint *win, fint *ierr)
{
    if (!sc_comm_engines_here() || !OMPI(win_test)) {
        fint rc = MPI_ERR_INTERN;
        if (OMPI(win_wait)) ompi.win_wait(win, &rc);
        set_ierr(ierr, rc);
        return;
    }
    f_win_tested t = {.win = win, .rc = MPI_SUCCESS};
    sc_poll_away(f_win_tested_over, &t, SC_AWAY_WIN);
    set_ierr(ierr, t.rc);
}

void ompi_win_test_f(fint *win, fint *flag, fint *ierr);
void ompi_win_test_f(fint *win, fint *flag, fint *ierr)
{
    POLLING_F(win_test, *flag, win, flag);
}

SC_F_NAMES(ompi_comm_split_type_f, mpi_comm_split_type, MPI_COMM_SPLIT_TYPE, fint *, fint *, fint *, fint *, fint *,
           fint *)
SC_F_NAMES(ompi_comm_dup_with_info_f, mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_comm_create_group_f, mpi_comm_create_group, MPI_COMM_CREATE_GROUP, fint *, fint *, fint *, fint *,
           fint *)
SC_F_NAMES(ompi_intercomm_create_f, mpi_intercomm_create, MPI_INTERCOMM_CREATE, fint *, fint *, fint *, fint *, fint *,
           fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_intercomm_merge_f, mpi_intercomm_merge, MPI_INTERCOMM_MERGE, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_cart_create_f, mpi_cart_create, MPI_CART_CREATE, fint *, fint *, fint *, fint *, fint *,
                    fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_cart_sub_f, mpi_cart_sub, MPI_CART_SUB, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_graph_create_f, mpi_graph_create, MPI_GRAPH_CREATE, fint *, fint *, fint *, fint *, fint *,
                    fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_dist_graph_create_f, mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE, fint *, fint *, fint *,
                    fint *, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_dist_graph_create_adjacent_f, mpi_dist_graph_create_adjacent, MPI_DIST_GRAPH_CREATE_ADJACENT,
                    fint *, fint *, fint *, fint *, fint *, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_comm_accept_f, mpi_comm_accept, MPI_COMM_ACCEPT, char *, fint *, fint *, fint *, fint *, fint *, int)
SC_F_NAMES(ompi_comm_connect_f, mpi_comm_connect, MPI_COMM_CONNECT, char *, fint *, fint *, fint *, fint *, fint *, int)
SC_F_NAMES(ompi_comm_disconnect_f, mpi_comm_disconnect, MPI_COMM_DISCONNECT, fint *, fint *)
SC_F_NAMES(ompi_comm_spawn_f, mpi_comm_spawn, MPI_COMM_SPAWN, char *, char *, fint *, fint *, fint *, fint *, fint *,
           fint *, fint *, int, int)
SC_F_NAMES(ompi_comm_spawn_multiple_f, mpi_comm_spawn_multiple, MPI_COMM_SPAWN_MULTIPLE, fint *, char *, char *,
           fint *, fint *, fint *, fint *, fint *, fint *, fint *, int, int)
SC_F_NAMES(ompi_comm_join_f, mpi_comm_join, MPI_COMM_JOIN, fint *, fint *, fint *)
SC_F_NAMES(ompi_file_open_f, mpi_file_open, MPI_FILE_OPEN, fint *, char *, fint *, fint *, fint *, fint *, int)
SC_F_NAMES(ompi_file_close_f, mpi_file_close, MPI_FILE_CLOSE, fint *, fint *)
SC_F_NAMES(ompi_file_set_view_f, mpi_file_set_view, MPI_FILE_SET_VIEW, fint *, off *, fint *, fint *, char *, fint *,
           fint *, int)
SC_F_NAMES(ompi_file_set_size_f, mpi_file_set_size, MPI_FILE_SET_SIZE, fint *, off *, fint *)
SC_F_NAMES(ompi_file_preallocate_f, mpi_file_preallocate, MPI_FILE_PREALLOCATE, fint *, off *, fint *)
SC_F_NAMES(ompi_file_sync_f, mpi_file_sync, MPI_FILE_SYNC, fint *, fint *)
#define FILE_ALL_ARGS fint *, void *, fint *, fint *, fint *, fint *
SC_F_NAMES(ompi_file_read_all_f, mpi_file_read_all, MPI_FILE_READ_ALL, FILE_ALL_ARGS)
SC_F_NAMES(ompi_file_write_all_f, mpi_file_write_all, MPI_FILE_WRITE_ALL, FILE_ALL_ARGS)
SC_F_NAMES(ompi_file_read_ordered_f, mpi_file_read_ordered, MPI_FILE_READ_ORDERED, FILE_ALL_ARGS)
SC_F_NAMES(ompi_file_write_ordered_f, mpi_file_write_ordered, MPI_FILE_WRITE_ORDERED, FILE_ALL_ARGS)
#define FILE_AT_ALL_ARGS fint *, off *, void *, fint *, fint *, fint *, fint *
SC_F_NAMES(ompi_file_read_at_all_f, mpi_file_read_at_all, MPI_FILE_READ_AT_ALL, FILE_AT_ALL_ARGS)
SC_F_NAMES(ompi_file_write_at_all_f, mpi_file_write_at_all, MPI_FILE_WRITE_AT_ALL, FILE_AT_ALL_ARGS)
SC_F_NAMES(ompi_file_seek_shared_f, mpi_file_seek_shared, MPI_FILE_SEEK_SHARED, fint *, off *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_file_set_atomicity_f, mpi_file_set_atomicity, MPI_FILE_SET_ATOMICITY, fint *, fint *, fint *)
#define FILE_BEGIN_ARGS fint *, void *, fint *, fint *, fint *
#define FILE_END_ARGS fint *, void *, fint *, fint *
SC_F_NAMES(ompi_file_read_all_begin_f, mpi_file_read_all_begin, MPI_FILE_READ_ALL_BEGIN, FILE_BEGIN_ARGS)
SC_F_NAMES(ompi_file_write_all_begin_f, mpi_file_write_all_begin, MPI_FILE_WRITE_ALL_BEGIN, FILE_BEGIN_ARGS)
SC_F_NAMES(ompi_file_read_ordered_begin_f, mpi_file_read_ordered_begin, MPI_FILE_READ_ORDERED_BEGIN, FILE_BEGIN_ARGS)
SC_F_NAMES(ompi_file_write_ordered_begin_f, mpi_file_write_ordered_begin, MPI_FILE_WRITE_ORDERED_BEGIN,
           FILE_BEGIN_ARGS)
SC_F_NAMES(ompi_file_read_at_all_begin_f, mpi_file_read_at_all_begin, MPI_FILE_READ_AT_ALL_BEGIN, fint *, off *,
           void *, fint *, fint *, fint *)
SC_F_NAMES(ompi_file_write_at_all_begin_f, mpi_file_write_at_all_begin, MPI_FILE_WRITE_AT_ALL_BEGIN, fint *, off *,
           void *, fint *, fint *, fint *)
SC_F_NAMES(ompi_file_read_all_end_f, mpi_file_read_all_end, MPI_FILE_READ_ALL_END, FILE_END_ARGS)
SC_F_NAMES(ompi_file_write_all_end_f, mpi_file_write_all_end, MPI_FILE_WRITE_ALL_END, FILE_END_ARGS)
SC_F_NAMES(ompi_file_read_ordered_end_f, mpi_file_read_ordered_end, MPI_FILE_READ_ORDERED_END, FILE_END_ARGS)
SC_F_NAMES(ompi_file_write_ordered_end_f, mpi_file_write_ordered_end, MPI_FILE_WRITE_ORDERED_END, FILE_END_ARGS)
SC_F_NAMES(ompi_file_read_at_all_end_f, mpi_file_read_at_all_end, MPI_FILE_READ_AT_ALL_END, FILE_END_ARGS)
SC_F_NAMES(ompi_file_write_at_all_end_f, mpi_file_write_at_all_end, MPI_FILE_WRITE_AT_ALL_END, FILE_END_ARGS)
SC_F_NAMES(ompi_win_create_f, mpi_win_create, MPI_WIN_CREATE, void *, MPI_Aint *, fint *, fint *, fint *, fint *,
           fint *)
#define WIN_ALLOCATE_ARGS MPI_Aint *, fint *, fint *, fint *, void *, fint *, fint *
SC_F_NAMES(ompi_win_allocate_f, mpi_win_allocate, MPI_WIN_ALLOCATE, WIN_ALLOCATE_ARGS)
SC_F_NAMES(ompi_win_allocate_cptr_f, mpi_win_allocate_cptr, MPI_WIN_ALLOCATE_CPTR, WIN_ALLOCATE_ARGS)
SC_F_NAMES(ompi_win_allocate_shared_f, mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED, WIN_ALLOCATE_ARGS)
SC_F_NAMES(ompi_win_allocate_shared_cptr_f, mpi_win_allocate_shared_cptr, MPI_WIN_ALLOCATE_SHARED_CPTR,
           WIN_ALLOCATE_ARGS)
SC_F_NAMES(ompi_win_create_dynamic_f, mpi_win_create_dynamic, MPI_WIN_CREATE_DYNAMIC, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_win_fence_f, mpi_win_fence, MPI_WIN_FENCE, fint *, fint *, fint *)
SC_F_NAMES(ompi_win_free_f, mpi_win_free, MPI_WIN_FREE, fint *, fint *)
SC_F_NAMES(ompi_win_start_f, mpi_win_start, MPI_WIN_START, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_win_complete_f, mpi_win_complete, MPI_WIN_COMPLETE, fint *, fint *)
SC_F_NAMES(ompi_win_wait_f, mpi_win_wait, MPI_WIN_WAIT, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_win_test_f, mpi_win_test, MPI_WIN_TEST, fint *, fint *, fint *)
#else
typedef int sc_fortran_setup_io_not_interposed;   /* an empty file is not C */
#endif
