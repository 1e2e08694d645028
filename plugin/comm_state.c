#include "comm_state.h"
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;
static sc_comm *live;   /* every communicator with state, newest first */

static void unlink_state(sc_comm *cs)
{
    for (sc_comm **p = &live; *p; p = &(*p)->next_live)
        if (*p == cs) {
            *p = cs->next_live;
            return;
        }
}

static void fold_stats(sc_stats *row, const sc_engine_stats *st)
{
    row->rounds += (double)st->rounds;
    row->fresh_sum += st->fresh_sum;
    row->late_calls += (double)st->late_calls;
    if ((double)st->max_staleness > row->max_stale) row->max_stale = (double)st->max_staleness;
    row->wait_s += st->wait_s;
    row->child_rounds += (double)st->child_rounds;
    row->relaxed += (double)st->relaxed;
    if (st->min_fresh >= 0 && (row->min_fresh <= 0 || (double)st->min_fresh < row->min_fresh))
        row->min_fresh = (double)st->min_fresh;
}

static void keep_leftover(void *ctx, long count, int dkind, const void *buf, size_t bytes)
{
    sc_comm *cs = ctx;
    sc_carry *c = calloc(1, sizeof *c);
    if (!c || !(c->buf = malloc(bytes))) {
        free(c);
        sc_say(SC_SAY_ERROR, 1, "starcoll: out of memory keeping undelivered results; they are lost");
        return;
    }
    memcpy(c->buf, buf, bytes);
    c->sig.count = count;
    c->sig.dkind = dkind;
    c->next = cs->carry;
    cs->carry = c;
}

void sc_comm_stop_engine(sc_comm *cs, int keep_leftovers)
{
    if (!cs->engine) return;
    sc_engine_announce_leave(cs->engine);
    sc_engine_serve_while_direct(&cs->engine, 1);
    sc_engine_stats st;
    sc_engine_leave(cs->engine, &st, keep_leftovers ? keep_leftover : NULL, cs);
    cs->engine = NULL;
    fold_stats(cs->row, &st);
}

static void free_subcomms(sc_comm *cs)
{
    sc_comm_stop_engine(cs, 0);
    sc_hier_free(&cs->hier);
}

/* Called by MPI when the user's communicator is freed (or the attribute deleted). */
static int delete_state(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)extra;
    sc_comm *cs = attr;
    if (sc_rt.active) free_subcomms(cs);
    unlink_state(cs);
    for (sc_carry *c = cs->carry, *nx; c; c = nx) {
        nx = c->next;
        free(c->buf);
        free(c);
    }
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
    sc_hier_init(&cs->hier);
    sc_pattern_init(&cs->pattern);
    if (PMPI_Comm_test_inter(comm, &cs->is_inter) != MPI_SUCCESS ||
        (cs->is_inter ? PMPI_Comm_remote_size(comm, &cs->size) : PMPI_Comm_size(comm, &cs->size)) != MPI_SUCCESS ||
        PMPI_Comm_rank(comm, &cs->rank) != MPI_SUCCESS ||
        PMPI_Comm_set_attr(comm, keyval, cs) != MPI_SUCCESS) {
        free(cs);
        return NULL;
    }
    cs->next_live = live;
    live = cs;
    int row = sc_rt.next_ordinal < SC_REPORT_ROWS - 1 ? sc_rt.next_ordinal++ : SC_REPORT_ROWS - 1;
    cs->row = &sc_rt.rows[row];
    cs->row->instances += 1;
    if (cs->size > cs->row->size) cs->row->size = cs->size;
    return cs;
}

void sc_comm_stop_all_engines(void)
{
    /* Announce leaving everywhere first, then wait: waiting on one
     * communicator before leaving the next could deadlock with a rank that
     * leaves them in another order. */
    int n = 0;
    for (sc_comm *cs = live; cs; cs = cs->next_live)
        if (cs->engine) {
            sc_engine_announce_leave(cs->engine);
            n++;
        }
    sc_engine **engines = calloc((size_t)(n ? n : 1), sizeof *engines);
    if (engines) {
        n = 0;
        for (sc_comm *cs = live; cs; cs = cs->next_live)
            if (cs->engine) engines[n++] = cs->engine;
        sc_engine_serve_while_direct(engines, n);
        free(engines);
    }
    for (sc_comm *cs = live; cs; cs = cs->next_live) sc_comm_stop_engine(cs, 0);
}

void sc_comm_away(sc_engine *except, int away)
{
    for (sc_comm *cs = live; cs; cs = cs->next_live)
        if (cs->engine && cs->engine != except) sc_engine_away(cs->engine, away);
}

int sc_comm_engines_here(void)
{
    /* Only the thread that initialized MPI deposits; other threads' calls
     * are none of the engines' business (and must not walk the list). */
    return sc_rt.active && pthread_equal(pthread_self(), sc_rt.init_thread) ? sc_comm_engines() : 0;
}

int sc_comm_engines(void)
{
    int n = 0;
    for (sc_comm *cs = live; cs; cs = cs->next_live) n += cs->engine != NULL;
    return n;
}

void sc_comm_flush_all(void)
{
    for (sc_comm *cs = live; cs; cs = cs->next_live)
        if (cs->engine) sc_engine_flush_next(cs->engine);
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
