/* groups: the ring and its children (the paper's all-reduce architecture).
 *
 * Ranks predicted fast (members) reduce among themselves, the ring
 * (point-to-point on the data communicator, ring_allreduce.c).  A predicted
 * straggler (child) sends its deposits to its parent, a ring member, with
 * nonblocking point-to-point; the parent announces them to the coordinator,
 * folds them into the rounds the coordinator says include them, and sends
 * the round results back, accumulating them while the child's link is
 * busy.  Neither the child's CPU nor its link is on the ring's critical
 * path.
 *
 * Ownership across topology changes: a child keeps each deposit until a
 * result says it was included, so when the topology changes the parent
 * drops what it holds and the child sends (or, as a member, announces)
 * again whatever is not yet included.  Messages carry the topology epoch
 * so late ones from an old topology are recognised, and so do a parent's
 * notices for its children (a child may keep its parent across a change).
 * A child's runs are taken whole: a flush never cuts one (round_rules.c). */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "mode_hier.h"
#include "polled_coll.h"
#include "ring_allreduce.h"
#include "runtime.h"

static void free_entries(sc_deposit *d)
{
    for (sc_deposit *nx; d; d = nx) {
        nx = d->next;
        free(d->buf);
        free(d);
    }
}

int sc_groups_init(sc_engine *e)
{
    for (int s = 0; s < e->nslots; s++)
        if (e->slots[s].bytes > e->max_bytes) e->max_bytes = e->slots[s].bytes;
    e->children = calloc((size_t)e->n, sizeof(sc_child));
    e->res_buf = malloc(e->max_bytes);
    e->dep_buf = malloc(e->max_bytes);
    e->ring_members = malloc(sizeof(int) * (size_t)e->n);
    e->ring_buf = malloc(e->max_bytes);
    return e->children && e->res_buf && e->dep_buf && e->ring_members && e->ring_buf ? 0 : -1;
}

static void child_free(sc_engine *e, sc_child *c)
{
    for (int s = 0; c->held && s < e->nslots; s++) free_entries(c->held[s]);
    for (int s = 0; c->owed && s < e->nslots; s++) free(c->owed[s]);
    free(c->held);
    free(c->owed);
    free(c->owed_incl);
    free(c->owed_seq);
    free(c->owed_rounds);
    free(c->owed_any);
    free(c->sendbuf);
    memset(c, 0, sizeof *c);
}

void sc_groups_free(sc_engine *e)
{
    for (int r = 0; e->children && r < e->n; r++) child_free(e, &e->children[r]);
    free(e->children);
    free_entries(e->early);
    free(e->res_buf);
    free(e->dep_buf);
    free(e->ring_members);
    free(e->ring_buf);
}

static int child_alloc(sc_engine *e, sc_child *c)
{
    if (c->held) return 0;
    c->held = calloc((size_t)e->nslots, sizeof(sc_deposit *));
    c->owed = calloc((size_t)e->nslots, sizeof(void *));
    c->owed_incl = calloc((size_t)e->nslots, sizeof(long));
    c->owed_seq = calloc((size_t)e->nslots, sizeof(long));
    c->owed_rounds = calloc((size_t)e->nslots, sizeof(long));
    c->owed_any = calloc((size_t)e->nslots, sizeof(int));
    c->sendbuf = malloc(e->max_bytes);
    for (int s = 0; c->owed && s < e->nslots; s++) c->owed[s] = calloc(1, e->slots[s].bytes);
    int ok = c->held && c->owed && c->owed_incl && c->owed_seq && c->owed_rounds && c->owed_any && c->sendbuf;
    for (int s = 0; ok && s < e->nslots; s++) ok = c->owed[s] != NULL;
    return ok ? 0 : -1;
}

static void announce(sc_engine *e, int slot, long count, long flags, int for_rank, long pos)
{
    sc_engine_failed(e, sc_engine_deposit_note(e, slot, count, flags, for_rank, pos));
}

/* A child's deposit (range idx..upto) reaches its parent: hold it until a
 * round includes it, and announce it on the child's behalf. */
static void hold(sc_engine *e, int child, sc_deposit *d, int slot)
{
    sc_child *c = &e->children[child];
    sc_deposit **p = &c->held[slot];
    while (*p) p = &(*p)->next;
    d->next = NULL;
    *p = d;
    announce(e, slot, d->upto, d->flags, child, d->pos);
}

/* This rank's deposits on sl that rounds have included (mu held): out of
 * its list; a borrowed one is the caller's own buffer, nothing to keep. */
static void drop_included(sc_slot *sl, long upto)
{
    while (sl->head && sl->head->upto <= upto) {
        sc_deposit *d = sl->head;
        sl->head = d->next;
        if (!sl->head) sl->tail = NULL;
        if (d->borrowed) {
            free(d);
        } else {
            d->next = sl->spare;
            sl->spare = d;
        }
    }
}

int sc_groups_apply(sc_engine *e, const long *parent, long epoch, const long *included, const long *closed)
{
    for (int r = 0; r < e->n; r++) e->parent[r] = (int)parent[r];
    e->epoch = epoch;
    /* Parent side: drop what is held (the owners send it again); results
     * still owed to former children keep flowing. */
    for (int r = 0; r < e->n; r++) {
        sc_child *c = &e->children[r];
        for (int s = 0; c->held && s < e->nslots; s++) {
            free_entries(c->held[s]);
            c->held[s] = NULL;
        }
        c->active = parent[r] == e->rank;
        if (c->active && child_alloc(e, c) != 0) return MPI_ERR_NO_MEM;
    }
    /* This rank: as a child, send again everything not yet included; as a
     * member, announce it to the coordinator.  What a former parent has
     * included already is dropped first, though its result may still be on
     * its way: sent or reduced again, it would count twice. */
    pthread_mutex_lock(&e->mu);
    e->my_parent = (int)parent[e->rank];
    for (int s = 0; s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        drop_included(sl, included[s]);   /* a waiting caller still waits for the result */
        if (closed && closed[s] > sl->seq_seen) sl->seq_seen = closed[s];   /* a former parent's may be on its way */
        for (sc_deposit *d = sl->head; d; d = d->next) d->sent = 0;
        /* The count of the last deposit made, not of the calls: a fused
         * member's call counts before its group deposit exists
         * (engine_fusion.c), and a count announced ahead of its deposit
         * would pass for included and be dropped at the next change. */
        long last = sl->tail ? sl->tail->upto : 0;
        if (e->my_parent < 0 && sl->head && last > sl->included_self && last > included[s]) {
            long flags = (sl->tail->flags & NOTE_KIND_FLAGS) | (e->waiting_slot == s || sl->nb ? NOTE_WAITS : 0);
            long calls = last, pos = sl->tail->pos;
            pthread_mutex_unlock(&e->mu);
            announce(e, s, calls, flags, -1, pos);
            pthread_mutex_lock(&e->mu);
        }
    }
    pthread_mutex_unlock(&e->mu);
    /* Deposits that arrived ahead of this topology are now current. */
    sc_deposit *early = e->early;
    e->early = NULL;
    for (sc_deposit *d = early, *nx; d; d = nx) {
        nx = d->next;
        if (d->epoch == e->epoch && e->children[d->from].active) {
            hold(e, d->from, d, d->slot);
        } else {
            d->next = NULL;
            free_entries(d);
        }
    }
    e->ring_epoch = -1;
    return MPI_SUCCESS;
}

int sc_groups_ring_allreduce(sc_engine *e, sc_mode mode, const void *sendbuf, void *recvbuf, int s, int polled)
{
    const sc_slot *sl = &e->slots[s];
    if (e->ring_epoch != e->epoch) {
        e->ring_m = 0;
        e->ring_me = -1;
        for (int r = 0; r < e->n; r++) {
            if (e->parent[r] != -1) continue;
            if (r == e->rank) e->ring_me = e->ring_m;
            e->ring_members[e->ring_m++] = r;
        }
        e->ring_epoch = e->epoch;
    }
    if (e->ring_m == e->n) {
        if (mode == SC_MODE_HIER)
            return sc_hier_allreduce(&e->hier, e->data, sc_rt.policy.group_size, sendbuf, recvbuf, (int)sl->count,
                                     sl->dt, polled);
        return sc_polled_allreduce(sendbuf, recvbuf, (int)sl->count, sl->dt, MPI_SUM, e->data, polled);
    }
    if (e->ring_me < 0) return MPI_ERR_INTERN;   /* a child never runs a round */
    return sc_ring_allreduce(sendbuf, recvbuf, sl->count, sl->dt, sl->dk, e->ring_members, e->ring_m, e->ring_me,
                             e->data, TAG_RING, e->ring_buf, polled);
}

int sc_groups_children_hold(const sc_engine *e, int s, const long *incl)
{
    for (int r = 0; r < e->n; r++) {
        const sc_child *c = &e->children[r];
        if (c->active && c->held && c->held[s] && c->held[s]->upto <= incl[r]) return 1;
    }
    return 0;
}

long sc_groups_take_children(sc_engine *e, int s, const long *incl)
{
    long n = 0;
    sc_slot *sl = &e->slots[s];
    for (int r = 0; r < e->n; r++) {
        sc_child *c = &e->children[r];
        if (!c->active || !c->held) continue;
        while (c->held[s] && c->held[s]->upto <= incl[r]) {
            sc_deposit *d = c->held[s];
            c->held[s] = d->next;
            sc_sum_into(sl->scratch, d->buf, (size_t)sl->count, sl->dk);
            n += d->upto - d->idx;
            d->next = NULL;
            free_entries(d);
        }
    }
    return n;
}

void sc_groups_owe(sc_engine *e, int s, const void *result, const long *incl, long seq)
{
    for (int r = 0; r < e->n; r++) {
        sc_child *c = &e->children[r];
        if (!c->active) continue;
        sc_sum_into(c->owed[s], result, (size_t)e->slots[s].count, e->slots[s].dk);
        c->owed_incl[s] = incl[r];
        c->owed_seq[s] = seq;
        c->owed_rounds[s]++;
        c->owed_any[s] = 1;
    }
}

/* Parent side: deposits arriving from children (any source: late ones from
 * a former child are recognised by their epoch and dropped). */
static int receive_deposits(sc_engine *e)
{
    int got = 0, src;
    long h[CD_LEN];
    while (sc_recv_next(e->data, TAG_CDEP_H, MPI_LONG, h, CD_LEN, &src) == 1) {
        int slot = (int)h[CD_SLOT];
        if (slot < 0 || slot >= e->nslots) break;
        sc_slot *sl = &e->slots[slot];
        sc_deposit *d = calloc(1, sizeof *d);
        void *buf = d ? malloc(sl->bytes) : NULL;
        int rc = PMPI_Recv(buf ? buf : e->res_buf, (int)sl->count, sl->dt, src, TAG_CDEP_B, e->data, MPI_STATUS_IGNORE);
        got = 1;
        if (sc_engine_failed(e, rc)) {   /* a half-received buffer is no deposit */
            free(buf);
            free(d);
            break;
        }
        if (!buf) {
            free(d);
            sc_say(SC_SAY_ERROR, 1, "starcoll: out of memory holding a child's buffer");
            continue;
        }
        d->buf = buf;
        d->upto = h[CD_COUNT];
        d->idx = h[CD_COUNT] - 1;
        d->flags = h[CD_FLAGS];
        d->pos = h[CD_POS];
        if (h[CD_EPOCH] == e->epoch && e->children[src].active) {
            /* the range is idx..upto; only its end is ever compared */
            hold(e, src, d, slot);
        } else if (h[CD_EPOCH] > e->epoch) {
            /* sent under a topology this rank has not applied yet: keep it */
            d->from = src;
            d->slot = slot;
            d->epoch = h[CD_EPOCH];
            d->next = e->early;
            e->early = d;
        } else
            free_entries(d);
    }
    return got;
}

/* Tests a header-and-data pair of requests.  A status array, not
 * MPI_STATUSES_IGNORE: MPICH's access hints take that for an array of none
 * (-Wstringop-overflow). */
static int test_pair(MPI_Request req[2], int *done)
{
    MPI_Status st[2];
    return PMPI_Testall(2, req, done, st);
}

/* Parent side: send owed results, one message in flight per child. */
static int send_results(sc_engine *e)
{
    int moved = 0;
    for (int r = 0; r < e->n && !e->stopping; r++) {
        sc_child *c = &e->children[r];
        if (!c->owed) continue;
        if (c->in_flight) {
            int done = 0;
            if (sc_engine_failed(e, test_pair(c->req, &done))) return moved;
            if (!done) continue;
            c->in_flight = 0;
            moved = 1;
        }
        for (int s = 0; s < e->nslots; s++) {
            if (!c->owed_any[s]) continue;
            sc_slot *sl = &e->slots[s];
            memcpy(c->sendbuf, c->owed[s], sl->bytes);
            memset(c->owed[s], 0, sl->bytes);
            c->owed_any[s] = 0;
            c->hdr[CR_SLOT] = s;
            c->hdr[CR_INCL] = c->owed_incl[s];
            c->hdr[CR_SEQ] = c->owed_seq[s];
            c->hdr[CR_ROUNDS] = c->owed_rounds[s];
            c->owed_rounds[s] = 0;
            pthread_mutex_lock(&e->mu);
            c->hdr[CR_MODE] = e->mode;
            c->hdr[CR_K] = e->k;
            pthread_mutex_unlock(&e->mu);
            int rc = PMPI_Isend(c->hdr, CR_LEN, MPI_LONG, r, TAG_CRES_H, e->data, &c->req[0]);
            if (rc == MPI_SUCCESS) rc = PMPI_Isend(c->sendbuf, (int)sl->count, sl->dt, r, TAG_CRES_B, e->data, &c->req[1]);
            if (sc_engine_failed(e, rc)) return moved;
            c->in_flight = 1;
            moved = 1;
            break;
        }
    }
    return moved;
}

/* Child side (or a former child): results from a parent. */
static int receive_results(sc_engine *e)
{
    int got = 0, src;
    long h[CR_LEN];
    while (sc_recv_next(e->data, TAG_CRES_H, MPI_LONG, h, CR_LEN, &src) == 1) {
        int s = (int)h[CR_SLOT];
        if (s < 0 || s >= e->nslots) break;
        sc_slot *sl = &e->slots[s];
        if (sc_engine_failed(e, PMPI_Recv(e->res_buf, (int)sl->count, sl->dt, src, TAG_CRES_B, e->data, MPI_STATUS_IGNORE)))
            break;   /* a half-received result is no result */
        pthread_mutex_lock(&e->mu);
        sc_sum_into(sl->inbox, e->res_buf, (size_t)sl->count, sl->dk);
        sl->inbox_rounds++;
        sl->rounds_got += h[CR_ROUNDS];
        if (h[CR_SEQ] > sl->seq_seen) sl->seq_seen = h[CR_SEQ];
        if (sl->nmembers) sc_fusion_landed(e, sl);
        if (h[CR_INCL] > sl->included_self) sl->included_self = h[CR_INCL];
        drop_included(sl, sl->included_self);
        sc_nb_ready(e, sl);
        e->mode = (sc_mode)h[CR_MODE];
        e->k = (int)h[CR_K];
        e->stats.rounds++;
        pthread_cond_broadcast(&e->cv_main);
        pthread_mutex_unlock(&e->mu);
        got = 1;
    }
    return got;
}

int sc_groups_progress(sc_engine *e)
{
    int moved = receive_deposits(e);
    moved |= send_results(e);
    moved |= receive_results(e);
    return moved;
}

int sc_groups_forward(sc_engine *e)
{
    if (e->stopping) return 0;
    if (e->dep_in_flight) {
        int done = 0;
        if (sc_engine_failed(e, test_pair(e->dep_req, &done)) || !done) return 0;
        e->dep_in_flight = 0;
    }
    pthread_mutex_lock(&e->mu);
    int parent = e->my_parent;
    if (parent < 0) {
        pthread_mutex_unlock(&e->mu);
        return 0;
    }
    /* Everything not yet sent on one slot goes as one message: while the
     * link was busy the deposits accumulated. */
    for (int s = 0; s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        sc_deposit *first = sl->head;
        while (first && first->sent) first = first->next;
        if (!first) continue;
        memset(e->dep_buf, 0, sl->bytes);
        sc_deposit *last = first;
        for (sc_deposit *d = first; d; d = d->next) {
            sc_sum_into(e->dep_buf, d->buf, (size_t)sl->count, sl->dk);
            d->sent = 1;
            last = d;
        }
        e->dep_hdr[CD_SLOT] = s;
        e->dep_hdr[CD_COUNT] = last->upto;
        e->dep_hdr[CD_FLAGS] = (last->flags & NOTE_KIND_FLAGS) | (e->waiting_slot == s || sl->nb ? NOTE_WAITS : 0);
        e->dep_hdr[CD_EPOCH] = e->epoch;
        e->dep_hdr[CD_POS] = last->pos;
        pthread_mutex_unlock(&e->mu);
        int rc = PMPI_Isend(e->dep_hdr, CD_LEN, MPI_LONG, parent, TAG_CDEP_H, e->data, &e->dep_req[0]);
        if (rc == MPI_SUCCESS) rc = PMPI_Isend(e->dep_buf, (int)sl->count, sl->dt, parent, TAG_CDEP_B, e->data, &e->dep_req[1]);
        if (sc_engine_failed(e, rc)) return 0;
        e->dep_in_flight = 1;
        return 1;
    }
    pthread_mutex_unlock(&e->mu);
    return 0;
}

int sc_groups_quiet(sc_engine *e)
{
    int quiet = 1;
    if (e->dep_in_flight) {
        int done = 0;
        if (sc_engine_failed(e, test_pair(e->dep_req, &done))) done = 1;   /* nothing more to wait for */
        if (done) e->dep_in_flight = 0;
        else quiet = 0;
    }
    for (int r = 0; e->children && r < e->n; r++) {
        sc_child *c = &e->children[r];
        if (!c->in_flight) continue;
        int done = 0;
        if (sc_engine_failed(e, test_pair(c->req, &done))) done = 1;
        if (done) c->in_flight = 0;
        else quiet = 0;
    }
    return quiet;
}
