/* Fused rounds: a step's small tensors in a few rounds instead of one each.
 *
 * A blocking call that waits for its own round cannot share that round
 * with tensors the code reduces after it returns.  So the small tensors of
 * a tolerant step (the members: under STARCOLL_FUSE_BYTES, and together
 * at most STARCOLL_FUSE_SHARE of the step's bytes) do not wait:
 * each call copies its buffer into its place in a group's staging buffer
 * and returns its part of the group rounds completed since its previous
 * call; the last member of the step deposits the group buffer, without
 * waiting, as one deposit on the group's own slot, whose rounds follow the
 * rules of every other slot (quorum, staleness, children, hot swap).  A
 * member's sum thus comes one step late, as a late rank's does, and a
 * step's first fused calls return zeros; nothing is lost or doubled (each
 * member's part of a group round goes to that member alone: tensors never
 * mix), and a flush delivers everything.
 *
 * Counts stay program points, as the round rules want for a flush: every
 * member call in rounds counts once on its own slot and once on the group
 * (deposits skip the numbers of calls that made none).
 *   - exact mode (rounds): members reduce on their own slots, exact; what
 *     is staged goes in a group deposit first.  Ranks see a mode change at
 *     different calls, so the coordinator drains, without waiting for the
 *     others, a group's deposits in an exact mode and a member's own-slot
 *     deposits in a tolerant one: no other rank will join them
 *     (engine_coord.c);
 *   - flush (MPI_Pcontrol(2), or (0)): the member's buffer goes in a group
 *     deposit of its own that is a flush, and the call waits for it: the
 *     flush round holds every rank's group deposits up to this call, so
 *     every rank's buffer of this tensor, and everything before;
 *   - direct steps: plain collectives per member (engine_direct.c), plus
 *     any group round left from before. */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "runtime.h"

enum { SC_FUSE_GROUP_MAX = 4 << 20 };   /* bytes of one group buffer */

/* The pattern is copies of a shorter sequence of shapes.  A real step has
 * tensors of its own at its ends (a first layer, a head, a norm), so such a
 * pattern is more likely two steps learned as one: each tensor then has a
 * slot in each half, and a one-step flush reaches only one of them, which
 * a member's result, always a step late, cannot afford. */
static int repeats_shorter(const sc_engine *e)
{
    int L = e->nuser;
    for (int p = 1; p <= L / 2; p++) {
        if (L % p) continue;
        int same = 1;
        for (int s = p; s < L && same; s++)
            same = e->slots[s].count == e->slots[s % p].count && e->slots[s].dk == e->slots[s % p].dk;
        if (same) return p;
    }
    return 0;
}

typedef struct {
    size_t bytes;
    int slot;
} sized_slot;

static int by_size(const void *a, const void *b)
{
    const sized_slot *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return x->slot - y->slot;
}

/* Which of the step's tensors are fused (fused[s] = 1): those under
 * STARCOLL_FUSE_BYTES, smallest first, while together they carry at most
 * STARCOLL_FUSE_SHARE of the step's bytes (policy.h says why).  The same
 * on every rank: it depends on the agreed pattern only. */
static int choose_members(const sc_engine *e, size_t limit, char *fused)
{
    int L = e->nuser, n = 0;
    double total = 0, taken = 0;
    sized_slot *c = malloc(sizeof *c * (size_t)L);
    if (!c) return -1;
    for (int s = 0; s < L; s++) {
        fused[s] = 0;
        total += (double)e->slots[s].bytes;
        if (e->slots[s].bytes < limit) c[n++] = (sized_slot){e->slots[s].bytes, s};
    }
    qsort(c, (size_t)n, sizeof *c, by_size);
    for (int i = 0; i < n && taken + (double)c[i].bytes <= sc_rt.policy.fuse_share * total; i++) {
        taken += (double)c[i].bytes;
        fused[c[i].slot] = 1;
    }
    free(c);
    return 0;
}

/* STARCOLL_VERBOSE=1: how many of the small tensors the share left a round
 * of their own, counted once the plan is made (a group of one is none). */
static void say_share(const sc_engine *e, size_t limit)
{
    if (sc_rt.policy.verbose < 1) return;
    int small = 0, fused = 0;
    double total = 0, taken = 0;
    for (int s = 0; s < e->nuser; s++) {
        total += (double)e->slots[s].bytes;
        small += e->slots[s].bytes < limit;
        if (e->slots[s].fuse >= 0) {
            fused++;
            taken += (double)e->slots[s].bytes;
        }
    }
    if (fused < small)
        sc_say(-1, 0, "starcoll: %d of the step's %d tensors under STARCOLL_FUSE_BYTES are fused, %.1f%% of its bytes "
               "(STARCOLL_FUSE_SHARE=%g); the others get a round each, on time", fused, small, 100 * taken / total,
               sc_rt.policy.fuse_share);
}

int sc_fusion_plan(sc_engine *e)
{
    int L = e->nuser;
    size_t limit = sc_rt.policy.fuse_bytes;
    e->nslots = L;
    for (int s = 0; s < L; s++) e->slots[s].fuse = -1;
    if (limit == 0) return 0;
    int p = repeats_shorter(e);
    if (p) {
        if (sc_rt.policy.verbose >= 1)
            sc_say(SC_SAY_NO_FUSION, 0, "starcoll: the learned step of %d calls repeats one of %d; its small tensors get a "
                   "round each, not fused rounds (README, \"Fused rounds\")", L, p);
        return 0;
    }
    char *fused = malloc((size_t)L);
    if (!fused || choose_members(e, limit, fused) != 0) {
        free(fused);
        return -1;
    }
    /* Per element kind, members in step order into groups of at most
     * SC_FUSE_GROUP_MAX bytes; a group of one is no group. */
    for (int dk = 0; dk < 2; dk++) {
        int g = -1;
        size_t used = 0;
        for (int s = 0; s < L; s++) {
            sc_slot *sl = &e->slots[s];
            if ((int)sl->dk != dk || !fused[s]) continue;
            if (g < 0 || used + sl->bytes > SC_FUSE_GROUP_MAX) {
                g = e->nslots++;
                used = 0;
                sc_slot *gs = &e->slots[g];
                memset(gs, 0, sizeof *gs);
                gs->fuse = -1;
                gs->dk = sl->dk;
                gs->dt = sl->dt;
                if (!(gs->members = malloc(sizeof(int) * (size_t)L))) {
                    free(fused);
                    return -1;
                }
            }
            sc_slot *gs = &e->slots[g];
            sl->fuse = g;
            sl->fuse_off = used;
            used += sl->bytes;
            gs->members[gs->nmembers++] = s;
            gs->bytes = used;
            gs->count = (long)(used / sc_dkind_size(gs->dk));
        }
    }
    free(fused);
    /* groups of one member: back to a round of its own */
    for (int g = L; g < e->nslots; g++)
        if (e->slots[g].nmembers == 1) e->slots[e->slots[g].members[0]].fuse = -1;
    int n = L;
    for (int g = L; g < e->nslots; g++) {
        sc_slot *gs = &e->slots[g];
        if (gs->nmembers < 2) {
            free(gs->members);
            continue;
        }
        if (n != g) {
            e->slots[n] = *gs;
            for (int i = 0; i < gs->nmembers; i++) e->slots[gs->members[i]].fuse = n;
        }
        memset(&e->slots[n].track, 0, sizeof e->slots[n].track);
        n++;
    }
    e->nslots = n;
    say_share(e, limit);
    for (int g = L; g < e->nslots; g++) {
        sc_slot *gs = &e->slots[g];
        gs->inbox = calloc(1, gs->bytes);
        gs->scratch = malloc(gs->bytes);
        gs->stage = calloc(1, gs->bytes);
        if (!gs->inbox || !gs->scratch || !gs->stage) return -1;
        if (e->rank == e->coord && sc_track_init(&gs->track, e->n) != 0) return -1;
    }
    return 0;
}

void sc_fusion_take(sc_engine *e, sc_slot *sl, void *buf, int add)
{
    sc_slot *g = &e->slots[sl->fuse];
    char *part = (char *)g->inbox + sl->fuse_off;
    if (sl->fused_rounds > 0) {
        if (add) sc_sum_into(buf, part, (size_t)sl->count, sl->dk);
        else memcpy(buf, part, sl->bytes);
        memset(part, 0, sl->bytes);
        sc_engine_copied(e, sl->bytes);
    } else if (!add) {
        memset(buf, 0, sl->bytes);
    }
    sl->fused_rounds = 0;
}

void sc_fusion_landed(sc_engine *e, sc_slot *g)
{
    for (int i = 0; i < g->nmembers; i++) e->slots[g->members[i]].fused_rounds++;
    g->inbox_rounds = 0;   /* members take their parts; the group's inbox is never returned whole */
}

/* A deposit of the group's stage, numbered `need` (the group's call count
 * now), then cleared.  mu not held; returns the deposit's announce status. */
static int deposit_group(sc_engine *e, sc_slot *g, int gslot, long need, long flags, long pos)
{
    pthread_mutex_lock(&e->mu);
    sc_deposit *d = sc_deposit_get(g);
    pthread_mutex_unlock(&e->mu);
    if (!d) return MPI_ERR_NO_MEM;
    /* The stage becomes the deposit and the deposit's buffer (same size)
     * the next stage: no copy.  Cleared, for members a step leaves out. */
    void *next_stage = d->buf;
    d->buf = g->stage;
    g->stage = next_stage;
    memset(g->stage, 0, g->bytes);
    g->staged = 0;
    pthread_mutex_lock(&e->mu);
    d->idx = need - 1;
    d->upto = need;
    d->sent = 0;
    d->pos = pos;
    d->flags = flags;
    d->next = NULL;
    g->deposited = need;
    if (g->tail) g->tail->next = d;
    else g->head = d;
    g->tail = d;
    int announce = e->my_parent < 0;   /* a child's deposits go through its engine to the parent */
    pthread_cond_signal(&e->cv_engine);
    pthread_mutex_unlock(&e->mu);
    if (!announce) return MPI_SUCCESS;
    return sc_engine_deposit_note(e, gslot, need, flags, -1, pos);
}

int sc_fusion_deposit_staged(sc_engine *e, long pos)
{
    int rc = MPI_SUCCESS;
    for (int s = e->nuser; s < e->nslots && rc == MPI_SUCCESS; s++) {
        sc_slot *g = &e->slots[s];
        if (!g->staged) continue;
        pthread_mutex_lock(&e->mu);
        long need = g->calls;   /* the staged calls counted already */
        pthread_mutex_unlock(&e->mu);
        rc = deposit_group(e, g, s, need, 0, pos);
    }
    return rc;
}

/* Blocking elsewhere.  A step's group deposit is made by its last member
 * call, so calls made before it are counted and staged but announced to
 * nobody.  A rank that blocks in between (on another communicator's call,
 * a barrier, a wait) would leave a flush of the group, which waits for
 * every rank's count, waiting on it, while the ranks that would release it
 * wait for the flushing rank: with two communicators whose tensors were
 * all fused, the soak hung 2 runs in 7.  So what the blocking thread staged
 * goes in a deposit first.  Only that thread's: another thread's staging
 * goes on while this one blocks (and the stage is that thread's alone). */
int sc_fusion_deposit_before_blocking(sc_engine *e)
{
    pthread_mutex_lock(&e->mu);
    int mine = e->stager_set && pthread_equal(e->stager, pthread_self()) && !e->direct && !e->left &&
               !e->stopped && !e->error;
    pthread_mutex_unlock(&e->mu);
    if (!mine) return MPI_SUCCESS;
    return sc_fusion_deposit_staged(e, -1);
}

/* mu held: a member call's result, its part of the group rounds plus any
 * round of its own slot (an exact spell's, or a late rank's drained one). */
static void take_results(sc_engine *e, sc_slot *sl, void *recvbuf)
{
    sc_fusion_take(e, sl, recvbuf, 0);
    if (sl->inbox_rounds > 0) {
        sc_sum_into(recvbuf, sl->inbox, (size_t)sl->count, sl->dk);
        memset(sl->inbox, 0, sl->bytes);
        sl->inbox_rounds = 0;
        sc_engine_copied(e, sl->bytes);
    }
}

/* As a tolerant call does (DESIGN.md): a member returns the group rounds
 * completed since its previous call; when none has and the round holding
 * this rank's last group deposit has not landed yet, it waits for it.  So
 * a rank never has more than a step's group deposits outstanding, a step
 * of small tensors alone is paced by the quorum like any other, and where
 * every round holds every rank's deposit, every rank gets it at the same
 * call (one step late).  Landed, not merely taken into a round: a round
 * under way when the call came once made it return zeros on some ranks and
 * the round a step later, so replicas of a model whose tensors were all
 * fused drifted apart with no straggler at all.  The coordinator learns of
 * the wait (the deposit announced again, now waited for), so rounds
 * elsewhere do not count on this rank meanwhile; a deposit already taken
 * into a round needs no such word. */
static int wait_for_a_round(sc_engine *e, sc_slot *sl, int gslot)
{
    sc_slot *g = &e->slots[gslot];
    pthread_mutex_lock(&e->mu);
    int wait = g->included_self < g->deposited && sl->fused_rounds == 0 && !e->error && !e->stopped;
    int queued = g->head != NULL;
    long count = g->deposited, pos = g->tail ? g->tail->pos : -1;
    int child = e->my_parent >= 0;
    if (wait) e->waiting_slot = gslot;
    pthread_mutex_unlock(&e->mu);
    if (!wait) return MPI_SUCCESS;
    /* A member announces its deposit again, now waited for; a child's went
     * through its parent, and it says only that it waits. */
    int rc = queued ? sc_engine_deposit_note(e, gslot, count, NOTE_WAITS | (child ? NOTE_WAIT_ONLY : 0), -1, pos)
                    : MPI_SUCCESS;
    pthread_mutex_lock(&e->mu);
    double t0 = sc_wait_begin(e);
    while (rc == MPI_SUCCESS && g->included_self < g->deposited && sl->fused_rounds == 0 && !e->stopped && !e->error)
        pthread_cond_wait(&e->cv_main, &e->mu);
    e->waiting_slot = -1;
    e->stats.wait_s += sc_wait_end(e, t0);
    if (rc == MPI_SUCCESS && e->error) rc = e->error;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int sc_fusion_call(sc_engine *e, int slot, long pos, const void *sendbuf, void *recvbuf, int exact, int *own)
{
    sc_slot *sl = &e->slots[slot];
    int gslot = sl->fuse;
    sc_slot *g = &e->slots[gslot];
    const void *mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    pthread_mutex_lock(&e->mu);
    int flush = exact || sl->flush_next;
    int exact_mode = sc_exact_mode(e->mode);
    *own = exact_mode && !flush;
    if (*own) {   /* the caller runs it on its own slot (see the top), after what is staged */
        long count = ++g->calls;
        pthread_mutex_unlock(&e->mu);
        if (g->staged) return deposit_group(e, g, gslot, count, 0, pos);
        /* The group's count, for a flush of it (a rank's MPI_Pcontrol(2)
         * alone, or one from a tolerant spell that other ranks still see):
         * it waits for every rank's count, and this call deposits nothing
         * there. */
        return sc_engine_deposit_note(e, gslot, count, NOTE_COUNT_ONLY, -1, pos);
    }
    pthread_mutex_unlock(&e->mu);

    /* before the result is written: MPI_IN_PLACE */
    memcpy((char *)g->stage + sl->fuse_off, mine, sl->bytes);
    sc_engine_copied(e, sl->bytes);
    g->staged = 1;
    pthread_mutex_lock(&e->mu);
    e->stager = pthread_self();
    e->stager_set = 1;
    sl->flush_next = 0;
    sl->calls++;
    long need = ++g->calls;
    int last = g->members[g->nmembers - 1] == slot;
    pthread_mutex_unlock(&e->mu);
    int rc = MPI_SUCCESS;
    if (!flush) {
        rc = wait_for_a_round(e, sl, gslot);
        if (last && rc == MPI_SUCCESS) rc = deposit_group(e, g, gslot, need, 0, pos);
        pthread_mutex_lock(&e->mu);
        take_results(e, sl, recvbuf);
        e->stats.fused_calls++;
        if (rc == MPI_SUCCESS && e->error) rc = e->error;
        pthread_mutex_unlock(&e->mu);
        return rc;
    }
    /* A flush: this call's group deposit is a flush, and it waits. */
    pthread_mutex_lock(&e->mu);
    e->waiting_slot = gslot;
    pthread_mutex_unlock(&e->mu);
    rc = deposit_group(e, g, gslot, need, NOTE_FLUSH | NOTE_WAITS | (exact_mode ? NOTE_EXACT : 0), pos);
    pthread_mutex_lock(&e->mu);
    double t0 = sc_wait_begin(e);
    while (rc == MPI_SUCCESS && (g->included_self < need || !sc_rounds_all_in(g)) && !e->stopped && !e->error)
        pthread_cond_wait(&e->cv_main, &e->mu);
    e->waiting_slot = -1;
    e->stats.wait_s += sc_wait_end(e, t0);
    if (rc == MPI_SUCCESS && e->error) rc = e->error;
    if (rc == MPI_SUCCESS && g->included_self < need) rc = MPI_ERR_OTHER;
    take_results(e, sl, recvbuf);
    pthread_mutex_unlock(&e->mu);
    return rc;
}
