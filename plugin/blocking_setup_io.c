/* Collective calls that reduce nothing but block until every rank comes:
 * making communicators (spawning processes, joining groups), collective
 * MPI-IO (a checkpoint every few steps, split collectives too),
 * and window creation, fences and freeing; and a window's active-target
 * epochs, which wait for the neighbours named.  As the collectives in
 * blocking.c: while tolerant engines run, a rank blocked in one is away,
 * so no round waits for it.  Measured here, 4 ranks in quorum, one 3x
 * slow, 60 steps: a checkpoint every 10 steps (MPI_File_open,
 * MPI_File_write_at_all, MPI_File_close) took the job 65 s against 3.8 s
 * under sync, each checkpoint ending a 10 s stall; an MPI_Comm_split
 * every 10 steps, the same.  Independent file I/O waits for no other
 * rank and passes through. */
#include <mpi.h>
#include "comm_state.h"
#include "away_around.h"
#include "polite_wait.h"

/* ---- communicators ------------------------------------------------------ */

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_split(comm, color, key, newcomm));
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_dup(comm, newcomm));
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_dup_with_info(comm, info, newcomm));
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_create(comm, group, newcomm));
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_create_group(comm, group, tag, newcomm));
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm, int remote_leader, int tag,
                         MPI_Comm *newintercomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE,
                PMPI_Intercomm_create(local_comm, local_leader, bridge_comm, remote_leader, tag, newintercomm));
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Intercomm_merge(intercomm, high, newintracomm));
}

int MPI_Cart_create(MPI_Comm old_comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *comm_cart)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Cart_create(old_comm, ndims, dims, periods, reorder, comm_cart));
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *new_comm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Cart_sub(comm, remain_dims, new_comm));
}

int MPI_Graph_create(MPI_Comm old_comm, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *comm_graph)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Graph_create(old_comm, nnodes, index, edges, reorder, comm_graph));
}

int MPI_Dist_graph_create(MPI_Comm old_comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *comm_dist_graph)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Dist_graph_create(old_comm, n, sources, degrees, destinations, weights, info,
                                                            reorder, comm_dist_graph));
}

int MPI_Dist_graph_create_adjacent(MPI_Comm old_comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE,
                PMPI_Dist_graph_create_adjacent(old_comm, indegree, sources, sourceweights, outdegree, destinations,
                                                destweights, info, reorder, comm_dist_graph));
}

/* Two groups joined through a port (a job of two halves, or a client and
 * a server): each side waits for all of both to come, and the parting
 * waits for pending traffic. */
int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_accept(port_name, info, root, comm, newcomm));
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_connect(port_name, info, root, comm, newcomm));
}

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_disconnect(comm));
}

/* Collective over comm, and each waits for the new processes' MPI_Init: a
 * helper spawned every 20 steps cost a 10 s stall a time under tolerant
 * modes (starcoll_loops --end-call spawn). */
int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm *intercomm, int array_of_errcodes[])
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE,
                PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes));
}

int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                            const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
                            MPI_Comm *intercomm, int array_of_errcodes[])
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv,
                                                              array_of_maxprocs, array_of_info, root, comm,
                                                              intercomm, array_of_errcodes));
}

int MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    AWAY_AROUND(SC_AWAY_COMM_CREATE, PMPI_Comm_join(fd, intercomm));
}

/* ---- collective MPI-IO -------------------------------------------------- */

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_open(comm, filename, amode, info, fh));
}

int MPI_File_close(MPI_File *fh)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_close(fh));
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                      MPI_Info info)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_set_view(fh, disp, etype, filetype, datarep, info));
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_set_size(fh, size));
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_preallocate(fh, size));
}

int MPI_File_sync(MPI_File fh)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_sync(fh));
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_all(fh, buf, count, dt, status));
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_all(fh, buf, count, dt, status));
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype dt, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_at_all(fh, offset, buf, count, dt, status));
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype dt,
                          MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_at_all(fh, offset, buf, count, dt, status));
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_ordered(fh, buf, count, dt, status));
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_ordered(fh, buf, count, dt, status));
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_seek_shared(fh, offset, whence));
}

int MPI_File_set_atomicity(MPI_File fh, int flag)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_set_atomicity(fh, flag));
}

/* Split collectives, a checkpoint written behind the compute: Open MPI's
 * ompio starts the collective in _begin (or does all of it there) and
 * waits for the others in _end, inside MPI, where MPI_Wait's wrapper
 * never sees it; either may block. */
int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype dt)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_all_begin(fh, buf, count, dt));
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_all_end(fh, buf, status));
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype dt)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_all_begin(fh, buf, count, dt));
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_all_end(fh, buf, status));
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype dt)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_at_all_begin(fh, offset, buf, count, dt));
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_at_all_end(fh, buf, status));
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype dt)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_at_all_begin(fh, offset, buf, count, dt));
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_at_all_end(fh, buf, status));
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype dt)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_ordered_begin(fh, buf, count, dt));
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_read_ordered_end(fh, buf, status));
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype dt)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_ordered_begin(fh, buf, count, dt));
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    AWAY_AROUND(SC_AWAY_FILE, PMPI_File_write_ordered_end(fh, buf, status));
}

/* ---- windows ------------------------------------------------------------ */

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_create(base, size, disp_unit, info, comm, win));
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_create_dynamic(info, comm, win));
}

int MPI_Win_fence(int assertion, MPI_Win win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_fence(assertion, win));
}

int MPI_Win_free(MPI_Win *win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_free(win));
}

/* Active target by groups (post, start, complete, wait): a halo exchange
 * whose neighbour is a straggler waits in MPI_Win_start or _complete for
 * its post, in MPI_Win_wait for its puts.  Unseen, a stencil code's
 * epoch every 10 steps, 4 ranks in quorum, one 3x slow, cost a 10 s stall
 * or hung the job (starcoll_loops --end-call pscw).  MPI_Win_post does not
 * wait.  MPI_Win_wait is made of MPI_Win_test, as MPI_Wait is of MPI_Test
 * in blocking_p2p.c: a neighbour already done costs no notice.  Passive
 * target (MPI_Win_lock, _unlock, _flush) waits for no application thread,
 * only for MPI's progress at the target (an engine thread there makes it),
 * unless a lock's holder keeps it across its compute; it passes through. */
int MPI_Win_start(MPI_Group group, int assertion, MPI_Win win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_start(group, assertion, win));
}

int MPI_Win_complete(MPI_Win win)
{
    AWAY_AROUND(SC_AWAY_WIN, PMPI_Win_complete(win));
}

typedef struct {
    MPI_Win win;
    int rc;
} win_tested;

static int win_tested_over(void *ctx)
{
    win_tested *t = ctx;
    int done = 0;
    t->rc = PMPI_Win_test(t->win, &done);
    return t->rc != MPI_SUCCESS || done;
}

int MPI_Win_wait(MPI_Win win)
{
    if (!sc_comm_engines_here()) return PMPI_Win_wait(win);
    win_tested t = {.win = win};
    sc_poll_away(win_tested_over, &t, SC_AWAY_WIN);
    return t.rc;
}

/* polling the exposure epoch's end is waiting too (MPI_Test, blocking.c) */
int MPI_Win_test(MPI_Win win, int *flag)
{
    int rc = PMPI_Win_test(win, flag);
    if (rc == MPI_SUCCESS) sc_comm_polling(!*flag);
    return rc;
}
