#include "comm_state.h"
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;

static void free_subcomms(sc_comm *cs)
{
    if (cs->hier_local != MPI_COMM_NULL) PMPI_Comm_free(&cs->hier_local);
    if (cs->hier_leaders != MPI_COMM_NULL) PMPI_Comm_free(&cs->hier_leaders);
    cs->hier_state = 0;
}

/* Called by MPI when the user's communicator is freed (or the attribute deleted). */
static int delete_state(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)extra;
    sc_comm *cs = attr;
    if (sc_rt.active) free_subcomms(cs);
    free(cs);
    return MPI_SUCCESS;
}

int sc_comm_keyval_init(void)
{
    /* MPI_COMM_NULL_COPY_FN: a dup'ed communicator starts with fresh state. */
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval, NULL);
}

sc_comm *sc_comm_get(MPI_Comm comm)
{
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return NULL;
    void *attr = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &attr, &found) != MPI_SUCCESS) return NULL;
    if (found) return attr;
    sc_comm *cs = calloc(1, sizeof *cs);
    if (!cs) return NULL;
    cs->comm = comm;
    cs->hier_local = cs->hier_leaders = MPI_COMM_NULL;
    if (PMPI_Comm_test_inter(comm, &cs->is_inter) != MPI_SUCCESS ||
        (cs->is_inter ? PMPI_Comm_remote_size(comm, &cs->size) : PMPI_Comm_size(comm, &cs->size)) != MPI_SUCCESS ||
        PMPI_Comm_rank(comm, &cs->rank) != MPI_SUCCESS ||
        PMPI_Comm_set_attr(comm, keyval, cs) != MPI_SUCCESS) {
        free(cs);
        return NULL;
    }
    int row = sc_rt.next_ordinal < SC_REPORT_ROWS - 1 ? sc_rt.next_ordinal++ : SC_REPORT_ROWS - 1;
    cs->row = &sc_rt.rows[row];
    cs->row->instances += 1;
    if (cs->size > cs->row->size) cs->row->size = cs->size;
    return cs;
}

void sc_comm_finalize(void)
{
    if (keyval == MPI_KEYVAL_INVALID) return;
    /* Deleting the attribute on the predefined communicators runs
     * delete_state while MPI is still fully up; user communicators the
     * application never freed keep their (tiny) sub-communicators. */
    MPI_Comm predefined[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; i++) {
        void *attr;
        int found = 0;
        if (PMPI_Comm_get_attr(predefined[i], keyval, &attr, &found) == MPI_SUCCESS && found)
            PMPI_Comm_delete_attr(predefined[i], keyval);
    }
    sc_rt.active = 0;   /* later delete callbacks only free memory */
    PMPI_Comm_free_keyval(&keyval);
}
