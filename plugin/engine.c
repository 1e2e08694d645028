/* The tolerant engine (see engine.h).
 *
 * Threads: the application's thread deposits buffers and waits on a
 * condition variable; the engine thread talks MPI on two duplicates of
 * the user's communicator: `ctrl` for notices (rank -> coordinator) and
 * round messages (coordinator -> ranks), `data` for the reductions.  The
 * engine never spins: when idle it sleeps on a condition variable with a
 * growing timeout, woken at once by its own rank's deposits.
 *
 * Rounds of all slots run in the order the coordinator sends them, so the
 * collectives on `data` line up on every rank. */
#include "engine.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels.h"
#include "round_rules.h"
#include "runtime.h"

enum { TAG_NOTE = 7101, TAG_ROUND = 7102 };
enum { NOTE_DEPOSIT = 1, NOTE_LEAVE = 2, NOTE_AWAY = 3, NOTE_BACK = 4 };
enum { NOTE_FLUSH = 1, NOTE_WAITS = 2 };   /* deposit flags */
enum { ROUND_RUN = 1, ROUND_STOP = 2 };
/* Round message header; the per-rank inclusion counts follow. */
enum { RH_KIND, RH_SLOT, RH_MODE, RH_K, RH_LEN };

typedef struct sc_deposit {
    long idx;                  /* this rank's call number on the slot */
    void *buf;
    struct sc_deposit *next;
} sc_deposit;

typedef struct sc_slot {
    long count;
    sc_dkind dk;
    size_t bytes;
    MPI_Datatype dt;
    /* shared with the application thread, under e->mu */
    long calls;                /* deposits made on this slot by this rank */
    sc_deposit *head, *tail, *spare;
    void *inbox;               /* completed rounds not yet returned */
    long inbox_rounds;
    long included_self;        /* my deposits included in completed rounds */
    int flush_next;
    /* engine thread only */
    void *scratch;             /* count + 1 elements: the round buffer and its fresh count */
    sc_track track;            /* coordinator only */
} sc_slot;

struct sc_engine {
    MPI_Comm ctrl, data;
    int rank, n, coord;
    pthread_t thread;
    int thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv_main;    /* a round completed */
    pthread_cond_t cv_engine;  /* a deposit or a leave happened */
    int nslots;
    sc_slot *slots;
    sc_mode mode;              /* mode of the rounds now (under mu) */
    int k;
    int main_waiting;
    int stopped;               /* engine thread finished (under mu) */
    int error;                 /* first MPI error seen by the engine thread */
    int quit;                  /* start-up failed elsewhere: stop at once (under mu) */
    int left;                  /* this rank announced it leaves */
    unsigned char *gone;       /* coordinator: ranks that left */
    int *blocked_at;           /* coordinator: slot each rank waits on, or -1 */
    long *blocked_need;        /* coordinator: the deposit count that rank waits for */
    int ngone;
    long *incl;                /* scratch for round messages */
    long *msg;
    double round_period;       /* coordinator: smoothed time between rounds */
    double last_note_t;        /* coordinator: when the last notice arrived */
    long relaxed;              /* coordinator: rounds closed under quorum by a stall */
    double last_round_t;
    sc_engine_stats stats;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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

static int exact_mode(sc_mode m)
{
    return m == SC_MODE_SYNC || m == SC_MODE_HIER;
}

/* ---- engine thread: taking part in a round ------------------------------ */

static void run_round(sc_engine *e, int s, const long *incl, sc_mode mode, int k)
{
    sc_slot *sl = &e->slots[s];
    /* Detach the deposits this round includes. */
    pthread_mutex_lock(&e->mu);
    sc_deposit *take = NULL, **tail = &take;
    while (sl->head && sl->head->idx < incl[e->rank]) {
        sc_deposit *d = sl->head;
        sl->head = d->next;
        if (!sl->head) sl->tail = NULL;
        d->next = NULL;
        *tail = d;
        tail = &d->next;
    }
    pthread_mutex_unlock(&e->mu);

    memset(sl->scratch, 0, sl->bytes + sc_dkind_size(sl->dk));
    long mine = 0;
    for (sc_deposit *d = take; d; d = d->next, mine++) sc_sum_into(sl->scratch, d->buf, (size_t)sl->count, sl->dk);
    /* The fresh count rides in the extra element (exact in float to 2^24). */
    if (sl->dk == SC_DK_FLOAT) ((float *)sl->scratch)[sl->count] = (float)mine;
    else ((double *)sl->scratch)[sl->count] = (double)mine;

    int rc = PMPI_Allreduce(MPI_IN_PLACE, sl->scratch, (int)sl->count + 1, sl->dt, MPI_SUM, e->data);
    double fresh = sl->dk == SC_DK_FLOAT ? ((float *)sl->scratch)[sl->count] : ((double *)sl->scratch)[sl->count];
    if (rc == MPI_SUCCESS && sc_rt.policy.scale_fresh && fresh > 0)
        sc_scale(sl->scratch, (size_t)sl->count, sl->dk, (double)e->n / fresh);

    pthread_mutex_lock(&e->mu);
    if (rc != MPI_SUCCESS && !e->error) e->error = rc;
    sc_sum_into(sl->inbox, sl->scratch, (size_t)sl->count, sl->dk);
    sl->inbox_rounds++;
    sl->included_self = incl[e->rank];
    /* give the detached deposit buffers back */
    if (take) {
        *tail = sl->spare;
        sl->spare = take;
    }
    e->mode = mode;
    e->k = k;
    e->stats.rounds++;
    e->stats.fresh_sum += fresh;
    e->stats.mode_rounds[mode]++;
    pthread_cond_broadcast(&e->cv_main);
    pthread_mutex_unlock(&e->mu);
}

/* ---- engine thread: the coordinator ------------------------------------- */

static void apply_note(sc_engine *e, int src, const long *note)
{
    if (note[0] == NOTE_DEPOSIT && note[1] >= 0 && note[1] < e->nslots) {
        sc_track_announce(&e->slots[note[1]].track, src, note[2], (int)(note[3] & NOTE_FLUSH));
        if (note[3] & NOTE_WAITS) {
            e->blocked_at[src] = (int)note[1];
            e->blocked_need[src] = note[2];
        }
    }
    else if (note[0] == NOTE_AWAY) {
        if (e->blocked_at[src] == -1) e->blocked_at[src] = SC_BLOCKED_OUTSIDE;
    } else if (note[0] == NOTE_BACK) {
        if (e->blocked_at[src] == SC_BLOCKED_OUTSIDE) e->blocked_at[src] = -1;
    } else if (note[0] == NOTE_LEAVE && !e->gone[src]) {
        e->gone[src] = 1;
        e->ngone++;
    }
}

static int drain_notes(sc_engine *e)
{
    int got = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (PMPI_Iprobe(MPI_ANY_SOURCE, TAG_NOTE, e->ctrl, &flag, &st) != MPI_SUCCESS || !flag) break;
        long note[4];
        if (PMPI_Recv(note, 4, MPI_LONG, st.MPI_SOURCE, TAG_NOTE, e->ctrl, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
        apply_note(e, st.MPI_SOURCE, note);
        e->last_note_t = now_s();
        got = 1;
    }
    return got;
}

static int send_round(sc_engine *e, long kind, int s, sc_mode mode, int k)
{
    e->msg[RH_KIND] = kind;
    e->msg[RH_SLOT] = s;
    e->msg[RH_MODE] = mode;
    e->msg[RH_K] = k;
    memcpy(e->msg + RH_LEN, e->incl, sizeof(long) * (size_t)e->n);
    for (int r = 0; r < e->n; r++) {
        if (r == e->rank) continue;
        int rc = PMPI_Send(e->msg, RH_LEN + e->n, MPI_LONG, r, TAG_ROUND, e->ctrl);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* Close slot s's round: bookkeeping, round message to every rank, and
 * this rank's part of the reduction. */
static int close_round(sc_engine *e, int s, sc_rules *rules, sc_mode mode, int k)
{
    sc_track *tr = &e->slots[s].track;
    if (rules->relax_quorum && !e->relaxed++)
        sc_say(SC_SAY_STALL, 0, "starcoll: tolerant rounds stalled (ranks blocked in a call starcoll cannot see, "
               "such as an exact collective each step); closing rounds below the quorum to go on");
    int flushing = tr->flush_upto != 0;
    int fresh = sc_round_close(tr, rules, e->incl);
    if (!flushing && !rules->relax_quorum && !rules->excuse_blocked && !exact_mode(mode) &&
        (e->stats.min_fresh < 0 || fresh < e->stats.min_fresh))
        e->stats.min_fresh = fresh;
    if (tr->max_absent > e->stats.max_staleness) e->stats.max_staleness = tr->max_absent;
    for (int r = 0; r < e->n; r++)
        if (e->blocked_at[r] == s && e->incl[r] >= e->blocked_need[r]) e->blocked_at[r] = -1;
    int rc = send_round(e, ROUND_RUN, s, mode, k);
    if (rc != MPI_SUCCESS) {
        e->error = rc;
        return rc;
    }
    run_round(e, s, e->incl, mode, k);
    double tn = now_s();
    if (e->last_round_t > 0) {
        double gap = tn - e->last_round_t;
        e->round_period = e->round_period > 0 ? 0.9 * e->round_period + 0.1 * gap : gap;
    }
    e->last_round_t = tn;
    return MPI_SUCCESS;
}

static void coordinator_loop(sc_engine *e)
{
    double nap = 20e-6;
    int rr = 0;
    sc_rules rules = {0};
    rules.gone = e->gone;
    rules.blocked_at = e->blocked_at;
    for (;;) {
        int progressed = drain_notes(e);
        pthread_mutex_lock(&e->mu);
        sc_mode mode = e->mode;
        int k = e->k;
        pthread_mutex_unlock(&e->mu);
        rules.k = exact_mode(mode) ? e->n : k;
        rules.staleness = sc_rt.policy.staleness;
        /* Grace: a small share of the recent round period, so the slower
         * ranks of a healthy step still make the round. */
        rules.grace_s = 0.05 * e->round_period;
        if (rules.grace_s < 50e-6) rules.grace_s = 50e-6;
        if (rules.grace_s > 2e-3) rules.grace_s = 2e-3;
        double t = now_s(), wake = -1;
        double stall = 20 * e->round_period > 0.2 ? 20 * e->round_period : 0.2;
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
                sc_track *tr = &e->slots[s].track;
                double w;
                rules.slot = s;
                if (sc_round_verdict(tr, &rules, t, &w) != SC_CLOSE) {
                    if (w > 0 && (wake < 0 || w < wake)) wake = w;
                    continue;
                }
                if (close_round(e, s, &rules, mode, k) != MPI_SUCCESS) return;
                rr = (s + 1) % e->nslots;
                progressed = closed = 1;
                break;
            }
        }
        if (e->ngone == e->n) {
            int news = 0;
            for (int s = 0; s < e->nslots; s++) news |= sc_track_has_news(&e->slots[s].track);
            if (!news) {
                memset(e->incl, 0, sizeof(long) * (size_t)e->n);
                send_round(e, ROUND_STOP, 0, mode, k);
                return;
            }
        }
        if (progressed) {
            nap = 20e-6;
            continue;
        }
        pthread_mutex_lock(&e->mu);
        if (e->quit) {
            pthread_mutex_unlock(&e->mu);
            return;
        }
        double cap = e->main_waiting ? 200e-6 : 2e-3;
        nap = nap * 2 > cap ? cap : nap * 2;
        double d = nap;
        if (wake > 0 && wake - t < d) d = wake - t > 0 ? wake - t : 0;
        if (d > 0) engine_nap(e, d);
        pthread_mutex_unlock(&e->mu);
    }
}

/* ---- engine thread: any other rank ------------------------------------- */

static void member_loop(sc_engine *e)
{
    double nap = 20e-6;
    for (;;) {
        int flag = 0;
        if (PMPI_Iprobe(e->coord, TAG_ROUND, e->ctrl, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            e->error = MPI_ERR_OTHER;
            return;
        }
        if (flag) {
            if (PMPI_Recv(e->msg, RH_LEN + e->n, MPI_LONG, e->coord, TAG_ROUND, e->ctrl, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                e->error = MPI_ERR_OTHER;
                return;
            }
            if (e->msg[RH_KIND] == ROUND_STOP) return;
            run_round(e, (int)e->msg[RH_SLOT], e->msg + RH_LEN, (sc_mode)e->msg[RH_MODE], (int)e->msg[RH_K]);
            nap = 20e-6;
            continue;
        }
        pthread_mutex_lock(&e->mu);
        if (e->quit) {
            pthread_mutex_unlock(&e->mu);
            return;
        }
        double cap = e->main_waiting ? 200e-6 : 2e-3;
        nap = nap * 2 > cap ? cap : nap * 2;
        engine_nap(e, nap);
        pthread_mutex_unlock(&e->mu);
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

static void engine_free(sc_engine *e)
{
    if (!e) return;
    for (int s = 0; s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        sc_deposit *lists[2] = {sl->head, sl->spare};
        for (int l = 0; l < 2; l++)
            for (sc_deposit *d = lists[l], *nx; d; d = nx) {
                nx = d->next;
                free(d->buf);
                free(d);
            }
        free(sl->inbox);
        free(sl->scratch);
        sc_track_free(&sl->track);
    }
    free(e->slots);
    free(e->gone);
    free(e->blocked_at);
    free(e->blocked_need);
    free(e->incl);
    free(e->msg);
    if (e->ctrl != MPI_COMM_NULL) PMPI_Comm_free(&e->ctrl);
    if (e->data != MPI_COMM_NULL) PMPI_Comm_free(&e->data);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv_main);
    pthread_cond_destroy(&e->cv_engine);
    free(e);
}

sc_engine *sc_engine_start(MPI_Comm comm, const sc_pattern *pat, sc_mode mode)
{
    sc_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->ctrl = e->data = MPI_COMM_NULL;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv_main, NULL);
    pthread_cond_init(&e->cv_engine, NULL);
    PMPI_Comm_rank(comm, &e->rank);
    PMPI_Comm_size(comm, &e->n);
    e->coord = 0;
    e->mode = mode;
    e->nslots = pat->len;
    e->slots = calloc((size_t)pat->len, sizeof(sc_slot));
    e->gone = calloc((size_t)e->n, 1);
    e->blocked_at = malloc(sizeof(int) * (size_t)e->n);
    e->blocked_need = calloc((size_t)e->n, sizeof(long));
    for (int r = 0; e->blocked_at && r < e->n; r++) e->blocked_at[r] = -1;
    e->incl = calloc((size_t)e->n, sizeof(long));
    e->msg = calloc((size_t)(RH_LEN + e->n), sizeof(long));
    int ok = e->slots && e->gone && e->incl && e->msg && e->blocked_at && e->blocked_need;
    for (int s = 0; ok && s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        sl->count = pat->pat[s].count;
        sl->dk = (sc_dkind)pat->pat[s].dkind;
        sl->dt = sl->dk == SC_DK_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
        sl->bytes = (size_t)sl->count * sc_dkind_size(sl->dk);
        sl->inbox = calloc(1, sl->bytes);
        sl->scratch = malloc(sl->bytes + sc_dkind_size(sl->dk));
        ok = sl->inbox && sl->scratch && (e->rank != e->coord || sc_track_init(&sl->track, e->n) == 0);
    }
    e->k = quorum_k(e);
    e->stats.min_fresh = -1;
    /* Collective over comm: every rank starts its engine at the same call.
     * The outcome is agreed on, so a failure anywhere leaves all exact. */
    int rc1 = PMPI_Comm_dup(comm, &e->ctrl);
    int rc2 = PMPI_Comm_dup(comm, &e->data);
    int mine = ok && rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS, all = 0;
    if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
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

int sc_engine_call(sc_engine *e, int slot, const void *sendbuf, void *recvbuf, int exact)
{
    sc_slot *sl = &e->slots[slot];
    pthread_mutex_lock(&e->mu);
    sc_deposit *d = deposit_get(sl);
    int failed = e->error || e->stopped;
    pthread_mutex_unlock(&e->mu);
    if (!d || failed) {
        if (d) {
            pthread_mutex_lock(&e->mu);
            d->next = sl->spare;
            sl->spare = d;
            pthread_mutex_unlock(&e->mu);
        }
        return MPI_ERR_NO_MEM;
    }
    memcpy(d->buf, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, sl->bytes);

    pthread_mutex_lock(&e->mu);
    d->idx = sl->calls++;
    if (sl->tail) sl->tail->next = d;
    else sl->head = d;
    sl->tail = d;
    exact = exact || sl->flush_next || exact_mode(e->mode);
    sl->flush_next = 0;
    long need = d->idx + 1;
    /* Decided now and announced: a call that finds missed rounds returns
     * them at once; otherwise it waits for the round holding its buffer. */
    int waits = exact || sl->inbox_rounds == 0;
    pthread_mutex_unlock(&e->mu);

    long note[4] = {NOTE_DEPOSIT, slot, need, (exact ? NOTE_FLUSH : 0) | (waits ? NOTE_WAITS : 0)};
    int rc = PMPI_Send(note, 4, MPI_LONG, e->coord, TAG_NOTE, e->ctrl);
    if (rc != MPI_SUCCESS) return rc;

    pthread_mutex_lock(&e->mu);
    pthread_cond_signal(&e->cv_engine);
    if (!waits) {
        e->stats.late_calls++;
    } else {
        double t0 = now_s();
        if (sc_engine_away_hook) {   /* tell the other communicators' engines this rank is blocked here */
            pthread_mutex_unlock(&e->mu);
            sc_engine_away_hook(e, 1);
            pthread_mutex_lock(&e->mu);
        }
        e->main_waiting++;
        while (sl->included_self < need && !e->stopped && !e->error) pthread_cond_wait(&e->cv_main, &e->mu);
        e->main_waiting--;
        e->stats.wait_s += now_s() - t0;
        if (sc_engine_away_hook) {
            pthread_mutex_unlock(&e->mu);
            sc_engine_away_hook(e, 0);
            pthread_mutex_lock(&e->mu);
        }
    }
    rc = e->error ? e->error : (sl->included_self < need ? MPI_ERR_OTHER : MPI_SUCCESS);
    memcpy(recvbuf, sl->inbox, sl->bytes);
    memset(sl->inbox, 0, sl->bytes);
    sl->inbox_rounds = 0;
    pthread_mutex_unlock(&e->mu);
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
    sc_mode m = e->mode;
    pthread_mutex_unlock(&e->mu);
    return m;
}

sc_away_fn sc_engine_away_hook;

void sc_engine_away(sc_engine *e, int away)
{
    if (e->left) return;
    long note[4] = {away ? NOTE_AWAY : NOTE_BACK, 0, 0, 0};
    PMPI_Send(note, 4, MPI_LONG, e->coord, TAG_NOTE, e->ctrl);
}

void sc_engine_announce_leave(sc_engine *e)
{
    if (e->left) return;
    e->left = 1;
    long note[4] = {NOTE_LEAVE, 0, 0, 0};
    PMPI_Send(note, 4, MPI_LONG, e->coord, TAG_NOTE, e->ctrl);
    pthread_mutex_lock(&e->mu);
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
