/* The tolerant engine, the application thread's side (engine.h): a call
 * deposits its buffer and waits for the round holding it, or returns the
 * rounds it missed at once; a call off the pattern waits for the ranks'
 * verdict; a rank leaves.  Direct steps are in engine_direct.c. */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "runtime.h"
#include "monitor.h"
#include "trace.h"

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

sc_deposit *sc_deposit_get(sc_slot *sl)
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

/* The time blocked in MPI outside this engine's calls since the last
 * step boundary (see away_mu), a wait still under way included. */
static double take_away(sc_engine *e, double now)
{
    pthread_mutex_lock(&e->away_mu);
    double s = e->away_s;
    e->away_s = 0;
    if (e->away_depth > 0) {
        s += now - e->away_since;
        e->away_since = now;
    }
    pthread_mutex_unlock(&e->away_mu);
    return s;
}

/* At each step's first call: the step's features (timing here, the rest
 * from the monitor) go to the coordinator, and to the trace. */
static void step_boundary(sc_engine *e, double now)
{
    double away = take_away(e, now);
    if (e->step_start > 0) {
        double feat[SC_NFEAT] = {0};
        feat[SC_F_STEP_S] = now - e->step_start;
        feat[SC_F_WAIT_S] = e->step_wait + away;
        if (feat[SC_F_WAIT_S] > feat[SC_F_STEP_S]) feat[SC_F_WAIT_S] = feat[SC_F_STEP_S];
        feat[SC_F_AWAY_S] = away < feat[SC_F_WAIT_S] ? away : feat[SC_F_WAIT_S];
        feat[SC_F_ARRIVE_S] = now - e->born;
        feat[SC_F_COMPUTE_S] = feat[SC_F_STEP_S] - feat[SC_F_WAIT_S];
        feat[SC_F_BYTES] = e->step_bytes;
        feat[SC_F_GRAD_SQNORM] = e->step_gsq;
        pthread_mutex_lock(&e->mu);
        e->step_ssq += e->nb_ssq;   /* the results of nonblocking calls, from the engine's thread */
        e->nb_ssq = 0;
        pthread_mutex_unlock(&e->mu);
        feat[SC_F_SUM_SQNORM] = e->step_ssq;
        feat[SC_F_LINK_SPB] = e->link_spb;
        if (sc_rt.monitor) {   /* one monitor per process; calls on two communicators may come from two threads */
            static pthread_mutex_t monitor_mu = PTHREAD_MUTEX_INITIALIZER;
            pthread_mutex_lock(&monitor_mu);
            sc_monitor_sample(sc_rt.monitor, feat[SC_F_STEP_S], feat);
            pthread_mutex_unlock(&monitor_mu);
        }
        sc_engine_failed(e, PMPI_Send(feat, SC_NFEAT, MPI_DOUBLE, e->coord, TAG_FEAT, e->ctrl));
        if (e->rank == e->coord) {   /* the selector's step: its engine may nap long in direct steps */
            pthread_mutex_lock(&e->mu);
            pthread_cond_signal(&e->cv_engine);
            pthread_mutex_unlock(&e->mu);
        }
        if (e->trace) {
            pthread_mutex_lock(&e->mu);
            int parent = e->my_parent;
            pthread_mutex_unlock(&e->mu);
            sc_trace_write_step(e->trace, e->rank, e->steps, sc_engine_mode(e), parent, feat);
        }
        e->steps++;
    }
    e->step_start = now;
    e->step_wait = e->step_gsq = e->step_ssq = e->step_bytes = 0;
}

/* Squared norm on every 16th element: the noise scale needs only the ratio
 * of such norms, which the sampling leaves unbiased, at a sixteenth of the
 * cost on the application's thread. */
double sc_sampled_sqnorm(const void *buf, long count, sc_dkind dk)
{
    double s = 0;
    if (dk == SC_DK_FLOAT)
        for (long i = 0; i < count; i += 16) s += (double)((const float *)buf)[i] * ((const float *)buf)[i];
    else
        for (long i = 0; i < count; i += 16) s += ((const double *)buf)[i] * ((const double *)buf)[i];
    return s;
}

/* Around a wait in a call of this engine: the other communicators'
 * engines are told this rank is blocked here, and the watchdog knows. */
static void waiting(sc_engine *e, int on)
{
    if (sc_engine_away_hook) sc_engine_away_hook(e, on);
}

double sc_wait_begin(sc_engine *e)
{
    double t0 = sc_now();
    pthread_mutex_unlock(&e->mu);
    waiting(e, 1);
    pthread_mutex_lock(&e->mu);
    e->main_waiting++;
    return t0;
}

double sc_wait_end(sc_engine *e, double t0)
{
    e->main_waiting--;
    double waited = sc_now() - t0;
    pthread_mutex_unlock(&e->mu);
    waiting(e, 0);
    pthread_mutex_lock(&e->mu);
    return waited;
}

/* A call on a slot whose nonblocking call is still under way waits for
 * it first: results on a slot are returned in call order. */
static void wait_nonblocking(sc_engine *e, sc_slot *sl)
{
    if (!sl->nb) return;
    double t0 = sc_wait_begin(e);
    while (sl->nb && !e->error && !e->stopped) pthread_cond_wait(&e->cv_main, &e->mu);
    sc_wait_end(e, t0);
}

/* The call (nb NULL: blocking; else nonblocking, see engine.h). */
static int engine_call(sc_engine *e, int slot, long pos, const void *sendbuf, void *recvbuf, int exact, int *first_off,
                       sc_nb_call *nb, int *pending)
{
    sc_slot *sl = &e->slots[slot];
    const void *mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    double t_in = sc_now();
    *first_off = -1;
    if (pending) *pending = 0;
    /* in the call from here on: the step boundary sends the features (a
     * blocking send), and a watchdog must not call a rank held there
     * "computing" */
    sc_stall_app(e, SC_APP_IN_CALL, slot, pos, 0);
    if (slot == 0) step_boundary(e, t_in);
    pthread_mutex_lock(&e->mu);
    wait_nonblocking(e, sl);
    int went_direct = 0;
    if (!e->direct && slot == 0 && e->direct_at > 0 && sl->calls + 1 >= e->direct_at) {
        e->direct = went_direct = 1;   /* the rounds said: from this call on, direct */
        e->direct_mode = e->mode;
        e->direct_polled = e->direct_polled_at;
        e->direct_at = 0;
    }
    int direct = e->direct;
    pthread_mutex_unlock(&e->mu);
    if (went_direct) sc_engine_failed(e, sc_engine_note(e, NOTE_DIRECT));
    if (direct) {
        int back = 0;
        double gsq = sc_sampled_sqnorm(mine, sl->count, sl->dk);   /* before: the result may overwrite it */
        int rc = sc_direct_call(e, slot, sendbuf, recvbuf, &back, first_off);
        if (!back && rc == MPI_SUCCESS && sl->fuse >= 0) {   /* a group round left from before going direct */
            pthread_mutex_lock(&e->mu);
            sc_fusion_take(e, sl, recvbuf, 1);
            pthread_mutex_unlock(&e->mu);
        }
        if (!back) {
            e->step_ssq += sc_sampled_sqnorm(recvbuf, sl->count, sl->dk);
            e->step_gsq += gsq;
            e->step_bytes += (double)sl->bytes;
            e->step_wait += sc_now() - t_in;
            sc_stall_app(e, SC_APP_COMPUTING, slot, pos + 1, 0);
            return rc;
        }
    }
    e->step_gsq += sc_sampled_sqnorm(mine, sl->count, sl->dk);
    e->step_bytes += (double)sl->bytes;
    if (sl->fuse >= 0) {   /* a small tensor: fused with the step's others */
        int own = 0;
        int rc = sc_fusion_call(e, slot, pos, sendbuf, recvbuf, exact, &own);
        if (!own || rc != MPI_SUCCESS) {
            e->step_ssq += sc_sampled_sqnorm(recvbuf, sl->count, sl->dk);
            e->step_wait += sc_now() - t_in;
            sc_stall_app(e, SC_APP_COMPUTING, slot, pos + 1, 0);
            return rc;
        }
    }

    pthread_mutex_lock(&e->mu);
    if (e->error || e->stopped) {
        int rc = e->error ? e->error : MPI_ERR_OTHER;
        pthread_mutex_unlock(&e->mu);
        sc_stall_app(e, SC_APP_COMPUTING, slot, pos, 0);
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
     * returns at once leaves a copy.  A nonblocking call leaves a copy too:
     * its result goes through the inbox when its round is in. */
    int borrow = waits && sl->inbox_rounds == 0 && !nb;
    int to_target = borrow && e->my_parent < 0;   /* a child's results arrive through its inbox */
    sc_deposit *d = borrow ? calloc(1, sizeof *d) : sc_deposit_get(sl);
    if (!d) {
        pthread_mutex_unlock(&e->mu);
        sc_stall_app(e, SC_APP_COMPUTING, slot, pos, 0);
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
        sc_engine_copied(e, sl->bytes);
        pthread_mutex_lock(&e->mu);
    }
    d->idx = sl->calls++;
    d->upto = d->idx + 1;
    d->sent = 0;
    d->pos = pos;
    long need = d->idx + 1;
    /* A nonblocking caller counts as waiting for its round too: it will
     * wait (or poll) for it before it deposits here again, so the
     * coordinator must not hold rounds for its next deposit (staleness). */
    d->flags = (flush ? NOTE_FLUSH : 0) | (exact_mode ? NOTE_EXACT : 0) | (waits ? NOTE_WAITS : 0);
    long flags = d->flags;
    if (sl->tail) sl->tail->next = d;
    else sl->head = d;
    sl->tail = d;
    int announce = e->my_parent < 0;   /* a child's deposits go through its engine to the parent */
    int later = nb && waits;           /* the engine completes this call */
    if (later) {
        nb->recvbuf = recvbuf;
        sl->nb = nb;
        sl->nb_need = need;
        sl->nb_flush = flush;
        e->nb_pending++;
    } else if (waits) {
        e->waiting_slot = slot;
    }
    pthread_mutex_unlock(&e->mu);

    int rc = MPI_SUCCESS;
    if (announce) {
        rc = sc_engine_deposit_note(e, slot, need, flags, -1, pos);
    }
    if (later) {
        /* From here the request is the engine's: a failure completes it
         * with the error, which the user's wait returns. */
        *pending = 1;
        pthread_mutex_lock(&e->mu);
        pthread_cond_signal(&e->cv_engine);
        pthread_mutex_unlock(&e->mu);
        sc_engine_failed(e, rc);
        sc_stall_app(e, SC_APP_COMPUTING, slot, pos + 1, 0);
        return MPI_SUCCESS;
    }

    pthread_mutex_lock(&e->mu);
    pthread_cond_signal(&e->cv_engine);
    if (!waits) {
        e->stats.late_calls++;
    } else {
        double t0 = sc_wait_begin(e);
        /* A borrowed deposit must be out of the engine's hands before the
         * caller gets its buffers back, even on an error. */
        while ((sl->included_self < need || (borrow && deposit_pending(sl, d)) || (flush && !sc_rounds_all_in(sl))) &&
               !e->stopped && !(e->error && !(borrow && deposit_pending(sl, d))))
            pthread_cond_wait(&e->cv_main, &e->mu);
        e->waiting_slot = -1;
        e->stats.wait_s += sc_wait_end(e, t0);
    }
    /* A late call (it returned the rounds it missed) completed as its mode
     * defines: success.  Only a waiting call whose round never came (the
     * engine failed or stopped) fails. */
    if (rc == MPI_SUCCESS && e->error) rc = e->error;
    if (rc == MPI_SUCCESS && waits && sl->included_self < need) rc = MPI_ERR_OTHER;
    if (borrow && deposit_pending(sl, d)) unlink_deposit(sl, d);   /* engine stopped: take it back */
    /* The result: what landed in the caller's buffer, plus any round that
     * went to the inbox (one already under way when the caller came). */
    if (sl->target && sl->target_filled) {
        if (sl->inbox_rounds > 0) {
            sc_sum_into(recvbuf, sl->inbox, (size_t)sl->count, sl->dk);
            memset(sl->inbox, 0, sl->bytes);
            sc_engine_copied(e, sl->bytes);
        }
    } else {
        memcpy(recvbuf, sl->inbox, sl->bytes);
        memset(sl->inbox, 0, sl->bytes);
        sc_engine_copied(e, sl->bytes);
    }
    sl->inbox_rounds = 0;
    sl->target = NULL;
    sl->target_filled = 0;
    sl->target_alias = NULL;
    if (sl->fuse >= 0) sc_fusion_take(e, sl, recvbuf, 1);   /* group rounds from before an exact spell */
    if (e->my_parent >= 0) e->stats.child_rounds++;
    pthread_mutex_unlock(&e->mu);
    e->step_ssq += sc_sampled_sqnorm(recvbuf, sl->count, sl->dk);
    e->step_wait += sc_now() - t_in;
    sc_stall_app(e, SC_APP_COMPUTING, slot, pos + 1, 0);
    return rc;
}

int sc_engine_call(sc_engine *e, int slot, long pos, const void *sendbuf, void *recvbuf, int exact, int *first_off)
{
    return engine_call(e, slot, pos, sendbuf, recvbuf, exact, first_off, NULL, NULL);
}

int sc_engine_icall(sc_engine *e, int slot, long pos, const void *sendbuf, void *recvbuf, int exact, int *first_off,
                    sc_nb_call *nb, int *pending)
{
    return engine_call(e, slot, pos, sendbuf, recvbuf, exact, first_off, nb, pending);
}

/* Off the pattern, in rounds: the coordinator judges once every rank's
 * call at this position is known (engine_coord.c, judge_off). */
static int off_in_rounds(sc_engine *e, int slot, long pos, uint64_t shape, sc_off_verdict *verdict, int *first_off)
{
    pthread_mutex_lock(&e->mu);
    e->verdict = 0;
    e->verdict_rank = -1;
    pthread_mutex_unlock(&e->mu);
    int rc = sc_engine_send_note(e, NOTE_OFF, slot, (long)shape, 0, -1, pos);
    if (rc != MPI_SUCCESS) return rc;
    pthread_mutex_lock(&e->mu);
    double t0 = sc_wait_begin(e);
    pthread_cond_signal(&e->cv_engine);
    while (!e->verdict && !e->error && !e->stopped) pthread_cond_wait(&e->cv_main, &e->mu);
    sc_wait_end(e, t0);
    *verdict = (sc_off_verdict)e->verdict;
    *first_off = e->verdict_rank;
    rc = e->verdict ? MPI_SUCCESS : e->error ? e->error : MPI_ERR_OTHER;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int sc_engine_off(sc_engine *e, int slot, long pos, uint64_t shape, sc_off_verdict *verdict, int *first_off)
{
    *verdict = SC_OFF_REJECT;
    *first_off = -1;
    sc_stall_app(e, SC_APP_OFF, slot, pos, 0);
    pthread_mutex_lock(&e->mu);
    int direct = e->direct;
    pthread_mutex_unlock(&e->mu);
    if (direct) {
        int back = 0;
        int rc = sc_direct_off(e, slot, shape, verdict, first_off, &back);
        if (!back) return rc;
    }
    return off_in_rounds(e, slot, pos, shape, verdict, first_off);
}

int sc_engine_off_done(sc_engine *e, const sc_user_call *call)
{
    int rc = MPI_SUCCESS;
    if (call) {
        /* every rank is at this call: a plain collective, apart from the rounds */
        waiting(e, 1);
        rc = PMPI_Allreduce(call->sendbuf, call->recvbuf, call->count, call->dt, call->op, e->direct_comm);
        waiting(e, 0);
    }
    pthread_mutex_lock(&e->mu);
    int direct = e->direct;
    pthread_mutex_unlock(&e->mu);
    if (!direct) {
        int rc2 = sc_engine_note(e, NOTE_BACK);
        if (rc == MPI_SUCCESS) rc = rc2;
    }
    sc_stall_app(e, SC_APP_COMPUTING, -1, -1, 0);
    return rc;
}

int sc_engine_off_moved(sc_engine *e, int slot, long pos, uint64_t shape, sc_off_verdict *verdict)
{
    *verdict = SC_OFF_REJECT;
    pthread_mutex_lock(&e->mu);
    int direct = e->direct;
    pthread_mutex_unlock(&e->mu);
    if (direct) return MPI_SUCCESS;
    sc_stall_app(e, SC_APP_OFF, slot, pos, 0);
    int first_off = -1;
    int rc = off_in_rounds(e, slot, pos, shape | SC_SHAPE_MOVED, verdict, &first_off);
    if (rc == MPI_SUCCESS && *verdict != SC_OFF_STRAY) rc = sc_engine_off_done(e, NULL);
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

int sc_engine_direct(sc_engine *e)
{
    pthread_mutex_lock(&e->mu);
    int d = e->direct;
    pthread_mutex_unlock(&e->mu);
    return d;
}

sc_away_fn sc_engine_away_hook;

int sc_engine_send_note(sc_engine *e, long kind, long slot, long count, long flags, int for_rank, long pos)
{
    /* for a child: only its parent's engine thread, which owns the epoch */
    long note[NOTE_LEN] = {kind, slot, count, flags, for_rank, pos, for_rank >= 0 ? e->epoch : -1};
    return PMPI_Send(note, NOTE_LEN, MPI_LONG, e->coord, TAG_NOTE, e->ctrl);
}

int sc_engine_note(sc_engine *e, long kind)
{
    return sc_engine_send_note(e, kind, 0, 0, 0, -1, 0);
}

int sc_engine_deposit_note(sc_engine *e, int slot, long count, long flags, int for_rank, long pos)
{
    return sc_engine_send_note(e, NOTE_DEPOSIT, slot, count, flags, for_rank, pos);
}

/* A notice that this rank blocks in MPI elsewhere, or is back: its
 * length counts as the step's wait.  Not polling (MPI_Test): the code
 * works between its tests.  Nor a point-to-point call: it waits for one
 * peer's work (a pipeline's previous stage), part of this rank's way to
 * its next collective, which its peers here would wait for under sync.
 * Counted as a wait, it hid such a rank's lateness from auto (a pipeline's
 * stage-0 rank of a slow replica: 'no straggler', sync for 55 steps). */
static void count_away(sc_engine *e, int away, int what)
{
    if (what == SC_AWAY_TEST || what == SC_AWAY_SEND || what == SC_AWAY_RECV || what == SC_AWAY_SENDRECV ||
        what == SC_AWAY_PROBE)
        return;
    double now = sc_now();
    pthread_mutex_lock(&e->away_mu);
    if (away) {
        if (e->away_depth++ == 0) e->away_since = now;
    } else if (e->away_depth > 0 && --e->away_depth == 0) {
        e->away_s += now - e->away_since;
    }
    pthread_mutex_unlock(&e->away_mu);
}

void sc_engine_away(sc_engine *e, int away, int what)
{
    if (e->left) return;
    count_away(e, away, what);
    sc_stall_app(e, away ? SC_APP_AWAY : SC_APP_COMPUTING, -1, -1, what);
    /* Direct steps have no rounds to keep from waiting: no notice, which
     * would only wake the coordinator's engine thread twice a call (the
     * going back to rounds resets what the coordinator knows anyway). */
    if (sc_engine_direct(e)) return;
    if (away && sc_engine_failed(e, sc_fusion_deposit_before_blocking(e))) return;
    sc_engine_failed(e, sc_engine_note(e, away ? NOTE_AWAY : NOTE_BACK));
}

void sc_engine_announce_leave(sc_engine *e)
{
    if (e->left) return;
    sc_stall_app(e, SC_APP_LEFT, -1, -1, 0);
    e->left = 1;
    /* a step cut short (a relearn): its fused buffers are not lost */
    int failed = sc_engine_failed(e, sc_fusion_deposit_staged(e, -1));
    failed = failed || sc_engine_failed(e, sc_engine_note(e, NOTE_LEAVE));
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
    /* per user slot: its own rounds and its part of its group's */
    for (int s = 0; leftover && s < e->nuser; s++) {
        sc_slot *sl = &e->slots[s];
        int fused = sl->fuse >= 0 && sl->fused_rounds > 0;
        if (sl->inbox_rounds <= 0 && !fused) continue;
        if (sl->inbox_rounds <= 0) memset(sl->inbox, 0, sl->bytes);
        if (fused) sc_fusion_take(e, sl, sl->inbox, 1);
        leftover(ctx, s, sl->inbox, sl->bytes);
    }
    sc_engine_free(e);
}

const char *sc_away_name(int what)
{
    static const char *const names[SC_AWAY_N] = {
        "in a collective", "in MPI_Barrier", "in MPI_Bcast", "in MPI_Reduce", "in MPI_Allgather", "in MPI_Gather",
        "in MPI_Scatter", "in MPI_Alltoall", "in an exact MPI_Allreduce", "in MPI_Allreduce on another communicator",
        "in MPI_Wait (or Waitall, Waitany, Waitsome)", "polling MPI_Test (or Testall, Testany, Testsome, Iprobe, Improbe, Request_get_status)",
        "in MPI_Allgatherv", "in MPI_Gatherv", "in MPI_Scatterv", "in MPI_Alltoallv (or Alltoallw)",
        "in MPI_Reduce_scatter (or Reduce_scatter_block)", "in MPI_Scan (or Exscan)",
        "in MPI_Send (or Ssend, Rsend)", "in MPI_Recv (or Mrecv)", "in MPI_Sendrecv (or Sendrecv_replace)",
        "in MPI_Probe (or Mprobe)", "making a communicator (MPI_Comm_split, dup, create, ...)",
        "in a collective MPI-IO call (MPI_File_open, write_all, ...)",
        "in a window call (MPI_Win_fence, create, free, start, complete, wait, ...)",
        "in a neighbourhood collective (MPI_Neighbor_allgather, alltoall, ...)"};
    return what >= 0 && what < SC_AWAY_N ? names[what] : names[0];
}
