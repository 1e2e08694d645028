/* The tolerant engine (see engine.h): threads, rounds, the coordinator.
 *
 * Threads: the application's thread deposits buffers and waits on a
 * condition variable; the engine thread talks MPI on duplicates of the
 * user's communicator: `ctrl` for notices (rank -> coordinator) and round
 * messages (coordinator -> ranks), `data` for the reductions and for the
 * children's traffic (engine_groups.c).  Direct steps (engine_direct.c)
 * run on a third duplicate, `direct_comm`, by the application threads.
 * The engine never spins: when idle
 * it sleeps on a condition variable with a growing timeout, woken at once
 * by its own rank's deposits.
 *
 * Rounds of all slots run in the order the coordinator sends them, so the
 * collectives line up on every member.  Deposits are counted per rank and
 * slot; a round message says, per rank, how many of its deposits the round
 * includes, so every deposit is in exactly one round whoever holds it. */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels.h"
#include "runtime.h"
#include "monitor.h"
#include "trace.h"

double sc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sc_exact_mode(sc_mode m)
{
    return m == SC_MODE_SYNC || m == SC_MODE_HIER;
}

int sc_engine_failed(sc_engine *e, int rc)
{
    if (rc == MPI_SUCCESS) return 0;
    pthread_mutex_lock(&e->mu);
    if (!e->error) e->error = rc;
    pthread_cond_broadcast(&e->cv_main);
    pthread_mutex_unlock(&e->mu);
    return 1;
}

int sc_recv_next(MPI_Comm comm, int tag, MPI_Datatype dt, void *buf, int count, int *src)
{
    int flag = 0;
    MPI_Status st;
    if (PMPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st) != MPI_SUCCESS) return -1;
    if (!flag) return 0;
    if (PMPI_Recv(buf, count, dt, st.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
    *src = st.MPI_SOURCE;
    return 1;
}

/* Sleep on cv_engine (mu held) for at most `s` seconds. */
static void engine_nap(sc_engine *e, double s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double t = (double)ts.tv_nsec * 1e-9 + s;
    ts.tv_sec += (time_t)t;
    ts.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
    pthread_cond_timedwait(&e->cv_engine, &e->mu, &ts);
}

/* How long an idle engine may sleep before looking again.  Every member
 * takes part in every round, even while its application thread computes,
 * so while rounds are flowing it looks often; a quiet engine backs off. */
static double nap_cap(const sc_engine *e, double now)
{
    if (e->main_waiting || now - e->last_activity < 0.05) return 100e-6;
    return 2e-3;
}

/* Nothing moved: sleep a growing while, at most `until` seconds when that
 * is not negative (a grace period ending).  Returns 1 when the engine must
 * quit instead. */
static int idle(sc_engine *e, double *nap, double until)
{
    pthread_mutex_lock(&e->mu);
    if (e->quit) {
        pthread_mutex_unlock(&e->mu);
        return 1;
    }
    double cap = nap_cap(e, sc_now());
    *nap = *nap * 2 > cap ? cap : *nap * 2;
    double d = until >= 0 && until < *nap ? until : *nap;
    if (d > 0) engine_nap(e, d);
    pthread_mutex_unlock(&e->mu);
    return 0;
}

static int quorum_k(const sc_engine *e)
{
    double q = sc_rt.policy.quorum;
    int k;
    if (q <= 0) k = e->n - 1;                 /* until the selector chooses: n-1 */
    else if (q < 1) k = (int)(q * e->n + 0.999999);
    else k = (int)q;
    if (k < 1) k = 1;
    if (k > e->n) k = e->n;
    return k;
}

/* ---- engine thread: taking part in a round ------------------------------ */

static void release_deposits(sc_slot *sl, sc_deposit *take)
{
    for (sc_deposit *d = take, *nx; d; d = nx) {
        nx = d->next;
        if (d->borrowed) {
            free(d);
        } else {
            d->next = sl->spare;
            sl->spare = d;
        }
    }
}

/* One round of slot s: this rank's deposits and its children's that the
 * round includes (incl), reduced over the ring.  `fresh` is the round's
 * number of deposits, from the coordinator.  Results go straight into the
 * caller's receive buffer when it waits on this slot, else to the inbox. */
static void run_round(sc_engine *e, int s, const long *incl, long fresh, sc_mode mode, int k)
{
    sc_slot *sl = &e->slots[s];
    pthread_mutex_lock(&e->mu);
    sc_deposit *take = NULL, **tail = &take;
    long mine = 0;
    while (sl->head && sl->head->idx < incl[e->rank]) {
        sc_deposit *d = sl->head;
        sl->head = d->next;
        if (!sl->head) sl->tail = NULL;
        d->next = NULL;
        *tail = d;
        tail = &d->next;
        mine++;
    }
    /* Straight into the waiting caller's buffer: when it holds nothing yet,
     * and unless it still holds the caller's own deposit (MPI_IN_PLACE) for
     * a later round. */
    int includes_alias = 0;
    for (sc_deposit *d = take; d; d = d->next) includes_alias |= d->buf == sl->target_alias;
    void *direct = sl->target && !sl->target_filled && (!sl->target_alias || includes_alias) ? sl->target : NULL;
    pthread_mutex_unlock(&e->mu);

    const void *src;
    void *dst = direct ? direct : sl->scratch;
    if (mine == 1 && !sc_groups_children_hold(e, s, incl)) {
        src = take->buf;   /* one buffer: reduce it as it is */
    } else {
        memset(sl->scratch, 0, sl->bytes);
        for (sc_deposit *d = take; d; d = d->next) sc_sum_into(sl->scratch, d->buf, (size_t)sl->count, sl->dk);
        sc_groups_take_children(e, s, incl);
        src = sl->scratch;
    }
    MPI_Comm ring;
    int rc = sc_groups_ring(e, &ring);
    if (rc == MPI_SUCCESS) {
        const void *sbuf = src == dst ? MPI_IN_PLACE : src;
        if (mode == SC_MODE_HIER && ring == e->data)
            rc = sc_hier_allreduce(&e->hier, e->data, sc_rt.policy.group_size, sbuf, dst, (int)sl->count, sl->dt);
        else
            rc = PMPI_Allreduce(sbuf, dst, (int)sl->count, sl->dt, MPI_SUM, ring);
    }
    if (rc == MPI_SUCCESS && sc_rt.policy.scale_fresh && fresh > 0)
        sc_scale(dst, (size_t)sl->count, sl->dk, (double)e->n / (double)fresh);
    if (rc == MPI_SUCCESS) sc_groups_owe(e, s, dst, incl);

    pthread_mutex_lock(&e->mu);
    if (rc != MPI_SUCCESS && !e->error) e->error = rc;
    if (direct) {
        sl->target_filled = 1;
    } else if (sl->target && sl->target_filled) {
        sc_sum_into(sl->target, dst, (size_t)sl->count, sl->dk);
    } else {
        sc_sum_into(sl->inbox, dst, (size_t)sl->count, sl->dk);
        sl->inbox_rounds++;
    }
    if (incl[e->rank] > sl->included_self) sl->included_self = incl[e->rank];
    release_deposits(sl, take);
    e->mode = mode;
    e->k = k;
    e->stats.rounds++;
    e->stats.fresh_sum += (double)fresh;
    e->stats.mode_rounds[mode]++;
    e->last_activity = sc_now();
    pthread_cond_broadcast(&e->cv_main);
    pthread_mutex_unlock(&e->mu);
}

/* ---- engine thread: the coordinator ------------------------------------- */

static void apply_note(sc_engine *e, int src, const long *note)
{
    int who = note[4] >= 0 ? (int)note[4] : src;
    if (who < 0 || who >= e->n) return;
    if (note[0] == NOTE_DEPOSIT && note[1] >= 0 && note[1] < e->nslots) {
        /* A deposit counts from its owner under the current topology: a
         * member itself, a child through its parent.  Anything else is from
         * before a topology change; the owner announces it again. */
        if (note[4] >= 0 ? e->parent[who] != src : e->parent[who] != -1) return;
        sc_track_announce(&e->slots[note[1]].track, who, note[2], (int)(note[3] & NOTE_KIND_FLAGS));
        if (note[3] & NOTE_WAITS) {
            e->blocked_at[who] = (int)note[1];
            e->blocked_need[who] = note[2];
        }
    } else if (note[0] == NOTE_AWAY || note[0] == NOTE_DIRECT) {
        /* A rank gone direct deposits nothing until it comes back: rounds
         * left over from the switch (a later slot's deposit of a rank that
         * was behind) must not wait for it. */
        if (note[0] == NOTE_DIRECT) e->in_direct[who] = 1;
        if (e->blocked_at[who] == -1) e->blocked_at[who] = SC_BLOCKED_OUTSIDE;
    } else if (note[0] == NOTE_BACK || note[0] == NOTE_ROUNDS) {
        if (note[0] == NOTE_ROUNDS) e->in_direct[who] = 0;
        if (e->blocked_at[who] == SC_BLOCKED_OUTSIDE && !e->in_direct[who]) e->blocked_at[who] = -1;
    } else if (note[0] == NOTE_STOPPED) {
        e->nstopped++;
    } else if (note[0] == NOTE_LEAVE && !e->gone[who]) {
        e->gone[who] = 1;
        __atomic_add_fetch(&e->ngone, 1, __ATOMIC_ACQ_REL);   /* read by a departed application thread */
        /* Direct steps cannot go on without a rank: back to rounds, which
         * do not wait for departed ranks. */
        pthread_mutex_lock(&e->mu);
        if (e->direct && e->direct_cmd != CMD_STOP) e->direct_cmd = CMD_ENGINE;
        pthread_mutex_unlock(&e->mu);
    }
}

static int drain_notes(sc_engine *e)
{
    int got = 0, src;
    long note[NOTE_LEN];
    while (sc_recv_next(e->ctrl, TAG_NOTE, MPI_LONG, note, NOTE_LEN, &src) == 1) {
        apply_note(e, src, note);
        e->last_note_t = e->last_activity = sc_now();
        got = 1;
    }
    double feat[SC_NFEAT];
    while (sc_recv_next(e->ctrl, TAG_FEAT, MPI_DOUBLE, feat, SC_NFEAT, &src) == 1) {
        sc_decider_observe(e->decider, src, feat);
        got = 1;
    }
    return got;
}

/* Round message (RUN or STOP) to the members, or TOPO to everybody. */
static int send_round(sc_engine *e, long kind, int s, sc_mode mode, int k, const long *tail, long fresh)
{
    e->msg[RH_FRESH] = fresh;
    e->msg[RH_DIRECT] = kind == ROUND_RUN ? e->round_direct : 0;
    e->msg[RH_KIND] = kind;
    e->msg[RH_SLOT] = s;
    e->msg[RH_MODE] = mode;
    e->msg[RH_K] = k;
    e->msg[RH_EPOCH] = e->epoch;
    memcpy(e->msg + RH_LEN, tail, sizeof(long) * (size_t)e->n);
    for (int r = 0; r < e->n; r++) {
        if (r == e->rank || (kind == ROUND_RUN && e->parent[r] != -1)) continue;
        int rc = PMPI_Send(e->msg, RH_LEN + e->n, MPI_LONG, r, TAG_ROUND, e->ctrl);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* Close slot s's round: bookkeeping, round message to the members, and
 * this rank's part of the reduction. */
static int close_round(sc_engine *e, int s, sc_rules *rules, sc_mode mode, int k)
{
    sc_track *tr = &e->slots[s].track;
    if (rules->relax_quorum && !e->relaxed++)
        sc_say(SC_SAY_STALL, 0, "starcoll: tolerant rounds stalled (ranks blocked in a call starcoll cannot see, "
               "such as an exact collective each step); closing rounds below the quorum to go on");
    int flushing = tr->flush_upto != 0;
    long deposits = 0;
    memcpy(e->prev_incl, tr->included, sizeof(long) * (size_t)e->n);
    for (int r = 0; r < e->n; r++) deposits -= tr->included[r];
    int fresh = sc_round_close(tr, rules, e->incl);
    for (int r = 0; r < e->n; r++) deposits += e->incl[r];
    /* Going direct: only from a slot-0 round that includes a waiting
     * (exact) deposit of every rank, so every rank learns the switch before
     * its next call and all switch at the same one.  And only with equal
     * call counts: direct steps are plain collectives, matched by program
     * point, so a rank still calls behind the others would leave them
     * blocked (in an exact collective of the application's, say) where
     * rounds would go on without it.  Until then the exact mode runs as
     * rounds (see catch_up). */
    e->round_direct = 0;
    if (s == 0 && e->pending_direct != SC_NMODES && mode == e->pending_direct) {
        int all_wait = 1;
        for (int r = 0; r < e->n && all_wait; r++) {
            /* a departed rank could not join the direct steps that follow */
            if (e->gone[r]) {
                all_wait = 0;
                break;
            }
            all_wait = e->incl[r] > e->prev_incl[r] && tr->exact_upto[r] == e->incl[r] && e->parent[r] == -1 &&
                       e->incl[r] == e->incl[0];
        }
        if (all_wait) {
            e->round_direct = 1;
            e->pending_direct = SC_NMODES;
            pthread_mutex_lock(&e->mu);
            e->direct_at = e->incl[e->rank] + 1;
            pthread_mutex_unlock(&e->mu);
        }
    }
    if (!flushing && !rules->relax_quorum && !rules->excuse_blocked && !sc_exact_mode(mode) &&
        mode != SC_MODE_GROUPS && (e->stats.min_fresh < 0 || fresh < e->stats.min_fresh))
        e->stats.min_fresh = fresh;
    if (tr->max_absent > e->stats.max_staleness) e->stats.max_staleness = tr->max_absent;
    for (int r = 0; r < e->n; r++)
        if (e->blocked_at[r] == s && e->incl[r] >= e->blocked_need[r]) e->blocked_at[r] = -1;
    int rc = send_round(e, ROUND_RUN, s, mode, k, e->incl, deposits);
    if (sc_engine_failed(e, rc)) return rc;
    run_round(e, s, e->incl, deposits, mode, k);
    double tn = sc_now();
    if (e->last_round_t > 0) {
        double gap = tn - e->last_round_t;
        e->round_period = e->round_period > 0 ? 0.9 * e->round_period + 0.1 * gap : gap;
    }
    e->last_round_t = tn;
    return MPI_SUCCESS;
}

/* A new topology or mode: every rank learns it from the TOPO message, in
 * order with the round messages.  Deposits not yet included are announced
 * again by their owners under the new topology. */
static int change_topology(sc_engine *e, const long *parent, sc_mode mode, int k)
{
    e->epoch++;
    for (int s = 0; s < e->nslots; s++) {
        sc_track *tr = &e->slots[s].track;
        memcpy(tr->announced, tr->included, sizeof(long) * (size_t)e->n);
    }
    for (int r = 0; r < e->n; r++) e->parent[r] = (int)parent[r];
    pthread_mutex_lock(&e->mu);
    e->mode = mode;
    e->k = k;
    pthread_mutex_unlock(&e->mu);
    int rc = send_round(e, ROUND_TOPO, 0, mode, k, parent, 0);
    if (rc != MPI_SUCCESS) return rc;
    return sc_groups_apply(e, parent, e->epoch);
}

/* Every rank has left.  Sends between parents and children may still be
 * in flight (large ones wait for their receiver), so each rank keeps
 * receiving until its own sends are done, says so, and goes only when the
 * coordinator has heard it from all. */
static void stop_traffic(sc_engine *e)
{
    e->stopping = 1;
    int said = 0;
    double nap = 20e-6;
    for (;;) {
        int moved = sc_groups_progress(e);   /* keeps receiving; sends nothing new */
        if (!said && sc_groups_quiet(e)) {
            /* on an MPI failure, stop here rather than wait for ever */
            if (sc_engine_failed(e, sc_engine_note(e, NOTE_STOPPED))) return;
            said = moved = 1;
        }
        if (e->rank == e->coord) {
            moved |= drain_notes(e);
            if (e->nstopped == e->n) {
                memset(e->incl, 0, sizeof(long) * (size_t)e->n);
                sc_engine_failed(e, send_round(e, ROUND_FINAL, 0, SC_MODE_SYNC, 0, e->incl, 0));
                return;
            }
        } else {
            int flag = 0;
            if (sc_engine_failed(e, PMPI_Iprobe(e->coord, TAG_ROUND, e->ctrl, &flag, MPI_STATUS_IGNORE))) return;
            if (flag) {
                if (sc_engine_failed(e, PMPI_Recv(e->msg, RH_LEN + e->n, MPI_LONG, e->coord, TAG_ROUND, e->ctrl,
                                                  MPI_STATUS_IGNORE)))
                    return;
                if (e->msg[RH_KIND] == ROUND_FINAL) return;
                moved = 1;
            }
        }
        if (moved) {
            nap = 20e-6;
            continue;
        }
        struct timespec ts = {0, (long)(nap * 1e9)};
        nanosleep(&ts, NULL);
        if (nap < 1e-3) nap *= 2;
    }
}

/* A decision of the selector.  Exact modes run direct (plain collectives
 * by the application threads): from direct, the next step's broadcast
 * switches between them or back to rounds; from rounds, the rounds turn
 * exact first and go direct once every rank waits on the same one. */
static int apply_decision(sc_engine *e, const long *parent, sc_mode mode, int k)
{
    pthread_mutex_lock(&e->mu);
    int direct = e->direct;
    if (direct && sc_exact_mode(mode)) {
        e->direct_cmd = mode == SC_MODE_HIER ? CMD_HIER : CMD_SYNC;
        e->mode = mode;
        e->k = k;
        pthread_mutex_unlock(&e->mu);
        return MPI_SUCCESS;
    }
    pthread_mutex_unlock(&e->mu);
    int rc = change_topology(e, parent, mode, k);
    e->pending_direct = sc_exact_mode(mode) ? mode : SC_NMODES;
    if (direct) {
        pthread_mutex_lock(&e->mu);
        e->direct_cmd = CMD_ENGINE;
        pthread_mutex_unlock(&e->mu);
    }
    return rc;
}

/* Bounded catch-up before going direct.  When every rank waits on an exact
 * slot-0 deposit and their call counts differ by a few calls (a short
 * tolerant spell), the round is made a flush at the largest count: the
 * ranks behind get rounds of their own until they are level, which costs
 * the others those few steps once; then the step goes direct.  A larger
 * lag (a long tolerant spell with a straggler) would stall everybody for
 * as many of the straggler's steps: the exact mode then stays in rounds,
 * which need no alignment. */
enum { SC_CATCH_UP_MAX = 3 };
static void catch_up(sc_engine *e)
{
    sc_track *tr = &e->slots[0].track;
    if (tr->flush_upto) return;
    long lo = -1, hi = -1;
    for (int r = 0; r < e->n; r++) {
        int waits_exact = tr->announced[r] > tr->included[r] && tr->exact_upto[r] == tr->announced[r];
        if (e->gone[r] || e->parent[r] != -1 || !waits_exact) return;
        if (lo < 0 || tr->announced[r] < lo) lo = tr->announced[r];
        if (tr->announced[r] > hi) hi = tr->announced[r];
    }
    if (hi > lo && hi - lo <= SC_CATCH_UP_MAX) tr->flush_upto = hi;
}

static void coordinator_loop(sc_engine *e)
{
    double nap = 20e-6;
    int rr = 0;
    sc_rules rules = {0};
    rules.gone = e->gone;
    rules.blocked_at = e->blocked_at;
    unsigned char *member = malloc((size_t)e->n);
    long *newparent = malloc(sizeof(long) * (size_t)e->n);
    if (!member || !newparent) {
        sc_engine_failed(e, MPI_ERR_NO_MEM);
        free(member);
        free(newparent);
        return;
    }
    rules.member = member;
    for (;;) {
        int progressed = drain_notes(e);
        pthread_mutex_lock(&e->mu);
        sc_mode mode = e->mode;
        int k = e->k;
        /* A switch to direct announced and not made yet: the ranks are
         * finishing the step's exact rounds and go direct at their next
         * step.  A decision now would turn those rounds tolerant, leave
         * some deposits to rounds that never come (the others have gone
         * direct) and stall; it waits for the switch. */
        int switching = e->direct_at > 0 && !e->direct;
        pthread_mutex_unlock(&e->mu);
        sc_mode newmode = mode;
        int newk = k;
        if (!switching && sc_decider_decide(e->decider, newparent, &newmode, &newk)) {
            if (apply_decision(e, newparent, newmode, newk) != MPI_SUCCESS) break;
            mode = newmode;
            k = newk;
            progressed = 1;
        }
        if (e->pending_direct != SC_NMODES && e->pending_direct == mode) catch_up(e);
        int members = 0;
        for (int r = 0; r < e->n; r++) members += member[r] = e->parent[r] == -1;
        /* groups: the ring is synchronous among its members; children ride. */
        rules.k = sc_exact_mode(mode) || mode == SC_MODE_GROUPS ? members : k;
        rules.staleness = sc_rt.policy.staleness;
        /* Grace: a small share of the recent round period, so the slower
         * ranks of a healthy step still make the round. */
        rules.grace_s = 0.05 * e->round_period;
        if (rules.grace_s < 50e-6) rules.grace_s = 50e-6;
        if (rules.grace_s > 2e-3) rules.grace_s = 2e-3;
        double t = sc_now(), wake = -1;
        /* A stall: nothing announced for this long while ranks wait.  Long,
         * since a rank may compute for seconds; the collectives starcoll can
         * see already tell the coordinator who is away. */
        double stall = 100 * e->round_period > 10 ? 100 * e->round_period : 10;
        int anyone_waiting = 0;
        for (int r = 0; r < e->n; r++) anyone_waiting |= e->blocked_at[r] >= 0;
        rules.relax_quorum = anyone_waiting && e->last_note_t > 0 && t - e->last_note_t > stall;
        /* First pass by the plain rules; a second pass excuses ranks
         * blocked in other rounds, only when nothing could close at all. */
        int closed = 0;
        for (int pass = 0; pass < 2 && !closed; pass++) {
            rules.excuse_blocked = pass;
            for (int i = 0; i < e->nslots; i++) {
                int s = (rr + i) % e->nslots;
                double w;
                rules.slot = s;
                if (sc_round_verdict(&e->slots[s].track, &rules, t, &w) != SC_CLOSE) {
                    if (w > 0 && (wake < 0 || w < wake)) wake = w;
                    continue;
                }
                if (close_round(e, s, &rules, mode, k) != MPI_SUCCESS) goto out;
                rr = (s + 1) % e->nslots;
                progressed = closed = 1;
                break;
            }
        }
        progressed |= sc_groups_progress(e);
        if (e->ngone == e->n) {
            int news = 0;
            for (int s = 0; s < e->nslots; s++) news |= sc_track_has_news(&e->slots[s].track);
            if (!news) {
                memset(e->incl, 0, sizeof(long) * (size_t)e->n);
                for (int r = 0; r < e->n; r++) e->parent[r] = -1;   /* STOP goes to everybody */
                send_round(e, ROUND_STOP, 0, mode, k, e->incl, 0);
                stop_traffic(e);
                goto out;
            }
        }
        if (progressed) {
            nap = 20e-6;
            continue;
        }
        if (idle(e, &nap, wake > 0 ? wake - t : -1)) goto out;
    }
out:
    free(member);
    free(newparent);
}

/* ---- engine thread: any other rank ------------------------------------- */

static void member_loop(sc_engine *e)
{
    double nap = 20e-6;
    for (;;) {
        int flag = 0, progressed = 0;
        if (PMPI_Iprobe(e->coord, TAG_ROUND, e->ctrl, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            sc_engine_failed(e, MPI_ERR_OTHER);
            return;
        }
        if (flag) {
            if (PMPI_Recv(e->msg, RH_LEN + e->n, MPI_LONG, e->coord, TAG_ROUND, e->ctrl, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                sc_engine_failed(e, MPI_ERR_OTHER);
                return;
            }
            sc_mode mode = (sc_mode)e->msg[RH_MODE];
            int k = (int)e->msg[RH_K];
            if (e->msg[RH_KIND] == ROUND_STOP) {
                stop_traffic(e);
                return;
            }
            if (e->msg[RH_KIND] == ROUND_TOPO) {
                pthread_mutex_lock(&e->mu);
                e->mode = mode;
                e->k = k;
                pthread_mutex_unlock(&e->mu);
                if (sc_groups_apply(e, e->msg + RH_LEN, e->msg[RH_EPOCH]) != MPI_SUCCESS) return;
            } else {
                if (e->msg[RH_DIRECT] > 0) {   /* before the round, so the waiting caller sees it */
                    pthread_mutex_lock(&e->mu);
                    e->direct_at = e->msg[RH_LEN + e->rank] + 1;   /* my next slot-0 call */
                    pthread_mutex_unlock(&e->mu);
                }
                run_round(e, (int)e->msg[RH_SLOT], e->msg + RH_LEN, e->msg[RH_FRESH], mode, k);
            }
            progressed = 1;
        }
        progressed |= sc_groups_progress(e);
        progressed |= sc_groups_forward(e);
        if (progressed) {
            nap = 20e-6;
            continue;
        }
        if (idle(e, &nap, -1)) return;
    }
}

static void *engine_main(void *arg)
{
    sc_engine *e = arg;
    if (e->rank == e->coord) coordinator_loop(e);
    else member_loop(e);
    pthread_mutex_lock(&e->mu);
    e->stopped = 1;
    pthread_cond_broadcast(&e->cv_main);
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* ---- application thread -------------------------------------------------- */

static void free_list(sc_deposit *d)
{
    for (sc_deposit *nx; d; d = nx) {
        nx = d->next;
        if (!d->borrowed) free(d->buf);
        free(d);
    }
}

static void engine_free(sc_engine *e)
{
    if (!e) return;
    sc_groups_free(e);
    sc_probe_free(e);
    sc_decider_free(e->decider);
    for (int s = 0; e->slots && s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        free_list(sl->head);
        free_list(sl->spare);
        free(sl->inbox);
        free(sl->scratch);
        sc_track_free(&sl->track);
    }
    free(e->slots);
    free(e->gone);
    free(e->in_direct);
    free(e->blocked_at);
    free(e->blocked_need);
    free(e->incl);
    free(e->prev_incl);
    free(e->msg);
    free(e->parent);
    sc_hier_free(&e->hier);
    sc_hier_free(&e->direct_hier);
    if (e->trace) fclose(e->trace);
    if (e->ctrl != MPI_COMM_NULL) PMPI_Comm_free(&e->ctrl);
    if (e->data != MPI_COMM_NULL) PMPI_Comm_free(&e->data);
    if (e->direct_comm != MPI_COMM_NULL) PMPI_Comm_free(&e->direct_comm);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv_main);
    pthread_cond_destroy(&e->cv_engine);
    free(e);
}

/* STARCOLL_TRACE: PREFIX.<world rank> for the world, PREFIX.<world rank>.c<N>
 * for the N-th other communicator; a file that cannot be opened costs one
 * line and no trace. */
static void open_trace(sc_engine *e, int comm_id)
{
    char path[SC_PATH_LEN + 32];
    if (comm_id == 0) snprintf(path, sizeof path, "%s.%d", sc_rt.policy.trace, sc_rt.world_rank);
    else snprintf(path, sizeof path, "%s.%d.c%d", sc_rt.policy.trace, sc_rt.world_rank, comm_id);
    e->trace = fopen(path, "w");
    if (!e->trace) {
        sc_say(SC_SAY_TRACE, 1, "starcoll: STARCOLL_TRACE: cannot write %s; no trace", path);
        return;
    }
    sc_trace_write_header(e->trace, e->rank, e->n, sc_rt.policy.epoch, sc_rt.policy.papi_events);
}

/* The coordinator runs the rounds and the selector, and stays a ring
 * member: the lowest rank whose compute while the pattern was learned is
 * within 10% (or 1 ms) of the least, so a rank already slow then (starved
 * of CPU, on a busy node) neither paces the rounds nor is kept off the
 * children.  It is placed once: moving it later would hand over the
 * rounds' bookkeeping.  Collective over comm. */
static int place_coordinator(MPI_Comm comm, int rank, int n, double load, int *coord)
{
    if (!(load >= 0 && load < 1e9)) load = 1e9;   /* not finite: least suited */
    double least = 0;
    int rc = PMPI_Allreduce(&load, &least, 1, MPI_DOUBLE, MPI_MIN, comm);
    if (rc != MPI_SUCCESS) return rc;
    int mine = load <= 1.1 * least + 1e-3 ? rank : n;
    return PMPI_Allreduce(&mine, coord, 1, MPI_INT, MPI_MIN, comm);
}

sc_engine *sc_engine_start(MPI_Comm comm, const sc_pattern *pat, sc_mode mode, int comm_id,
                           double learn_compute_s)
{
    sc_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->ctrl = e->data = e->direct_comm = e->ring = MPI_COMM_NULL;
    sc_hier_init(&e->hier);
    sc_hier_init(&e->direct_hier);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv_main, NULL);
    pthread_cond_init(&e->cv_engine, NULL);
    PMPI_Comm_rank(comm, &e->rank);
    PMPI_Comm_size(comm, &e->n);
    int placed = place_coordinator(comm, e->rank, e->n, learn_compute_s, &e->coord) == MPI_SUCCESS &&
                 e->coord >= 0 && e->coord < e->n;
    if (!placed) e->coord = 0;   /* the agreement below fails the start everywhere */
    e->mode = mode;
    e->my_parent = -1;
    e->ring_epoch = -1;
    e->waiting_slot = -1;
    e->pending_direct = SC_NMODES;
    /* auto starts exact, and exact runs direct */
    e->direct = sc_exact_mode(mode);
    e->direct_mode = mode;
    e->nslots = pat->len;
    e->slots = calloc((size_t)pat->len, sizeof(sc_slot));
    e->gone = calloc((size_t)e->n, 1);
    e->in_direct = calloc((size_t)e->n, 1);
    e->blocked_at = malloc(sizeof(int) * (size_t)e->n);
    e->blocked_need = calloc((size_t)e->n, sizeof(long));
    e->parent = malloc(sizeof(int) * (size_t)e->n);
    e->incl = calloc((size_t)e->n, sizeof(long));
    e->prev_incl = calloc((size_t)e->n, sizeof(long));
    e->msg = calloc((size_t)(RH_LEN + e->n), sizeof(long));
    int ok = placed && e->slots && e->gone && e->in_direct && e->incl && e->prev_incl && e->msg && e->blocked_at && e->blocked_need && e->parent;
    for (int r = 0; ok && r < e->n; r++) e->blocked_at[r] = e->parent[r] = -1;
    for (int s = 0; ok && s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        sl->count = pat->pat[s].count;
        sl->dk = (sc_dkind)pat->pat[s].dkind;
        sl->dt = sl->dk == SC_DK_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
        sl->bytes = (size_t)sl->count * sc_dkind_size(sl->dk);
        sl->inbox = calloc(1, sl->bytes);
        sl->scratch = malloc(sl->bytes);
        ok = sl->inbox && sl->scratch && (e->rank != e->coord || sc_track_init(&sl->track, e->n) == 0);
    }
    e->k = quorum_k(e);
    e->stats.min_fresh = -1;
    ok = ok && sc_groups_init(e) == 0 && sc_probe_init(e) == 0;
    if (ok && e->rank == e->coord) ok = (e->decider = sc_decider_new(e, comm_id)) != NULL;
    /* Collective over comm: every rank starts its engine at the same call.
     * The outcome is agreed on, so a failure anywhere leaves all exact. */
    int rc1 = PMPI_Comm_dup(comm, &e->ctrl);
    int rc2 = PMPI_Comm_dup(comm, &e->data);
    int rc3 = PMPI_Comm_dup(comm, &e->direct_comm);
    int mine = ok && rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS && rc3 == MPI_SUCCESS, all = 0;
    if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
    e->ring = e->data;
    /* hier sub-communicators now, by this thread, before the engine thread
     * exists: built later they would be created by the application thread
     * (direct steps) while the engine thread creates rings, and Open MPI
     * does not take concurrent communicator creation well. */
    if (all && (sc_rt.policy.mode == SC_MODE_HIER || sc_rt.policy.mode == SC_MODE_AUTO)) {
        sc_hier_prepare(&e->hier, e->data, sc_rt.policy.group_size);
        sc_hier_prepare(&e->direct_hier, e->direct_comm, sc_rt.policy.group_size);
    }
    if (all && sc_rt.policy.trace[0]) open_trace(e, comm_id);
    if (all) all = pthread_create(&e->thread, NULL, engine_main, e) == 0;
    e->thread_started = all;
    /* A thread that failed to start on one rank would hang the others:
     * agree once more; engines that did start are told to quit. */
    int started = 0;
    if (PMPI_Allreduce(&all, &started, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) started = 0;
    if (!started) {
        if (e->thread_started) {
            pthread_mutex_lock(&e->mu);
            e->quit = 1;
            pthread_cond_signal(&e->cv_engine);
            pthread_mutex_unlock(&e->mu);
            pthread_join(e->thread, NULL);
        }
        engine_free(e);
        return NULL;
    }
    return e;
}

static int deposit_pending(const sc_slot *sl, const sc_deposit *d)
{
    for (const sc_deposit *p = sl->head; p; p = p->next)
        if (p == d) return 1;
    return 0;
}

static void unlink_deposit(sc_slot *sl, sc_deposit *d)
{
    sc_deposit **p = &sl->head, *prev = NULL;
    while (*p && *p != d) {
        prev = *p;
        p = &(*p)->next;
    }
    if (!*p) return;
    *p = d->next;
    if (sl->tail == d) sl->tail = prev;
    free(d);
}

static sc_deposit *deposit_get(sc_slot *sl)
{
    sc_deposit *d = sl->spare;
    if (d) {
        sl->spare = d->next;
        d->next = NULL;
        return d;
    }
    d = calloc(1, sizeof *d);
    if (d && !(d->buf = malloc(sl->bytes))) {
        free(d);
        d = NULL;
    }
    return d;
}

/* At each step's first call: the step's features (timing here, the rest
 * from the monitor) go to the coordinator, and to the trace. */
static void step_boundary(sc_engine *e, double now)
{
    if (e->step_start > 0) {
        double feat[SC_NFEAT] = {0};
        feat[SC_F_STEP_S] = now - e->step_start;
        feat[SC_F_WAIT_S] = e->step_wait;
        feat[SC_F_COMPUTE_S] = feat[SC_F_STEP_S] - e->step_wait;
        feat[SC_F_BYTES] = e->step_bytes;
        feat[SC_F_GRAD_SQNORM] = e->step_gsq;
        feat[SC_F_SUM_SQNORM] = e->step_ssq;
        feat[SC_F_LINK_SPB] = e->link_spb;
        if (sc_rt.monitor) sc_monitor_sample(sc_rt.monitor, feat[SC_F_STEP_S], feat);
        sc_engine_failed(e, PMPI_Send(feat, SC_NFEAT, MPI_DOUBLE, e->coord, TAG_FEAT, e->ctrl));
        if (e->trace) sc_trace_write_step(e->trace, e->rank, e->steps, sc_engine_mode(e), feat);
        e->steps++;
    }
    e->step_start = now;
    e->step_wait = e->step_gsq = e->step_ssq = e->step_bytes = 0;
}

/* Squared norm on every 16th element: the noise scale needs only the ratio
 * of such norms, which the sampling leaves unbiased, at a sixteenth of the
 * cost on the application's thread. */
static double sampled_sqnorm(const void *buf, long count, sc_dkind dk)
{
    double s = 0;
    if (dk == SC_DK_FLOAT)
        for (long i = 0; i < count; i += 16) s += (double)((const float *)buf)[i] * ((const float *)buf)[i];
    else
        for (long i = 0; i < count; i += 16) s += ((const double *)buf)[i] * ((const double *)buf)[i];
    return s;
}

int sc_engine_call(sc_engine *e, int slot, const void *sendbuf, void *recvbuf, int exact)
{
    sc_slot *sl = &e->slots[slot];
    const void *mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    double t_in = sc_now();
    if (slot == 0) step_boundary(e, t_in);
    pthread_mutex_lock(&e->mu);
    int went_direct = 0;
    if (!e->direct && slot == 0 && e->direct_at > 0 && sl->calls + 1 >= e->direct_at) {
        e->direct = went_direct = 1;   /* the rounds said: from this call on, direct */
        e->direct_mode = e->mode;
        e->direct_at = 0;
    }
    int direct = e->direct;
    pthread_mutex_unlock(&e->mu);
    if (went_direct) sc_engine_failed(e, sc_engine_note(e, NOTE_DIRECT));
    if (direct) {
        int back = 0;
        int rc = sc_direct_call(e, slot, sendbuf, recvbuf, &back);
        if (!back) {
            e->step_ssq += sampled_sqnorm(recvbuf, sl->count, sl->dk);
            e->step_gsq += sampled_sqnorm(mine, sl->count, sl->dk);
            e->step_bytes += (double)sl->bytes;
            e->step_wait += sc_now() - t_in;
            return rc;
        }
    }
    e->step_gsq += sampled_sqnorm(mine, sl->count, sl->dk);
    e->step_bytes += (double)sl->bytes;

    pthread_mutex_lock(&e->mu);
    if (e->error || e->stopped) {
        int rc = e->error ? e->error : MPI_ERR_OTHER;
        pthread_mutex_unlock(&e->mu);
        return rc;
    }
    /* A flush aligns program points (every rank's first calls up to this
     * one); an exact mode only wants each round to hold a buffer of every
     * member, so a rank behind in calls after a tolerant spell is not made
     * to catch up alone while the others wait (round_rules.h). */
    int flush = exact || sl->flush_next;
    int exact_mode = sc_exact_mode(e->mode);
    sl->flush_next = 0;
    /* Decided now and announced: a call that finds missed rounds returns
     * them at once; otherwise it waits for the round holding its buffer. */
    int waits = flush || exact_mode || sl->inbox_rounds == 0;
    /* A waiting caller's buffers stay put until it returns, so its deposit
     * is borrowed and results land in its receive buffer; a caller that
     * returns at once leaves a copy. */
    int borrow = waits && sl->inbox_rounds == 0;
    int to_target = borrow && e->my_parent < 0;   /* a child's results arrive through its inbox */
    sc_deposit *d = borrow ? calloc(1, sizeof *d) : deposit_get(sl);
    if (!d) {
        pthread_mutex_unlock(&e->mu);
        return MPI_ERR_NO_MEM;
    }
    if (borrow) {
        d->borrowed = 1;
        d->buf = (void *)mine;
        if (to_target) {
            sl->target = recvbuf;
            sl->target_filled = 0;
            sl->target_alias = mine == recvbuf ? mine : NULL;
        }
    } else {
        pthread_mutex_unlock(&e->mu);
        memcpy(d->buf, mine, sl->bytes);
        pthread_mutex_lock(&e->mu);
    }
    d->idx = sl->calls++;
    d->upto = d->idx + 1;
    d->sent = 0;
    long need = d->idx + 1;
    d->flags = (flush ? NOTE_FLUSH : 0) | (exact_mode ? NOTE_EXACT : 0) | (waits ? NOTE_WAITS : 0);
    long flags = d->flags;
    if (sl->tail) sl->tail->next = d;
    else sl->head = d;
    sl->tail = d;
    int announce = e->my_parent < 0;   /* a child's deposits go through its engine to the parent */
    if (waits) e->waiting_slot = slot;
    pthread_mutex_unlock(&e->mu);

    int rc = MPI_SUCCESS;
    if (announce) {
        long note[NOTE_LEN] = {NOTE_DEPOSIT, slot, need, flags, -1};
        rc = PMPI_Send(note, NOTE_LEN, MPI_LONG, e->coord, TAG_NOTE, e->ctrl);
    }

    pthread_mutex_lock(&e->mu);
    pthread_cond_signal(&e->cv_engine);
    if (!waits) {
        e->stats.late_calls++;
    } else {
        double t0 = sc_now();
        if (sc_engine_away_hook) {   /* tell the other communicators' engines this rank is blocked here */
            pthread_mutex_unlock(&e->mu);
            sc_engine_away_hook(e, 1);
            pthread_mutex_lock(&e->mu);
        }
        e->main_waiting++;
        /* A borrowed deposit must be out of the engine's hands before the
         * caller gets its buffers back, even on an error. */
        while ((sl->included_self < need || (borrow && deposit_pending(sl, d))) && !e->stopped &&
               !(e->error && !(borrow && deposit_pending(sl, d))))
            pthread_cond_wait(&e->cv_main, &e->mu);
        e->main_waiting--;
        e->waiting_slot = -1;
        e->stats.wait_s += sc_now() - t0;
        if (sc_engine_away_hook) {
            pthread_mutex_unlock(&e->mu);
            sc_engine_away_hook(e, 0);
            pthread_mutex_lock(&e->mu);
        }
    }
    if (rc == MPI_SUCCESS) rc = e->error ? e->error : (sl->included_self < need ? MPI_ERR_OTHER : MPI_SUCCESS);
    if (borrow && deposit_pending(sl, d)) unlink_deposit(sl, d);   /* engine stopped: take it back */
    /* The result: what landed in the caller's buffer, plus any round that
     * went to the inbox (one already under way when the caller came). */
    if (sl->target && sl->target_filled) {
        if (sl->inbox_rounds > 0) {
            sc_sum_into(recvbuf, sl->inbox, (size_t)sl->count, sl->dk);
            memset(sl->inbox, 0, sl->bytes);
        }
    } else {
        memcpy(recvbuf, sl->inbox, sl->bytes);
        memset(sl->inbox, 0, sl->bytes);
    }
    sl->inbox_rounds = 0;
    sl->target = NULL;
    sl->target_filled = 0;
    sl->target_alias = NULL;
    if (e->my_parent >= 0) e->stats.child_rounds++;
    pthread_mutex_unlock(&e->mu);
    e->step_ssq += sampled_sqnorm(recvbuf, sl->count, sl->dk);
    e->step_wait += sc_now() - t_in;
    return rc;
}

void sc_engine_flush_next(sc_engine *e)
{
    pthread_mutex_lock(&e->mu);
    for (int s = 0; s < e->nslots; s++) e->slots[s].flush_next = 1;
    pthread_mutex_unlock(&e->mu);
}

sc_mode sc_engine_mode(sc_engine *e)
{
    pthread_mutex_lock(&e->mu);
    sc_mode m = e->direct ? e->direct_mode : e->mode;
    pthread_mutex_unlock(&e->mu);
    return m;
}

sc_away_fn sc_engine_away_hook;

int sc_engine_note(sc_engine *e, long kind)
{
    long note[NOTE_LEN] = {kind, 0, 0, 0, -1};
    return PMPI_Send(note, NOTE_LEN, MPI_LONG, e->coord, TAG_NOTE, e->ctrl);
}

void sc_engine_away(sc_engine *e, int away)
{
    if (e->left) return;
    sc_engine_failed(e, sc_engine_note(e, away ? NOTE_AWAY : NOTE_BACK));
}

void sc_engine_announce_leave(sc_engine *e)
{
    if (e->left) return;
    e->left = 1;
    int failed = sc_engine_failed(e, sc_engine_note(e, NOTE_LEAVE));
    pthread_mutex_lock(&e->mu);
    if (failed) e->quit = 1;   /* nobody will send this engine its STOP: do not wait for it */
    pthread_cond_signal(&e->cv_engine);
    pthread_mutex_unlock(&e->mu);
}

void sc_engine_leave(sc_engine *e, sc_engine_stats *out, sc_leftover_fn leftover, void *ctx)
{
    if (e->thread_started) {
        sc_engine_announce_leave(e);
        pthread_join(e->thread, NULL);
    }
    e->stats.relaxed = e->relaxed;
    if (out) *out = e->stats;
    for (int s = 0; leftover && s < e->nslots; s++)
        if (e->slots[s].inbox_rounds > 0)
            leftover(ctx, e->slots[s].count, e->slots[s].dk, e->slots[s].inbox, e->slots[s].bytes);
    engine_free(e);
}
