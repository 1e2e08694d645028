#include "comm_state.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "report.h"
#include "stall_sentinel.h"

static int keyval = MPI_KEYVAL_INVALID;
static sc_comm *live;   /* every communicator with state, newest first */
/* Guards live, the report rows' assignment and every engine pointer
 * others may follow (threads: calls on different communicators at once).
 * Never held across a collective. */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
/* Engines running in this process: read on every point-to-point call and
 * wait, so one atomic load rather than the lock and a walk of live. */
static int engines_running;

static void unlink_state(sc_comm *cs)
{
    pthread_mutex_lock(&live_mu);
    for (sc_comm **p = &live; *p; p = &(*p)->next_live)
        if (*p == cs) {
            *p = cs->next_live;
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

static void fold_stats(sc_stats *row, const sc_engine_stats *st)
{
    row->rounds += (double)st->rounds;
    row->fresh_sum += st->fresh_sum;
    row->late_calls += (double)st->late_calls;
    row->fused_calls += (double)st->fused_calls;
    row->copied_bytes += (double)st->copied_bytes;
    row->polled += (double)st->polled;
    if ((double)st->max_staleness > row->max_stale) row->max_stale = (double)st->max_staleness;
    row->wait_s += st->wait_s;
    row->child_rounds += (double)st->child_rounds;
    row->relaxed += (double)st->relaxed;
    if (st->min_fresh >= 0 && (row->min_fresh <= 0 || (double)st->min_fresh < row->min_fresh))
        row->min_fresh = (double)st->min_fresh;
}

static void free_carry(sc_carry *c)
{
    for (int s = 0; c->buf && s < c->nslots; s++) free(c->buf[s]);
    free(c->buf);
    free(c->bytes);
    free(c->shapes);
    free(c->where);
    free(c->to);
    free(c);
}

static void keep_leftover(void *ctx, int slot, const void *buf, size_t bytes)
{
    sc_carry *c = ctx;
    if (slot < 0 || slot >= c->nslots || !(c->buf[slot] = malloc(bytes))) {
        sc_say(SC_SAY_ERROR, 1, "starcoll: out of memory keeping undelivered results; they are lost");
        return;
    }
    memcpy(c->buf[slot], buf, bytes);
    c->bytes[slot] = bytes;
}

/* An empty carry for the pattern now in force, or NULL. */
static sc_carry *new_carry(const sc_comm *cs)
{
    int n = sc_identity_slots(cs->id);
    sc_carry *c = calloc(1, sizeof *c);
    if (!c || n <= 0) {
        free(c);
        return NULL;
    }
    c->nslots = n;
    c->lineage = sc_identity_lineage(cs->id, &c->rot);
    c->marker_slot = sc_identity_marker_slot(cs->id, &c->marker_shape);
    c->shapes = malloc(sizeof(uint64_t) * (size_t)n);
    c->where = malloc(sizeof(uint64_t) * (size_t)n);
    c->buf = calloc((size_t)n, sizeof(void *));
    c->bytes = calloc((size_t)n, sizeof(size_t));
    c->to = malloc(sizeof(int) * (size_t)n);
    if (!c->shapes || !c->where || !c->buf || !c->bytes || !c->to) {
        free_carry(c);
        return NULL;
    }
    c->kept = sc_identity_buffers_kept(cs->id);
    for (int s = 0; s < n; s++) {
        c->shapes[s] = sc_identity_slot_shape(cs->id, s);
        c->where[s] = sc_identity_slot_buffer(cs->id, s);
        c->to[s] = -1;
    }
    return c;
}

void sc_comm_stop_engine(sc_comm *cs, int keep_leftovers)
{
    if (!cs->engine) return;
    pthread_mutex_lock(&live_mu);   /* other threads no longer see it */
    sc_engine *e = cs->engine;
    cs->engine = NULL;
    __atomic_sub_fetch(&engines_running, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&live_mu);
    sc_engine_announce_leave(e);
    sc_engine_serve_while_direct(&e, 1);
    sc_engine_stats st;
    sc_carry *c = keep_leftovers ? new_carry(cs) : NULL;
    if (keep_leftovers && !c) sc_say(SC_SAY_ERROR, 1, "starcoll: out of memory keeping undelivered results; they are lost");
    sc_engine_leave(e, &st, c ? keep_leftover : NULL, c);
    fold_stats(cs->row, &st);
    int any = 0;
    for (int s = 0; c && s < c->nslots; s++) any |= c->buf[s] != NULL;
    if (any) {
        c->next = cs->carry;
        cs->carry = c;
    } else if (c) {
        free_carry(c);
    }
    /* the slots they were mapped to belonged to the pattern just dropped */
    for (sc_carry *k = cs->carry; k; k = k->next)
        for (int s = 0; s < k->nslots; s++) k->to[s] = -1;
}

void sc_comm_stop_engine_here(sc_comm *cs)
{
    if (!cs->engine) return;
    sc_engine *stopping = cs->engine;
    if (sc_comm_engines() > 1) sc_comm_away(stopping, 1, SC_AWAY_OTHER_COMM);
    sc_comm_stop_engine(cs, 1);
    if (sc_comm_engines() > 0) sc_comm_away(NULL, 0, SC_AWAY_OTHER_COMM);
}

/* Carry c's slot s is the current pattern's slot (s + shift) mod n in
 * shapes? */
static int shapes_match(const sc_comm *cs, const sc_carry *c, long shift)
{
    int n = c->nslots;
    for (int s = 0; s < n; s++)
        if (sc_identity_slot_shape(cs->id, (int)((s + shift) % n)) != c->shapes[s]) return 0;
    return 1;
}

/* The shift under which carry c's slot s is the current pattern's slot
 * (s + shift) mod n: for a carry of this same pattern (resumed), the turn
 * of its slots since; else the one shift under which every shape matches;
 * of several (a step of one shape), the one that puts the gradient after
 * the same per-step call (a loss) in the same slot, where both patterns
 * have one.  -1: none, or several and no such call (a step of equal
 * blocks learned again from another block; where buffers are kept per
 * tensor, its results are paid at each tensor's next call while it is
 * learned: sc_comm_pay_carry_kept).  From agreed patterns only: the same
 * on every rank. */
static long carry_shift(const sc_comm *cs, const sc_carry *c)
{
    int n = sc_identity_slots(cs->id), rot;
    if (c->nslots != n) return -1;
    if (sc_identity_lineage(cs->id, &rot) == c->lineage) return ((c->rot - rot) % n + n) % n;
    long found = -1;
    int matches = 0;
    for (int shift = 0; shift < n; shift++)
        if (shapes_match(cs, c, shift) && matches++ == 0) found = shift;
    if (matches <= 1) return found;
    uint64_t marker = 0;
    int now = sc_identity_marker_slot(cs->id, &marker);
    if (now < 0 || c->marker_slot < 0 || marker != c->marker_shape) return -1;
    long shift = ((now - c->marker_slot) % n + n) % n;
    return shapes_match(cs, c, shift) ? shift : -1;
}

void sc_comm_map_carries(sc_comm *cs)
{
    int n = sc_identity_slots(cs->id);
    for (sc_carry *c = cs->carry; c; c = c->next) {
        long shift = carry_shift(cs, c);
        for (int s = 0; shift >= 0 && s < n; s++) c->to[s] = (int)((s + shift) % n);
    }
}

/* Frees the carries whose every result was paid. */
static void drop_paid_carries(sc_comm *cs)
{
    for (sc_carry **p = &cs->carry; *p;) {
        sc_carry *c = *p;
        int left = 0;
        for (int s = 0; s < c->nslots && !left; s++) left = c->buf[s] != NULL;
        if (left) {
            p = &c->next;
        } else {
            *p = c->next;
            free_carry(c);
        }
    }
}

/* Adds carry c's result for its old slot s into recvbuf; it is paid. */
static void pay_slot(sc_carry *c, int s, void *recvbuf, long count, int dkind)
{
    sc_sum_into(recvbuf, c->buf[s], (size_t)count, (sc_dkind)dkind);
    free(c->buf[s]);
    c->buf[s] = NULL;
}

void sc_comm_pay_carry(sc_comm *cs, int slot, void *recvbuf, long count, int dkind)
{
    int paid = 0;
    for (sc_carry *c = cs->carry; c; c = c->next)
        for (int s = 0; s < c->nslots; s++)
            if (c->buf[s] && c->to[s] == slot) {
                pay_slot(c, s, recvbuf, count, dkind);
                paid = 1;
            }
    if (paid) drop_paid_carries(cs);
}

void sc_comm_pay_carry_kept(sc_comm *cs, uint64_t where, uint64_t shape, void *recvbuf, long count, int dkind)
{
    int paid = 0;
    for (sc_carry *c = cs->carry; c && where; c = c->next)
        for (int s = 0; c->kept && s < c->nslots; s++)
            if (c->buf[s] && c->where[s] == where && c->shapes[s] == shape) {
                pay_slot(c, s, recvbuf, count, dkind);
                paid = 1;
            }
    if (paid) drop_paid_carries(cs);
}

int sc_comm_owes_carry(const sc_comm *cs, int slot)
{
    for (const sc_carry *c = cs->carry; c; c = c->next)
        for (int s = 0; s < c->nslots; s++)
            if (c->buf[s] && c->to[s] == slot) return 1;
    return 0;
}

void sc_comm_count_carries(void)
{
    for (sc_comm *cs = live; cs; cs = cs->next_live)
        for (sc_carry *c = cs->carry; c; c = c->next)
            for (int s = 0; s < c->nslots; s++) cs->row->carries_left += c->buf[s] != NULL;
}

static void free_subcomms(sc_comm *cs)
{
    sc_comm_stop_engine(cs, 0);
    sc_hier_free(&cs->hier);
}

static sc_comm *make_state(MPI_Comm comm);

/* Called by MPI when the user's communicator is freed (or the attribute deleted). */
static int delete_state(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)extra;
    sc_comm *cs = attr;
    if (sc_rt.active) free_subcomms(cs);
    if (sc_rt.active && cs->agree_comm != MPI_COMM_NULL) PMPI_Comm_free(&cs->agree_comm);
    unlink_state(cs);
    for (sc_carry *c = cs->carry, *nx; c; c = nx) {
        nx = c->next;
        free_carry(c);
    }
    sc_identity_free(cs->id);
    sc_wprobe_free(cs->wprobe);
    sc_nccl_free(&cs->nccl);
    free(cs->lockstep_buf);
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
    pthread_mutex_lock(&live_mu);   /* made once, whichever thread comes first */
    sc_comm *cs = make_state(comm);
    pthread_mutex_unlock(&live_mu);
    return cs;
}

/* The world rank of comm's rank 0 (of its local group, for an
 * intercommunicator): with the order of first use there, what names the
 * communicator alike on all its ranks.  -1 where it cannot be had. */
static int leader_world_rank(MPI_Comm comm)
{
    MPI_Group mine = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    int zero = 0, leader = -1;
    if (PMPI_Comm_group(comm, &mine) != MPI_SUCCESS || PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS ||
        PMPI_Group_translate_ranks(mine, 1, &zero, world, &leader) != MPI_SUCCESS || leader == MPI_UNDEFINED)
        leader = -1;
    if (mine != MPI_GROUP_NULL) PMPI_Group_free(&mine);
    if (world != MPI_GROUP_NULL) PMPI_Group_free(&world);
    return leader;
}

/* live_mu held */
static sc_comm *make_state(MPI_Comm comm)
{
    void *attr = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &attr, &found) != MPI_SUCCESS) return NULL;
    if (found) return attr;
    sc_comm *cs = calloc(1, sizeof *cs);
    if (!cs) return NULL;
    cs->comm = comm;
    cs->agree_comm = MPI_COMM_NULL;
    cs->learn_throttled0 = -1;
    cs->learn_cpu0 = cs->learn_runq0 = -1;
    sc_hier_init(&cs->hier);
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
    cs->row->label_ord = row;   /* this rank's order, until the first tolerant call agrees on its rank 0's */
    cs->row->leader = leader_world_rank(comm);
    sc_report_label((int)cs->row->label_ord, (int)cs->row->leader, cs->label, sizeof cs->label);
    return cs;
}

int sc_comm_crossed(const sc_comm *cs, char *other, size_t len)
{
    MPI_Group mine = MPI_GROUP_NULL;
    if (PMPI_Comm_group(cs->comm, &mine) != MPI_SUCCESS) return 0;
    int found = 0;
    pthread_mutex_lock(&live_mu);
    for (sc_comm *o = live; o && !found; o = o->next_live) {
        if (o == cs || o->is_inter || o->size < 2 || o->eligible_calls == 0) continue;
        MPI_Group theirs = MPI_GROUP_NULL, both = MPI_GROUP_NULL;
        int n = -1;
        if (PMPI_Comm_group(o->comm, &theirs) == MPI_SUCCESS &&
            PMPI_Group_intersection(mine, theirs, &both) == MPI_SUCCESS && PMPI_Group_size(both, &n) != MPI_SUCCESS)
            n = -1;
        if (n >= 0 && n < (cs->size < o->size ? cs->size : o->size)) {
            found = 1;
            snprintf(other, len, "%s", o->label);
        }
        if (both != MPI_GROUP_NULL) PMPI_Group_free(&both);
        if (theirs != MPI_GROUP_NULL) PMPI_Group_free(&theirs);
    }
    pthread_mutex_unlock(&live_mu);
    PMPI_Group_free(&mine);
    return found;
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

/* This thread polls requests that are not complete (sc_comm_polling). */
static __thread int polling;

void sc_comm_away(sc_engine *except, int away, int what)
{
    if (!away && !except) polling = 0;   /* back everywhere */
    pthread_mutex_lock(&live_mu);
    for (sc_comm *cs = live; cs; cs = cs->next_live)
        if (cs->engine && cs->engine != except) sc_engine_away(cs->engine, away, what);
    pthread_mutex_unlock(&live_mu);
}

void sc_comm_polling(int on)
{
    if (on == polling || !sc_comm_engines_here()) return;
    sc_comm_away(NULL, on, SC_AWAY_TEST);
    polling = on;
}

int sc_comm_engines_here(void)
{
    return sc_rt.active ? sc_comm_engines() : 0;
}

int sc_comm_engines(void)
{
    return __atomic_load_n(&engines_running, __ATOMIC_ACQUIRE);
}

void sc_comm_set_engine(sc_comm *cs, sc_engine *e)
{
    if (!e) return;
    pthread_mutex_lock(&live_mu);
    cs->engine = e;
    __atomic_add_fetch(&engines_running, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&live_mu);
    sc_sentinel_start();
}

int sc_comm_look_engines(double now, sc_engine_view *views, int max)
{
    int n = 0;
    pthread_mutex_lock(&live_mu);   /* an engine stays while it is listed */
    for (sc_comm *cs = live; cs && n < max; cs = cs->next_live)
        if (cs->engine) sc_engine_look(cs->engine, now, &views[n++]);
    pthread_mutex_unlock(&live_mu);
    return n;
}

int sc_comm_enter(sc_comm *cs)
{
    int idle = 0;
    return __atomic_compare_exchange_n(&cs->busy, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void sc_comm_leave(sc_comm *cs)
{
    __atomic_store_n(&cs->busy, 0, __ATOMIC_RELEASE);
}

void sc_comm_flush_all(void)
{
    pthread_mutex_lock(&live_mu);
    for (sc_comm *cs = live; cs; cs = cs->next_live)
        if (cs->engine) sc_engine_flush_next(cs->engine);
    pthread_mutex_unlock(&live_mu);
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
