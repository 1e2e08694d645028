/* The stall watchdog (STARCOLL_STALL; Horovod's stall inspector is the
 * model).  A hang otherwise says nothing: when a rank's call has waited
 * past the threshold, its engine thread tells the coordinator, which asks
 * every rank's engine thread what its application thread does (in a call
 * at which position, computing since when, blocked in which collective,
 * departed) and prints one line naming the ranks it waits for.  Again at
 * twice the interval each time; it never stops the job.
 *
 * The engine thread can itself be held in an MPI call (a round's
 * reduction waits for every ring member's engine thread), and then the
 * watchdog is mute.  It leaves a heartbeat and says which round it is in;
 * the process's sentinel thread (stall_sentinel.c) reads them. */
#include "engine_internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"

/* one answer; the last five, about the slot of the call, for the books */
enum { ST_STATE, ST_SLOT, ST_POS, ST_AGE_MS, ST_WHAT, ST_CALLS, ST_INCLUDED, ST_INBOX, ST_WAITING, ST_PARENT, ST_LEN };

struct sc_stall {
    pthread_mutex_t mu;
    /* this rank's application thread */
    int state, slot, what;
    long pos;
    double since, next_alarm;
    /* coordinator */
    double interval, next_print, deadline;
    int asking, stalled_rank, nanswers;
    double stalled_for;
    long query;
    long *answers;   /* n x ST_LEN; ST_STATE -1: no answer yet */
    /* this rank's engine thread, for the sentinel */
    double beat;               /* its last loop */
    int round_slot;            /* in the reduction of this slot's round; -1 not */
    long round_seq;
    double sentinel_next;      /* silence (s) at which the sentinel speaks next */
    double sentinel_spoke;     /* when the silence it spoke of began; 0: it has not */
    char sentinel_what[120];   /* ... and what the thread was in */
};

int sc_stall_init(sc_engine *e)
{
    struct sc_stall *w = calloc(1, sizeof *w);
    if (!w) return -1;
    pthread_mutex_init(&w->mu, NULL);
    w->since = sc_now();
    w->next_alarm = sc_rt.policy.stall_s;
    w->interval = sc_rt.policy.stall_s;
    w->stalled_rank = -1;
    w->beat = w->since;
    w->round_slot = -1;
    w->sentinel_next = sc_rt.policy.stall_s;
    w->answers = calloc((size_t)e->n * ST_LEN, sizeof(long));
    if (!w->answers) {
        free(w);
        return -1;
    }
    e->stall = w;
    return 0;
}

void sc_stall_free(sc_engine *e)
{
    struct sc_stall *w = e->stall;
    if (!w) return;
    pthread_mutex_destroy(&w->mu);
    free(w->answers);
    free(w);
    e->stall = NULL;
}

void sc_stall_app(sc_engine *e, sc_app_state state, int slot, long pos, int what)
{
    struct sc_stall *w = e->stall;
    pthread_mutex_lock(&w->mu);
    w->state = state;
    if (slot >= 0) w->slot = slot;
    if (pos >= 0) w->pos = pos;
    w->what = what;
    w->since = sc_now();
    w->next_alarm = sc_rt.policy.stall_s;
    pthread_mutex_unlock(&w->mu);
}

static void my_answer(sc_engine *e, long *a)
{
    struct sc_stall *w = e->stall;
    pthread_mutex_lock(&w->mu);
    a[ST_STATE] = w->state;
    a[ST_SLOT] = w->slot;
    a[ST_POS] = w->pos;
    a[ST_AGE_MS] = (long)((sc_now() - w->since) * 1e3);
    a[ST_WHAT] = w->what;
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_lock(&e->mu);
    int s = a[ST_SLOT] >= 0 && a[ST_SLOT] < e->nslots ? (int)a[ST_SLOT] : 0;
    a[ST_CALLS] = e->slots[s].calls;
    a[ST_INCLUDED] = e->slots[s].included_self;
    a[ST_INBOX] = e->slots[s].inbox_rounds;
    a[ST_WAITING] = e->main_waiting * 100 + e->waiting_slot;
    a[ST_PARENT] = e->my_parent;
    pthread_mutex_unlock(&e->mu);
}

void sc_stall_alarm(sc_engine *e, int r, double waited)
{
    struct sc_stall *w = e->stall;
    double now = sc_now();
    if (w->asking || now < w->next_print) return;
    w->query++;
    for (int q = 0; q < e->n; q++) w->answers[q * ST_LEN + ST_STATE] = -1;
    my_answer(e, w->answers + e->rank * ST_LEN);
    w->nanswers = 1;
    for (int q = 0; q < e->n; q++) {
        if (q == e->rank || e->gone[q]) continue;
        if (sc_engine_failed(e, PMPI_Send(&w->query, 1, MPI_LONG, q, TAG_STATUS_ASK, e->ctrl))) return;
    }
    w->asking = 1;
    w->deadline = now + 2;
    w->stalled_rank = r;
    w->stalled_for = waited;
}

/* In an MPI_Allreduce on the communicator, on the pattern or off it. */
static int in_call(long state)
{
    return state == SC_APP_IN_CALL || state == SC_APP_OFF;
}

/* Rank q's answer says it is in a call, and it has not left. */
static int calling(const sc_engine *e, const long *answers, int q)
{
    return in_call(answers[q * ST_LEN + ST_STATE]) && !e->gone[q];
}

static const char *state_name(const long *a)
{
    switch (a[ST_STATE]) {
    case SC_APP_COMPUTING: return "computing";
    case SC_APP_IN_CALL: return "in MPI_Allreduce";
    case SC_APP_OFF: return "in an MPI_Allreduce off the pattern";
    case SC_APP_AWAY: return sc_away_name((int)a[ST_WHAT]);
    case SC_APP_LEFT: return "departed (MPI_Finalize or the communicator freed)";
    default: return "no answer";
    }
}

const char *sc_comm_label(const sc_engine *e, char *buf, size_t len)
{
    if (e->world_order || !e->world_rank || e->world_rank[e->rank] < 0) snprintf(buf, len, "comm %s", e->comm_label);
    else snprintf(buf, len, "comm %s (coordinated by world rank %d)", e->comm_label, e->world_rank[e->rank]);
    return buf;
}

/* "1", or "1 (world 3)" */
static const char *rank_number(const sc_engine *e, int r, char *buf, size_t len)
{
    if (e->world_order || !e->world_rank || e->world_rank[r] < 0) snprintf(buf, len, "%d", r);
    else snprintf(buf, len, "%d (world %d)", r, e->world_rank[r]);
    return buf;
}

const char *sc_rank_label(const sc_engine *e, int r, char *buf, size_t len)
{
    char num[40];
    snprintf(buf, len, "rank %s", rank_number(e, r, num, sizeof num));
    return buf;
}

/* The coordinator's books, for a bug report; with_answers: and every
 * rank's own view, from the answers just gathered. */
void sc_stall_books(sc_engine *e, int with_answers)
{
    struct sc_stall *w = e->stall;
    fprintf(stderr, "starcoll: comm %s coordinator: mode %s direct %d pending_direct %d", e->comm_label,
            sc_mode_name(e->mode), e->direct, (int)e->pending_direct);
    for (int q = 0; q < e->n; q++)
        fprintf(stderr, " | r%d blocked %d pos %ld off %ld%s%s", q, e->blocked_at[q], e->last_pos[q], e->off_pos[q],
                e->in_direct[q] ? " direct" : "", e->gone[q] ? " gone" : "");
    fputc('\n', stderr);
    if (with_answers) {
        fprintf(stderr, "starcoll: comm %s ranks' own view (calls/included/inbox on the slot of their call, waiting, parent):",
                e->comm_label);
        for (int q = 0; q < e->n; q++) {
            const long *a = w->answers + q * ST_LEN;
            fprintf(stderr, " | r%d s%ld %ld/%ld/%ld w%ld p%ld", q, a[ST_SLOT], a[ST_CALLS], a[ST_INCLUDED], a[ST_INBOX],
                    a[ST_WAITING], a[ST_PARENT]);
        }
        fputc('\n', stderr);
    }
    for (int sl = 0; sl < e->nslots; sl++) {
        const sc_track *t = &e->slots[sl].track;
        fprintf(stderr, "starcoll: comm %s slot %d flush %ld (announced/included, x: waits):", e->comm_label, sl, t->flush_upto);
        for (int q = 0; q < e->n; q++)
            fprintf(stderr, " %ld/%ld%s", t->announced[q], t->included[q], t->exact_upto[q] == t->announced[q] ? "x" : "");
        fputc('\n', stderr);
    }
}

/* Appends to line[len], at *at; never past its end (a long line is cut). */
static void append(char *line, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *line, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int wrote = vsnprintf(line + *at, len - *at, fmt, ap);
    va_end(ap);
    if (wrote > 0) *at = *at + (size_t)wrote < len ? *at + (size_t)wrote : len - 1;
}

/* One line: who waits, and for whom.  A rank is waited for unless it is
 * itself in a call of this communicator. */
static void print_line(sc_engine *e)
{
    struct sc_stall *w = e->stall;
    char line[1024] = "", comm_name[64], rank_name[48];
    size_t at = 0;
    const long *s = w->answers + w->stalled_rank * ST_LEN;
    append(line, sizeof line, &at, "starcoll: %s stalled: %s has waited %.0f s in MPI_Allreduce "
           "(tensor %ld of %d, call %ld of the step stream); waiting for",
           sc_comm_label(e, comm_name, sizeof comm_name),
           sc_rank_label(e, w->stalled_rank, rank_name, sizeof rank_name), w->stalled_for,
           s[ST_SLOT] + 1, e->nslots, s[ST_POS]);
    int named = 0, in_call = 0;
    for (int q = 0; q < e->n; q++) {
        const long *a = w->answers + q * ST_LEN;
        if (calling(e, w->answers, q)) {
            in_call++;
            continue;
        }
        if (at + 120 > sizeof line) {
            named++;
            continue;
        }
        const char *what = e->gone[q] && a[ST_STATE] < 0 ? "departed" : state_name(a);
        append(line, sizeof line, &at, "%s %s %s", named ? "," : "",
               sc_rank_label(e, q, rank_name, sizeof rank_name), what);
        if (a[ST_STATE] >= 0 && a[ST_STATE] != SC_APP_LEFT)
            append(line, sizeof line, &at, " for %.1f s%s", (double)a[ST_AGE_MS] * 1e-3,
                   a[ST_STATE] == SC_APP_COMPUTING ? " since its last call" : "");
        named++;
    }
    if (!named) append(line, sizeof line, &at, " no rank: all are in MPI_Allreduce on it");
    /* the ranks in a call, by position: a rank a call apart shows */
    const char *sep = named ? "; in MPI_Allreduce on it:" : ":";
    for (int q = 0; q < e->n && in_call && at + 80 < sizeof line; q++) {
        const long *a = w->answers + q * ST_LEN;
        if (!calling(e, w->answers, q)) continue;
        int first = 1;
        for (int p = 0; p < q; p++)
            first &= !(calling(e, w->answers, p) && w->answers[p * ST_LEN + ST_POS] == a[ST_POS]);
        if (!first) continue;
        append(line, sizeof line, &at, "%s rank(s) %s", sep,
               rank_number(e, q, rank_name, sizeof rank_name));
        sep = ";";
        for (int p = q + 1; p < e->n && at + 40 < sizeof line; p++) {
            if (calling(e, w->answers, p) && w->answers[p * ST_LEN + ST_POS] == a[ST_POS])
                append(line, sizeof line, &at, ",%s", rank_number(e, p, rank_name, sizeof rank_name));
        }
        append(line, sizeof line, &at, " at call %ld (tensor %ld)%s", a[ST_POS], a[ST_SLOT] + 1,
               a[ST_STATE] == SC_APP_OFF ? " off the pattern" : "");
    }
    append(line, sizeof line, &at, " (next report in %.0f s; STARCOLL_STALL=%g)", 2 * w->interval,
           sc_rt.policy.stall_s);
    fprintf(stderr, "%s\n", line);
    if (sc_rt.policy.verbose >= 2) sc_stall_books(e, 1);
}

/* The engine thread loops: a heartbeat, and where the sentinel spoke of
 * its silence, the line that ends it (so a log read later says how long). */
static void beat(sc_engine *e)
{
    struct sc_stall *w = e->stall;
    char what[sizeof w->sentinel_what];
    double now = sc_now(), began;
    pthread_mutex_lock(&w->mu);
    w->beat = now;
    w->sentinel_next = sc_rt.policy.stall_s;
    began = w->sentinel_spoke;
    w->sentinel_spoke = 0;
    memcpy(what, w->sentinel_what, sizeof what);
    pthread_mutex_unlock(&w->mu);
    if (began > 0) {
        char comm_name[64];
        fprintf(stderr, "starcoll: %s: world rank %d's engine thread is back after %.1f s %s\n",
                sc_comm_label(e, comm_name, sizeof comm_name), sc_rt.world_rank, now - began, what);
    }
}

void sc_stall_round(sc_engine *e, int slot, long seq)
{
    struct sc_stall *w = e->stall;
    pthread_mutex_lock(&w->mu);
    w->round_slot = slot;
    w->round_seq = seq;
    pthread_mutex_unlock(&w->mu);
}

void sc_engine_look(sc_engine *e, double now, sc_engine_view *v)
{
    struct sc_stall *w = e->stall;
    char comm_name[64];
    v->speak = 0;
    v->engine[0] = v->app[0] = 0;
    if (!w) return;
    sc_comm_label(e, comm_name, sizeof comm_name);
    pthread_mutex_lock(&w->mu);
    long a[ST_LEN] = {0};
    a[ST_STATE] = w->state;
    a[ST_WHAT] = w->what;
    double waited = now - w->since, silent = now - w->beat;
    int waits = in_call(w->state) || w->state == SC_APP_AWAY;
    const char *me = e->comm_label;   /* short: the line names the communicator in full first */
    if (in_call(w->state))
        snprintf(v->app, sizeof v->app, "comm %s's application thread %s for %.1f s (tensor %d, call %ld)", me,
                 state_name(a), waited, w->slot + 1, w->pos);
    else if (w->state == SC_APP_COMPUTING)
        snprintf(v->app, sizeof v->app, "comm %s's application thread computing for %.1f s since its last call", me,
                 waited);
    else if (w->state == SC_APP_AWAY)
        snprintf(v->app, sizeof v->app, "comm %s's application thread %s for %.1f s", me, state_name(a), waited);
    else
        snprintf(v->app, sizeof v->app, "comm %s's application thread %s", me, state_name(a));
    /* Speak where the engine thread has been silent past the threshold
     * while the application thread waits (a long compute holds nothing
     * up); once per doubling, as the watchdog does. */
    double stall = sc_rt.policy.stall_s;
    int says = e->rank == e->coord || sc_rt.policy.verbose >= 2;   /* one line per communicator, as the watchdog's */
    if (stall > 0 && waits && waited >= stall && silent >= w->sentinel_next) {
        if (w->round_slot >= 0)
            snprintf(w->sentinel_what, sizeof w->sentinel_what, "from the reduction of round %ld of tensor %d",
                     w->round_seq, w->round_slot + 1);
        else
            snprintf(w->sentinel_what, sizeof w->sentinel_what, "from an MPI call");
        v->speak = says;
        w->sentinel_next = 2 * silent;
        v->next_s = w->sentinel_next;
        if (!w->sentinel_spoke && says) w->sentinel_spoke = w->beat;
        if (w->round_slot >= 0)
            snprintf(v->engine, sizeof v->engine,
                     "starcoll: %s: no word from world rank %d's engine thread for %.0f s: it is in the reduction of "
                     "round %ld of tensor %d, which needs the engine thread of every rank in the ring (one stopped, "
                     "starved of CPU or blocked holds it), and the stall watchdog it runs cannot ask the other ranks",
                     comm_name, sc_rt.world_rank, silent, w->round_seq, w->round_slot + 1);
        else
            snprintf(v->engine, sizeof v->engine,
                     "starcoll: %s: no word from world rank %d's engine thread for %.0f s: it is in an MPI call "
                     "(or gets no CPU), and the stall watchdog it runs cannot ask the other ranks",
                     comm_name, sc_rt.world_rank, silent);
    }
    pthread_mutex_unlock(&w->mu);
}

int sc_stall_progress(sc_engine *e)
{
    struct sc_stall *w = e->stall;
    int moved = 0, src;
    long q, a[ST_LEN + 1];
    while (sc_recv_next(e->ctrl, TAG_STATUS_ASK, MPI_LONG, &q, 1, &src) == 1) {
        a[0] = q;
        my_answer(e, a + 1);
        if (sc_engine_failed(e, PMPI_Send(a, ST_LEN + 1, MPI_LONG, src, TAG_STATUS, e->ctrl))) return 1;
        moved = 1;
    }
    if (sc_rt.policy.stall_s <= 0) return moved;   /* no watchdog, no sentinel */
    beat(e);
    double now = sc_now(), waited = 0;
    pthread_mutex_lock(&w->mu);
    if (in_call(w->state) && now - w->since >= w->next_alarm) {
        waited = now - w->since;
        w->next_alarm *= 2;
    }
    pthread_mutex_unlock(&w->mu);
    if (waited > 0) {
        if (e->rank == e->coord) {
            sc_stall_alarm(e, e->rank, waited);
        } else {
            if (sc_engine_failed(e, sc_engine_send_note(e, NOTE_STALLED, 0, (long)(waited * 1e3), 0, -1, 0))) return 1;
        }
        moved = 1;
    }
    if (e->rank != e->coord) return moved;
    while (sc_recv_next(e->ctrl, TAG_STATUS, MPI_LONG, a, ST_LEN + 1, &src) == 1) {
        if (a[0] == w->query && src >= 0 && src < e->n && w->answers[src * ST_LEN + ST_STATE] < 0) {
            memcpy(w->answers + src * ST_LEN, a + 1, sizeof(long) * ST_LEN);
            w->nanswers++;
        }
        moved = 1;
    }
    int expected = e->n - e->ngone + (e->gone[e->rank] ? 1 : 0);
    if (w->asking && (w->nanswers >= expected || now > w->deadline)) {
        print_line(e);
        w->asking = 0;
        w->next_print = now + w->interval;
        w->interval *= 2;
        moved = 1;
    }
    return moved;
}
