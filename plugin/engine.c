/* The tolerant engine (see engine.h): its start and stop, the engine
 * thread, and a rank's part in a round.  The coordinator's work is in
 * engine_coord.c, every other rank's in engine_member.c, the application
 * thread's side in engine_caller.c.
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
#define _GNU_SOURCE   /* pthread_setname_np */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels.h"
#include "runtime.h"
#include "monitor.h"
#include "trace.h"
#include "outfile.h"
#include "placement.h"
#include "ompio_progress.h"

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
    sc_nb_fail_all(e, e->error);   /* their rounds may never come */
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
    /* In direct steps no round flows: the engine only takes the features
     * and notices, which can wait (the coordinator's own application
     * thread wakes it at each step boundary, and leaving direct wakes it).
     * Waking every 100 us to 2 ms while the application waits in a plain
     * collective (most of an exact step) made 8 engine threads on 2 cores
     * cost ResNet-50's 161-tensor step 7-10% over sync. */
    if (e->direct) return 50e-3;
    if (e->main_waiting || e->nb_pending || now - e->last_activity < 0.05) return 100e-6;
    return 2e-3;
}

/* Nothing moved: sleep a growing while, at most `until` seconds when that
 * is not negative (a grace period ending).  Returns 1 when the engine must
 * quit instead. */
int sc_engine_idle(sc_engine *e, double *nap, double until)
{
    pthread_mutex_lock(&e->mu);
    if (e->quit) {
        pthread_mutex_unlock(&e->mu);
        return 1;
    }
    double cap = nap_cap(e, sc_now());
    *nap = *nap * 2 > cap || e->direct ? cap : *nap * 2;
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
    if (k > e->n) {
        sc_say(SC_SAY_QUORUM, 0, "starcoll: STARCOLL_QUORUM=%.15g is more than the %d ranks of a communicator; it waits for all %d",
               q, e->n, e->n);
        k = e->n;
    }
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
void sc_run_round(sc_engine *e, int s, const long *incl, long fresh, sc_mode mode, int k, long seq, int polled)
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
    sc_stall_round(e, s, seq);
    int rc = sc_groups_ring_allreduce(e, mode, src == dst ? MPI_IN_PLACE : src, dst, s, polled);
    sc_stall_round(e, -1, 0);
    if (rc == MPI_SUCCESS && sc_rt.policy.scale_fresh && fresh > 0)
        sc_scale(dst, (size_t)sl->count, sl->dk, (double)e->n / (double)fresh);
    if (rc == MPI_SUCCESS) sc_groups_owe(e, s, dst, incl, seq);

    pthread_mutex_lock(&e->mu);
    if (rc != MPI_SUCCESS && !e->error) e->error = rc;
    if (direct) {
        sl->target_filled = 1;
    } else if (sl->target && sl->target_filled) {
        sc_sum_into(sl->target, dst, (size_t)sl->count, sl->dk);
    } else {
        sc_sum_into(sl->inbox, dst, (size_t)sl->count, sl->dk);
        sl->inbox_rounds++;
        if (sl->nmembers) sc_fusion_landed(e, sl);
    }
    if (incl[e->rank] > sl->included_self) sl->included_self = incl[e->rank];
    if (rc == MPI_SUCCESS) sl->rounds_got++;
    if (seq > sl->seq_seen) sl->seq_seen = seq;
    sc_nb_ready(e, sl);
    release_deposits(sl, take);
    e->mode = mode;
    e->k = k;
    e->stats.rounds++;
    __atomic_add_fetch(&e->stats.polled, (long)polled, __ATOMIC_RELAXED);
    e->stats.fresh_sum += (double)fresh;
    e->stats.mode_rounds[mode]++;
    e->last_activity = sc_now();
    pthread_cond_broadcast(&e->cv_main);
    pthread_mutex_unlock(&e->mu);
}

/* Every rank has left.  Sends between parents and children may still be
 * in flight (large ones wait for their receiver), so each rank keeps
 * receiving until its own sends are done, says so, and goes only when the
 * coordinator has heard it from all. */
void sc_stop_traffic(sc_engine *e)
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
            moved |= sc_coord_drain_notes(e);
            if (e->nstopped == e->n) {
                memset(e->incl, 0, sizeof(long) * (size_t)e->n);
                sc_engine_failed(e, sc_send_round(e, ROUND_FINAL, 0, SC_MODE_SYNC, 0, e->incl, 0, 0));
                return;
            }
        } else {
            int flag = 0;
            if (sc_engine_failed(e, PMPI_Iprobe(e->coord, TAG_ROUND, e->ctrl, &flag, MPI_STATUS_IGNORE))) return;
            if (flag) {
                if (sc_engine_failed(e, PMPI_Recv(e->msg, sc_round_msg_len(e), MPI_LONG, e->coord, TAG_ROUND, e->ctrl,
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

static void *engine_main(void *arg)
{
    sc_engine *e = arg;
    /* named, so top -H and /proc/PID/task show whose CPU time this is */
    pthread_setname_np(pthread_self(), e->rank == e->coord ? "starcoll-coord" : "starcoll-member");
    sc_monitor_library_thread();   /* its queueing is not the application's */
    sc_ompio_progress_not_here();  /* its progress must not walk ompio's requests */
    if (e->rank == e->coord) sc_coordinator_loop(e);
    else sc_member_loop(e);
    pthread_mutex_lock(&e->mu);
    e->stopped = 1;
    sc_nb_fail_all(e, e->error ? e->error : MPI_ERR_OTHER);   /* none is left after a clean stop */
    pthread_cond_broadcast(&e->cv_main);
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void free_list(sc_deposit *d)
{
    for (sc_deposit *nx; d; d = nx) {
        nx = d->next;
        if (!d->borrowed) free(d->buf);
        free(d);
    }
}

void sc_engine_free(sc_engine *e)
{
    if (!e) return;
    sc_groups_free(e);
    sc_probe_free(e);
    sc_decider_free(e->decider);
    free(e->world_rank);
    for (int s = 0; e->slots && s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        free_list(sl->head);
        free_list(sl->spare);
        free(sl->inbox);
        free(sl->scratch);
        free(sl->stage);
        free(sl->members);
        sc_track_free(&sl->track);
    }
    free(e->slots);
    free(e->gone);
    free(e->in_direct);
    free(e->blocked_at);
    free(e->outside);
    free(e->presumed);
    free(e->blocked_need);
    free(e->incl);
    free(e->prev_incl);
    free(e->msg);
    free(e->parent);
    free(e->last_pos);
    free(e->off_pos);
    free(e->off_shape);
    free(e->learn_load);
    free(e->learn_given);
    free(e->lockstep_buf);
    sc_stall_free(e);
    sc_crowd_free(e);
    sc_hier_free(&e->hier);
    sc_hier_free(&e->direct_hier);
    if (e->trace) {
        int err = sc_outfile_close(e->trace);
        if (err) sc_say(SC_SAY_TRACE_WRITE, 1, "starcoll: STARCOLL_TRACE: writing %s failed (%s); the trace is incomplete",
                        e->trace_path, strerror(err));
    }
    if (e->ctrl != MPI_COMM_NULL) PMPI_Comm_free(&e->ctrl);
    if (e->data != MPI_COMM_NULL) PMPI_Comm_free(&e->data);
    if (e->direct_comm != MPI_COMM_NULL) PMPI_Comm_free(&e->direct_comm);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->away_mu);
    pthread_cond_destroy(&e->cv_main);
    pthread_cond_destroy(&e->cv_engine);
    free(e);
}

/* STARCOLL_TRACE: PREFIX.<world rank> for the world, PREFIX.<world rank>.c<N>
 * for the N-th other communicator (a prefix ending in '/' is a folder:
 * FOLDER/trace.<world rank>); never through a symbolic link nor over an
 * existing file (outfile.h).  A file that cannot be opened costs one line
 * and no trace. */
static void open_trace(sc_engine *e)
{
    char path[SC_PATH_LEN + 40], used[SC_PATH_LEN + 48], note[2 * SC_PATH_LEN + 200];
    const char *prefix = sc_rt.policy.trace;
    size_t len = strlen(prefix);
    const char *base = len && prefix[len - 1] == '/' ? "trace" : "";
    const char *spawned = sc_spawned_suffix();
    if (strcmp(e->comm_label, "0") == 0)
        snprintf(path, sizeof path, "%s%s%s.%d", prefix, base, spawned, sc_rt.world_rank);
    else snprintf(path, sizeof path, "%s%s%s.%d.c%s", prefix, base, spawned, sc_rt.world_rank, e->comm_label);
    e->trace = sc_outfile_open(path, used, sizeof used, note, sizeof note);
    if (note[0]) sc_say(SC_SAY_TRACE, 1, "starcoll: STARCOLL_TRACE: %s%s", note, e->trace ? "" : "; no trace");
    if (!e->trace) return;
    snprintf(e->trace_path, sizeof e->trace_path, "%s", used);
    sc_trace_write_header(e->trace, e->rank, e->n, sc_rt.policy.epoch, sc_rt.policy.papi_events);
}

/* The coordinator runs the rounds and the selector, and stays a ring
 * member: placed from the load and the share of the CPU each rank was
 * given while the pattern was learned (sc_first_coordinator), so a rank
 * already slow then (starved of CPU, on a busy node) neither paces the
 * rounds nor is kept off the children.  On a core beside a pinned CPU hog
 * a rank computes in less wall time than peers crowded three to a core,
 * yet every transfer waits for it to be scheduled: its share tells.  It
 * is placed once: moving it later would hand over the rounds'
 * bookkeeping.  loads_out and givens_out (n each, NULL: not wanted) get
 * every rank's figures.  Collective over comm. */
static int place_coordinator(MPI_Comm comm, int n, double load, double given, int *coord, double *loads_out,
                             double *givens_out)
{
    if (!(load >= 0 && load < 1e9)) load = 1e9;   /* not finite: least suited */
    if (!(given > 0 && given <= 1)) given = -1;
    double mine[2] = {load, given};
    double *all = malloc(4 * (size_t)n * sizeof *all);
    int ok = all != NULL;   /* every rank takes part in the gather, or none */
    int rc = PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (rc == MPI_SUCCESS && !ok) rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) rc = PMPI_Allgather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, comm);
    if (rc == MPI_SUCCESS) {
        double *loads = all + 2 * n, *givens = all + 3 * n;
        for (int r = 0; r < n; r++) {
            loads[r] = all[2 * r];
            givens[r] = all[2 * r + 1];
        }
        *coord = sc_first_coordinator(n, loads, givens);
        if (loads_out) memcpy(loads_out, loads, sizeof(double) * (size_t)n);
        if (givens_out) memcpy(givens_out, givens, sizeof(double) * (size_t)n);
    }
    free(all);
    return rc;
}

/* Each rank's world rank (local calls only), for the coordinator's lines
 * and the report; -1 where it cannot be known.  Returns 1 when comm is the
 * whole world in its order (its lines need no world ranks; the first half
 * of a split, ranks 0..n-1 too, still gets them, or it would read like
 * the world). */
static int map_world_ranks(MPI_Comm comm, int n, int *world)
{
    MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    int *ranks = malloc(sizeof(int) * (size_t)n), world_n = 0;
    int ok = ranks && PMPI_Comm_group(comm, &g) == MPI_SUCCESS &&
             PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS && PMPI_Group_size(wg, &world_n) == MPI_SUCCESS;
    for (int r = 0; ranks && r < n; r++) ranks[r] = r;
    ok = ok && PMPI_Group_translate_ranks(g, n, ranks, wg, world) == MPI_SUCCESS;
    int in_order = ok && n == world_n;
    for (int r = 0; r < n; r++) {
        if (!ok || world[r] == MPI_UNDEFINED) world[r] = -1;
        in_order &= world[r] == r;
    }
    if (g != MPI_GROUP_NULL) PMPI_Group_free(&g);
    if (wg != MPI_GROUP_NULL) PMPI_Group_free(&wg);
    free(ranks);
    return in_order;
}

sc_engine *sc_engine_start(MPI_Comm comm, const sc_identity *id, sc_mode mode, const char *comm_label,
                           double learn_load_s, double learn_given)
{
    sc_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->born = sc_now();
    e->ctrl = e->data = e->direct_comm = MPI_COMM_NULL;
    sc_hier_init(&e->hier);
    sc_hier_init(&e->direct_hier);
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->away_mu, NULL);
    pthread_cond_init(&e->cv_main, NULL);
    pthread_cond_init(&e->cv_engine, NULL);
    PMPI_Comm_rank(comm, &e->rank);
    PMPI_Comm_size(comm, &e->n);
    snprintf(e->comm_label, sizeof e->comm_label, "%s", comm_label);
    if (sc_rt.policy.mode == SC_MODE_AUTO) {   /* for the first decision (engine_decide.c) */
        e->learn_load = calloc((size_t)e->n, sizeof(double));
        e->learn_given = calloc((size_t)e->n, sizeof(double));
    }
    /* every rank takes part in the placement (a collective); a failed
     * allocation fails the start at the agreement below */
    int placed = place_coordinator(comm, e->n, learn_load_s, learn_given, &e->coord, e->learn_load,
                                   e->learn_given) == MPI_SUCCESS &&
                 e->coord >= 0 && e->coord < e->n &&
                 (sc_rt.policy.mode != SC_MODE_AUTO || (e->learn_load && e->learn_given));
    if (!placed) e->coord = 0;   /* the agreement below fails the start everywhere */
    e->mode = mode;
    e->my_parent = -1;
    e->ring_epoch = -1;
    e->waiting_slot = -1;
    e->pending_direct = SC_NMODES;
    /* auto starts exact, and exact runs direct */
    e->direct = sc_exact_mode(mode);
    e->direct_mode = mode;
    e->nuser = e->nslots = sc_identity_slots(id);
    /* room for the fusion groups: at most one per two user slots */
    e->slots = calloc((size_t)e->nuser + (size_t)e->nuser / 2 + 1, sizeof(sc_slot));
    e->gone = calloc((size_t)e->n, 1);
    e->in_direct = calloc((size_t)e->n, 1);
    e->blocked_at = malloc(sizeof(int) * (size_t)e->n);
    e->outside = calloc((size_t)e->n, 1);
    e->presumed = calloc((size_t)e->n, 1);
    e->blocked_need = calloc((size_t)e->n, sizeof(long));
    e->parent = malloc(sizeof(int) * (size_t)e->n);
    e->incl = calloc((size_t)e->n, sizeof(long));
    e->prev_incl = calloc((size_t)e->n, sizeof(long));
    e->last_pos = calloc((size_t)e->n, sizeof(long));
    e->off_pos = malloc(sizeof(long) * (size_t)e->n);
    e->off_shape = calloc((size_t)e->n, sizeof(long));
    int ok = placed && e->slots && e->gone && e->in_direct && e->incl && e->prev_incl && e->blocked_at && e->outside && e->presumed &&
             e->blocked_need && e->parent && e->last_pos && e->off_pos && e->off_shape && sc_stall_init(e) == 0 &&
             sc_crowd_init(e) == 0;
    for (int r = 0; ok && r < e->n; r++) e->blocked_at[r] = e->parent[r] = -1;
    for (int r = 0; ok && r < e->n; r++) e->off_pos[r] = -1;
    for (int s = 0; ok && s < e->nslots; s++) {
        sc_slot *sl = &e->slots[s];
        sl->count = sc_identity_slot_count(id, s);
        sl->dk = (sc_dkind)sc_identity_slot_dkind(id, s);
        sl->dt = sl->dk == SC_DK_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
        sl->bytes = (size_t)sl->count * sc_dkind_size(sl->dk);
        sl->inbox = calloc(1, sl->bytes);
        sl->scratch = malloc(sl->bytes);
        ok = sl->inbox && sl->scratch && (e->rank != e->coord || sc_track_init(&sl->track, e->n) == 0);
    }
    ok = ok && sc_fusion_plan(e) == 0;
    e->msg = ok ? calloc((size_t)sc_round_msg_len(e), sizeof(long)) : NULL;
    ok = ok && e->msg;
    e->k = quorum_k(e);
    e->stats.min_fresh = -1;
    if (ok && e->rank == e->coord) {
        ok = (e->world_rank = malloc(sizeof(int) * (size_t)e->n)) != NULL;
        if (ok) e->world_order = map_world_ranks(comm, e->n, e->world_rank);
    }
    ok = ok && sc_groups_init(e) == 0 && sc_probe_init(e) == 0;
    if (ok && e->rank == e->coord) ok = (e->decider = sc_decider_new(e)) != NULL;
    /* Collective over comm: every rank starts its engine at the same call.
     * The outcome is agreed on, so a failure anywhere leaves all exact. */
    int rc1 = PMPI_Comm_dup(comm, &e->ctrl);
    int rc2 = PMPI_Comm_dup(comm, &e->data);
    int rc3 = PMPI_Comm_dup(comm, &e->direct_comm);
    int mine = ok && rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS && rc3 == MPI_SUCCESS, all = 0;
    if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
    /* hier sub-communicators now, by this thread, before the engine thread
     * exists: built later they would be created by the application thread
     * (direct steps) while the engine thread creates rings, and Open MPI
     * does not take concurrent communicator creation well. */
    if (all && (sc_rt.policy.mode == SC_MODE_HIER || sc_rt.policy.mode == SC_MODE_AUTO)) {
        sc_hier_prepare(&e->hier, e->data, sc_rt.policy.group_size);
        sc_hier_prepare(&e->direct_hier, e->direct_comm, sc_rt.policy.group_size);
    }
    if (all && sc_rt.policy.trace[0]) open_trace(e);
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
        sc_engine_free(e);
        return NULL;
    }
    sc_crowd_join(e);
    return e;
}
