/* The PMPI interposition layer: MPI_Init, MPI_Init_thread, MPI_Finalize,
 * MPI_Allreduce and MPI_Pcontrol.  The only calls made from here on are
 * PMPI_ ones, so nothing re-enters the library. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include "runtime.h"
#include "device.h"
#include "nccl.h"
#include "comm_state.h"
#include "stall_sentinel.h"
#include "polite_wait.h"
#include "eligibility.h"
#include "mode_hier.h"
#include "report.h"
#include "kernels.h"
#include "monitor.h"
#include "cgroup_source.h"
#include "proc_source.h"
#include "agree.h"
#include "startup.h"
#include "kept_exact.h"
#include "away_around.h"

sc_runtime sc_rt;

void sc_say(int which, int all_ranks, const char *fmt, ...)
{
    if (which >= 0 && which < (int)(sizeof sc_rt.said / sizeof sc_rt.said[0])) {
        if (sc_rt.said[which]) return;
        sc_rt.said[which] = 1;
    }
    if (!all_ranks && sc_rt.world_rank != 0) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

static int policy_wants_threads(const sc_policy *p)
{
    return p->mode == SC_MODE_AUTO || p->mode == SC_MODE_QUORUM || p->mode == SC_MODE_GROUPS;
}

static int tolerant_policy(void);

/* The monitor feeds the selector; it runs on this (the application's)
 * thread, sampled at step boundaries.  Its notices are said once, by rank 0
 * (and always with STARCOLL_VERBOSE >= 1). */
static void open_monitor(void)
{
    sc_monitor_config cfg = {sc_rt.policy.papi_events, sc_rt.policy.nic, NULL, NULL, sc_rt.policy.verbose};
    char msg[1024] = "";
    sc_rt.monitor = sc_monitor_open(&cfg, msg, sizeof msg);
    if (sc_rt.world_rank == 0 && msg[0] && sc_rt.policy.verbose >= 1) fputs(msg, stderr);
    if (sc_rt.world_rank == 0 && sc_rt.monitor && sc_rt.policy.verbose >= 1) {
        char d[1024];
        sc_monitor_describe(sc_rt.monitor, d, sizeof d);
        fprintf(stderr, "starcoll monitor sources:\n%s", d);
    }
}

/* After PMPI_Init succeeded: learn the world, report bad policy values,
 * agree on the policy. */
static void startup(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &sc_rt.world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &sc_rt.world_size);
    MPI_Comm parent = MPI_COMM_NULL;
    sc_rt.spawned = PMPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent != MPI_COMM_NULL;
    sc_rt.t_init = PMPI_Wtime();
    if (sc_rt.world_rank == 0 && sc_rt.policy_msgs[0]) fputs(sc_rt.policy_msgs, stderr);
    if (!sc_startup_agree()) return;   /* the library is not on every rank: pass through */
    if (sc_comm_keyval_init() != MPI_SUCCESS) {
        sc_say(SC_SAY_COMM_STATE, 0, "starcoll: cannot create an attribute keyval; every call passes through");
        return;
    }
    if (policy_wants_threads(&sc_rt.policy) && sc_rt.thread_provided < MPI_THREAD_MULTIPLE) {
        sc_say(SC_SAY_THREAD, 0, "starcoll: the MPI library gave thread level %d, tolerant modes need MPI_THREAD_MULTIPLE; using sync",
                  sc_rt.thread_provided);
        sc_rt.policy.mode = SC_MODE_SYNC;
    }
    sc_rt.active = 1;
    sc_comm_get(MPI_COMM_WORLD);   /* world is report row 0 */
    if (tolerant_policy()) open_monitor();
    if (sc_rt.policy.verbose >= 1 && sc_rt.world_rank == 0) {
        char d[512];
        sc_policy_describe(&sc_rt.policy, d, sizeof d);
        fprintf(stderr, "starcoll: %s on %d ranks, %d host(s): %s\n", PACKAGE_VERSION, sc_rt.world_size, sc_rt.nhosts, d);
    }
}

static void parse_policy(void)
{
    memset(&sc_rt, 0, sizeof sc_rt);
    sc_policy_parse(&sc_rt.policy, NULL, sc_rt.policy_msgs, sizeof sc_rt.policy_msgs);
}

int MPI_Init(int *argc, char ***argv)
{
    parse_policy();
    int rc;
    if (policy_wants_threads(&sc_rt.policy))
        rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &sc_rt.thread_provided);
    else {
        rc = PMPI_Init(argc, argv);
        sc_rt.thread_provided = MPI_THREAD_SINGLE;
    }
    if (rc == MPI_SUCCESS) startup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    parse_policy();
    int ask = required;
    if (policy_wants_threads(&sc_rt.policy) && ask < MPI_THREAD_MULTIPLE) ask = MPI_THREAD_MULTIPLE;
    int rc = PMPI_Init_thread(argc, argv, ask, provided);
    if (rc == MPI_SUCCESS) {
        sc_rt.thread_provided = *provided;
        startup();
    }
    return rc;
}

int MPI_Finalize(void)
{
    if (sc_rt.active) {
        /* Leave the tolerant rounds first: returns once every rank has
         * left, so the report's collectives and PMPI_Finalize follow on
         * all ranks together. */
        sc_comm_stop_all_engines();
        sc_sentinel_stop();
        sc_comm_count_carries();
        sc_report_write();
        sc_comm_finalize();
        if (sc_rt.monitor) sc_monitor_close(sc_rt.monitor);
        sc_rt.monitor = NULL;
        sc_rt.active = 0;
    }
    return PMPI_Finalize();
}

int MPI_Pcontrol(const int level, ...)
{
    if (level == 0) sc_rt.pcontrol_exact = 1;
    else if (level == 1) sc_rt.pcontrol_exact = 0;
    else if (level == 2) sc_comm_flush_all();   /* sync and hier hold nothing back */
    return MPI_SUCCESS;
}

/* MPI_FLOAT and MPI_DOUBLE, and their Fortran twins (REAL, DOUBLE
 * PRECISION, REAL4, REAL8) where they have the same size. */
static sc_dkind datatype_kind(MPI_Datatype dt)
{
    if (dt == MPI_FLOAT) return SC_DK_FLOAT;
    if (dt == MPI_DOUBLE) return SC_DK_DOUBLE;
    if (dt == MPI_REAL || dt == MPI_DOUBLE_PRECISION || dt == MPI_REAL4 || dt == MPI_REAL8) {
        int size = 0;
        if (PMPI_Type_size(dt, &size) != MPI_SUCCESS) return SC_DK_OTHER;
        return size == (int)sizeof(float) ? SC_DK_FLOAT : size == (int)sizeof(double) ? SC_DK_DOUBLE : SC_DK_OTHER;
    }
    return SC_DK_OTHER;
}

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
}

static int tolerant_policy(void)
{
    sc_mode m = sc_rt.policy.mode;
    return (m == SC_MODE_QUORUM || m == SC_MODE_GROUPS || m == SC_MODE_AUTO) &&
           sc_rt.thread_provided >= MPI_THREAD_MULTIPLE;
}

/* The other communicators' engines must not wait for this rank while it
 * is blocked in a waiting call on one of them. */
static void away_hook(sc_engine *waiting_in, int away)
{
    if (sc_comm_engines() > 1) sc_comm_away(waiting_in, away, SC_AWAY_OTHER_COMM);
}

/* An exact all-reduce by the application's thread.  While tolerant
 * engines run, their coordinators are told this rank is away, so no round
 * waits for it meanwhile (which could wait forever: the ranks it needs may
 * be the ones blocked here).
 *
 * meet_first: every rank waits at a nonblocking barrier first, sleeping
 * between tests.  Open MPI's blocking calls poll, and a rank polling there
 * while the others still finish their step takes the core its engine
 * thread needs to serve their rounds (polite_wait.h).  The all-reduce
 * stays PMPI_Allreduce, bitwise what it gives without starcoll.  The
 * barrier must be on every rank or none: see meets_first. */
static int blocking_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                              int meet_first)
{
    int engines = sc_comm_engines_here();
    if (engines) sc_comm_away(NULL, 1, SC_AWAY_ALLREDUCE);
    int rc = MPI_SUCCESS;
    if (meet_first) {
        MPI_Request req;
        rc = PMPI_Ibarrier(comm, &req);
        if (rc == MPI_SUCCESS) rc = sc_polite_wait(&req, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    if (engines) sc_comm_away(NULL, 0, SC_AWAY_ALLREDUCE);
    return rc;
}

/* An ineligible call (a loss, a metric) beside its communicator's engine
 * rounds meets first (blocking_allreduce).  Every rank decides alike: the
 * engine's start and stop are agreed on, and direct steps (no rounds to
 * serve) hold on every rank at the same program points.  Not a call that
 * clashed with another thread's on the communicator: only this rank saw
 * the clash, and an extra collective here would pair with the others' next. */
static int meets_first(const sc_comm *cs, sc_elig e)
{
    return e != SC_ELIG_THREAD && cs->engine && !sc_engine_direct(cs->engine);
}

/* ---- which tensor a call is (identity.h, agree.h) ------------------------ */

/* Codes for a call's shape: predefined datatypes and ops by their place in
 * a list (their handles may differ between processes), others by size. */
static int type_code(MPI_Datatype dt)
{
    const MPI_Datatype known[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_INT, MPI_UNSIGNED, MPI_LONG,
                                  MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_SHORT,
                                  MPI_UNSIGNED_SHORT, MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE,
                                  MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
                                  MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_FLOAT_INT, MPI_DOUBLE_INT,
                                  MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_REAL,
                                  MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_LOGICAL, MPI_REAL4, MPI_REAL8, MPI_INTEGER4,
                                  MPI_INTEGER8, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER, MPI_C_FLOAT_COMPLEX,
                                  MPI_C_DOUBLE_COMPLEX, MPI_WCHAR};
    for (int i = 0; i < (int)(sizeof known / sizeof known[0]); i++)
        if (dt == known[i]) return i + 1;
    int size = 0;
    PMPI_Type_size(dt, &size);
    return 1000 + size;
}

static int op_code(MPI_Op op)
{
    const MPI_Op known[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR,
                            MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    for (int i = 0; i < (int)(sizeof known / sizeof known[0]); i++)
        if (op == known[i]) return i + 1;
    return 99;   /* a user's op */
}

/* The call's key; its gap is the time since the last call on cs returned
 * (the application's compute in between, injected delays excluded). */
static sc_call_key call_key(const sc_comm *cs, const sc_user_call *c, sc_dkind dk, int eligible, double t_in)
{
    sc_call_key k = {
        .shape = sc_shape_hash(c->count, type_code(c->dt), op_code(c->op), eligible),
        .where = cs->staged_where ? cs->staged_where : sc_where_hash(c->sendbuf == MPI_IN_PLACE ? NULL : c->sendbuf, c->recvbuf),
        .gap = cs->last_any_exit > 0 ? t_in - cs->last_any_exit : 0,
        .count = c->count,
        .dkind = dk,
        .eligible = eligible,
    };
    return k;
}

static int identity_applies(const sc_comm *cs)
{
    return !cs->is_inter && cs->size >= 2;
}

/* cs's identity and agreement communicator, made at the first call that
 * needs them: collective, at every rank's first MPI_Allreduce on cs under
 * a tolerant policy.  0 when they cannot be had: cs's calls then pass
 * through exact. */
static int ensure_identity(sc_comm *cs)
{
    if (cs->id) return 1;
    if (cs->engine_failed || cs->named_exact) return 0;
    sc_identity *id = sc_identity_new();
    MPI_Comm dup = MPI_COMM_NULL;
    int away = away_begin();
    /* with the agreement, rank 0's report row: the communicator's name on
     * all its ranks (sc_report_label) */
    int mine[2] = {!(id != NULL && PMPI_Comm_dup(cs->comm, &dup) == MPI_SUCCESS),
                   cs->rank == 0 ? (int)(cs->row - sc_rt.rows) : -1}, agreed[2] = {1, -1};
    if (PMPI_Allreduce(mine, agreed, 2, MPI_INT, MPI_MAX, cs->comm) != MPI_SUCCESS) agreed[0] = 1;
    int all = !agreed[0];
    away_end(away);
    if (all && agreed[1] >= 0) {
        sc_report_label(agreed[1], (int)cs->row->leader, cs->label, sizeof cs->label);
        if (cs->row != &sc_rt.rows[SC_REPORT_ROWS - 1]) cs->row->label_ord = agreed[1];   /* not the lumped row */
    }
    /* Named exact by the number the report gives it, which the agreement
     * just made the same on all its ranks: all decide alike. */
    int named = all && agreed[1] >= 0 && (sc_rt.policy.exact_comms >> agreed[1] & 1u);
    if (!all || named) {
        if (dup != MPI_COMM_NULL) PMPI_Comm_free(&dup);
        sc_identity_free(id);
    }
    if (named) {
        sc_keep_exact(cs, "named in STARCOLL_EXACT_COMMS");
        return 0;
    }
    if (!all) {
        cs->engine_failed = 1;
        snprintf(sc_rt.row_why[cs->row - sc_rt.rows], sizeof sc_rt.row_why[0], "its call identity could not be set up");
        sc_say(SC_SAY_ENGINE, 0, "starcoll: cannot set up call identity on a communicator; its calls stay exact (sync)");
        return 0;
    }
    cs->id = id;
    cs->agree_comm = dup;
    return 1;
}

static const char *kind_name(sc_dkind dk)
{
    return dk == SC_DK_FLOAT ? "float" : dk == SC_DK_DOUBLE ? "double" : "other";
}

/* A call that fails says so: one line naming the rank, the communicator,
 * the call and the cause (the first few per communicator; the report
 * counts them all); then, as MPI does with its own errors, the
 * communicator's error handler is called (MPI_ERRORS_ARE_FATAL, the
 * default, stops the job there; mpi4py's MPI_ERRORS_RETURN raises), and
 * the MPI error code is returned. */
static int call_fails(sc_comm *cs, const sc_user_call *c, sc_dkind dk, int rc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int call_fails(sc_comm *cs, const sc_user_call *c, sc_dkind dk, int rc, const char *fmt, ...)
{
    cs->row->failed += 1;
    if (cs->said_reject >= 3) {
        PMPI_Comm_call_errhandler(cs->comm, rc);
        return rc;
    }
    char cause[600], err[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    PMPI_Error_string(rc, err, &len);
    fprintf(stderr, "starcoll: rank %d: MPI_Allreduce on comm %s (%d %s elements, call %ld on it): %s; returning %s%s\n",
            sc_rt.world_rank, cs->label, c->count, kind_name(dk), cs->eligible_calls, cause, err,
            ++cs->said_reject == 3 ? " (further failures on this communicator are counted in the report)" : "");
    PMPI_Comm_call_errhandler(cs->comm, rc);
    return rc;
}

/* The votes made before and beside the engine, on the application thread:
 * polled only where STARCOLL_COLL_WAIT=polled says so for the whole job
 * (under auto, no engine says when; the agreement of learning is brief). */
static int votes_polled(void)
{
    return sc_rt.policy.coll_wait == SC_WAIT_POLLED;
}

static int comm_reduce(void *ctx, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt)
{
    sc_comm *cs = ctx;
    return PMPI_Allreduce(sendbuf, recvbuf, count, dt, MPI_SUM, cs->comm);
}

/* A pattern is agreed: tolerated by the engine when its tensors are told
 * apart, else its calls stay exact (the report says why).  Collective:
 * every rank agrees at this same call. */
static void adopt_pattern(sc_comm *cs)
{
    cs->why_exact[0] = '\0';
    sc_values_said values = {0, 0, 0};
    values.averaged = sc_wprobe_averaged(cs->wprobe, sc_identity_slots(cs->id), cs->size, &values.follow, &values.judged);
    sc_wprobe_free(cs->wprobe);
    cs->wprobe = NULL;
    if (sc_rt.policy.verbose >= 1 && cs->rank == 0)
        fprintf(stderr, "starcoll: comm %s: learned a step of %d eligible calls (%s)\n", cs->label,
                sc_identity_slots(cs->id), sc_identity_how(cs->id));
    if (!sc_identity_trusted(cs->id)) {
        snprintf(cs->why_exact, sizeof cs->why_exact, "%s", sc_identity_why_exact(cs->id));
        snprintf(sc_rt.row_why[cs->row - sc_rt.rows], sizeof sc_rt.row_why[0], "%s", cs->why_exact);
        if (sc_rt.policy.verbose >= 1 && cs->rank == 0)
            fprintf(stderr, "starcoll: comm %s: the step's calls stay exact: %s\n", cs->label, cs->why_exact);
        return;
    }
    if (cs->two_models) {
        snprintf(cs->why_exact, sizeof cs->why_exact, "%s", sc_rt.row_why[cs->row - sc_rt.rows]);
        return;
    }
    if (cs->engine_failed || sc_keep_guessed_exact(cs, &values)) return;
    sc_mode start = sc_rt.policy.mode == SC_MODE_AUTO ? SC_MODE_SYNC : sc_rt.policy.mode;
    sc_engine_away_hook = away_hook;
    int away = away_begin();
    /* Compute outside the library understates a rank under a CPU quota
     * (throttled inside MPI too); its cgroup's throttled time does not.
     * (Run-queue delay would not do: on a busy node the ranks that wait
     * poll and queue, and a rank that sleeps does not.) */
    double thr = cs->learn_throttled0 >= 0 ? sc_cgroup_throttled_total_s() : -1;
    double learn_load = cs->learn_compute_s + (thr >= cs->learn_throttled0 ? thr - cs->learn_throttled0 : 0);
    /* The share of the CPU the learning thread was given while runnable:
     * CPU over CPU plus run-queue delay (another thread's figures if the
     * calls moved between threads: only a hint for the placement). */
    double cpu1 = 0, runq1 = 0, given = -1;
    if (cs->learn_cpu0 >= 0 && sc_proc_thread_times(&cpu1, &runq1) == 0 && cpu1 > cs->learn_cpu0 &&
        runq1 >= cs->learn_runq0)
        given = (cpu1 - cs->learn_cpu0) / (cpu1 - cs->learn_cpu0 + runq1 - cs->learn_runq0);
    sc_comm_set_engine(cs, sc_engine_start(cs->comm, cs->id, start, cs->label, learn_load, given));
    away_end(away);
    if (!cs->engine) {
        cs->engine_failed = 1;
        snprintf(cs->why_exact, sizeof cs->why_exact, "the tolerant engine could not start");
        sc_say(SC_SAY_ENGINE, 0, "starcoll: could not start the tolerant engine; this communicator stays exact (sync)");
        return;
    }
    sc_comm_map_carries(cs);
}

/* A call while the pattern is learned: agreed on first, then exact. */
static int learning_call(sc_comm *cs, const sc_call_key *k, const sc_user_call *c, sc_dkind dk)
{
    sc_learn_outcome out = SC_LEARN_GO_ON;
    int others = 0;
    int away = away_begin();
    int rc = sc_agree_learning(cs->id, cs->agree_comm, k, &out, &others, votes_polled());
    away_end(away);
    if (rc != MPI_SUCCESS) return call_fails(cs, c, dk, rc, "the agreement on which call this is failed");
    if (out == SC_LEARN_DISAGREE)
        return call_fails(cs, c, dk, MPI_ERR_OTHER,
                          "%d of %d ranks make another MPI_Allreduce at this point (the ranks' call sequences "
                          "disagree; without starcoll this would hang or fail with MPI_ERR_TRUNCATE); not reduced, and "
                          "it does not count", cs->size - others, cs->size);
    cs->row->learning_calls += k->eligible;
    /* what the step's values say, for sc_keep_guessed_exact */
    int probe = k->eligible && !sc_rt.policy.exact_comms_set && (cs->wprobe || (cs->wprobe = sc_wprobe_new()));
    if (probe) sc_wprobe_before(cs->wprobe, c->sendbuf == MPI_IN_PLACE ? c->recvbuf : c->sendbuf, c->count, dk);
    rc = blocking_allreduce(c->sendbuf, c->recvbuf, c->count, c->dt, c->op, cs->comm, 0);
    if (probe) sc_wprobe_after(cs->wprobe, c->recvbuf, rc == MPI_SUCCESS);
    if (rc == MPI_SUCCESS && cs->carry) sc_comm_pay_carry_kept(cs, k->where, k->shape, c->recvbuf, c->count, dk);
    if (out == SC_LEARN_DONE) adopt_pattern(cs);
    return rc;
}

/* A call on a pattern that stays exact: a plain collective on the user's
 * communicator, checked in lockstep (agree.h). */
static int lockstep_on(sc_comm *cs, const sc_call_key *k, const sc_user_call *c, sc_dkind dk)
{
    sc_ls_outcome out;
    int other = -1;
    int away = away_begin();
    int rc = sc_lockstep_on(comm_reduce, cs, cs->agree_comm, c->sendbuf, c->recvbuf, c->count, c->dt, dk, &out, &other,
                            votes_polled());
    away_end(away);
    if (rc == MPI_SUCCESS && out == SC_LS_DONE && cs->carry)
        sc_comm_pay_carry_kept(cs, k->where, k->shape, c->recvbuf, c->count, dk);
    if (rc != MPI_SUCCESS || out == SC_LS_DONE) return rc;
    /* another rank's call was not this one: every rank knows, and all
     * learn again (the calls may now be a call apart) */
    sc_identity_relearn(cs->id);
    cs->row->relearns += 1;
    return call_fails(cs, c, dk, MPI_ERR_OTHER,
                      "rank %d makes another MPI_Allreduce at this point (the ranks' call sequences disagree); this "
                      "call's sum would be incomplete, so it fails", other);
}

static int lockstep_off(sc_comm *cs, int slot, uint64_t shape, sc_off_verdict *v, int *other)
{
    /* slot -1: the step has no eligible call, so none is expected here */
    long count = slot >= 0 ? sc_identity_slot_count(cs->id, slot) : 0;
    int dk = slot >= 0 ? sc_identity_slot_dkind(cs->id, slot) : SC_DK_FLOAT;
    size_t bytes = (size_t)count * sc_dkind_size((sc_dkind)dk);
    if (bytes > cs->lockstep_bytes) {
        void *b = realloc(cs->lockstep_buf, bytes);
        if (!b) return MPI_ERR_NO_MEM;
        cs->lockstep_buf = b;
        cs->lockstep_bytes = bytes;
    }
    sc_ls_outcome out;
    int away = away_begin();
    int rc = sc_lockstep_off(comm_reduce, cs, cs->agree_comm, cs->lockstep_buf, (int)count, dk, shape, &out, other,
                             votes_polled());
    away_end(away);
    *v = out == SC_LS_STRAY ? SC_OFF_STRAY : SC_OFF_REJECT;
    return rc;
}

/* After the step was learned, this rank's own buffers show two tensors of
 * one shape in turn at a slot (identity.h): rounds cannot tell them apart.
 * Said once by rank 0, with what to do; the report counts the ranks that
 * saw it. */
static void note_turns(sc_comm *cs)
{
    int slot = -1;
    if (sc_identity_turns_since(cs->id, &slot) == 0) return;
    cs->row->turned = 1;
    sc_say(SC_SAY_TURNS, 0,
           "starcoll: comm %s: tensor %d's buffer went to another one and came back, twice, since the step was "
           "learned: two models of one shape trained in turn?  Tolerant rounds cannot tell them apart and may sum one "
           "into the other; give each model its own communicator (MPI_Comm_dup) or run STARCOLL_MODE=sync",
           cs->label, slot);
}

/* This rank's buffers showed a whole step of calls moved slots on
 * (sc_identity_moves): said once by rank 0, with what to do; the report
 * counts the ranks that saw it.  Only said: by then the rounds around it
 * have run, and a rank's own buffers may not decide what all ranks do. */
static void note_moved(sc_comm *cs)
{
    int by = 0;
    if (sc_identity_moves(cs->id, &by) == 0) return;
    cs->row->moved = 1;
    sc_say(SC_SAY_MOVED, 0,
           "starcoll: comm %s: each tensor's buffer came %d place(s) earlier in the step than it had, all at once and "
           "for a whole step, after the step was learned: a step that left a gradient out (a parameter unused that "
           "step)?  No shape and no per-step call shows where these steps start, so tolerant rounds may have summed "
           "one tensor into another there; reduce a loss every step (MPI_Allreduce) or run STARCOLL_MODE=sync",
           cs->label, by);
}

/* The calls between two per-step calls were on the learned pattern but
 * not a whole step of it (sc_identity_misaligned): said once by rank 0,
 * with what to do; the report counts such steps.  Only said: by then the
 * step's rounds have run, and its shapes do not tell which calls were
 * another step's. */
static void note_misaligned(sc_comm *cs)
{
    cs->row->misaligned += 1;
    sc_say(SC_SAY_MISALIGNED, 0,
           "starcoll: comm %s: the calls since the last per-step call were on the learned step's pattern but not a "
           "whole step of it: another model's step in turn, whose shapes line up with this one's after a call off "
           "it?  Its rounds may have summed one tensor into another; give each model its own communicator "
           "(MPI_Comm_dup) or run STARCOLL_MODE=sync",
           cs->label);
}

/* An eligible call in a tolerant policy: which tensor it is (learned and
 * agreed first), then the engine's rounds, or exact when the tensors are
 * not told apart; a call off the pattern goes where all ranks agree.
 * *mode gets the mode the call counted in. */
static int tolerant_allreduce(sc_comm *cs, const sc_user_call *c, sc_dkind dk, sc_mode *mode, double t_in,
                              sc_nb_call *nb, int *pending)
{
    double outside = cs->last_exit > 0 ? t_in - cs->last_exit : 0;
    sc_call_key k = call_key(cs, c, dk, 1, t_in);
    *mode = SC_MODE_SYNC;
    for (;;) {
        int slot = -1;
        sc_id_kind kind = sc_identity_next(cs->id, &k, &slot);
        if (kind == SC_ID_LEARNING) {
            if (cs->learn_throttled0 < 0) cs->learn_throttled0 = sc_cgroup_throttled_total_s();
            if (cs->learn_cpu0 < 0 && sc_proc_thread_times(&cs->learn_cpu0, &cs->learn_runq0) != 0)
                cs->learn_cpu0 = cs->learn_runq0 = -1;
            cs->learn_compute_s += outside;
            return learning_call(cs, &k, c, dk);
        }
        if (kind == SC_ID_SLOT && !cs->engine) {
            cs->row->ambiguous_calls += 1;
            return lockstep_on(cs, &k, c, dk);
        }
        if (kind == SC_ID_SLOT) {
            long pos = sc_identity_position(cs->id) - 1;
            if (slot == 0) cs->row->steps += 1;
            if (!cs->row->turned) note_turns(cs);
            if (!cs->row->moved) note_moved(cs);
            cs->row->compute_s += outside;
            *mode = sc_engine_mode(cs->engine);
            int other = -1;
            int rc;
            /* A nonblocking call owed a dropped pattern's result completes
             * here, so that result can be added before it does (rare). */
            if (nb && !sc_comm_owes_carry(cs, slot))
                rc = sc_engine_icall(cs->engine, slot, pos, c->sendbuf, c->recvbuf, sc_rt.pcontrol_exact, &other, nb,
                                     pending);
            else
                rc = sc_engine_call(cs->engine, slot, pos, c->sendbuf, c->recvbuf, sc_rt.pcontrol_exact, &other);
            if (rc == MPI_SUCCESS && *pending) return rc;
            if (rc == MPI_SUCCESS) {
                sc_comm_pay_carry(cs, slot, c->recvbuf, c->count, dk);
                return rc;
            }
            if (other >= 0)
                return call_fails(cs, c, dk, rc, "rank %d makes another MPI_Allreduce at this point (the ranks' call "
                                  "sequences disagree); this call's sum would be incomplete, so it fails", other);
            return call_fails(cs, c, dk, rc, "the tolerant engine failed");
        }
        /* Off the pattern: what happens is agreed by all ranks.  A moved
         * buffer is this rank's view only: without an engine the calls are
         * exact, and nothing rides into another tensor's sum. */
        sc_off_verdict v = SC_OFF_REJECT;
        int other = -1;
        long pos = sc_identity_position(cs->id);
        int rc = MPI_SUCCESS;
        if (sc_identity_off_moved(cs->id)) {
            if (cs->engine) rc = sc_engine_off_moved(cs->engine, slot, pos, k.shape, &v);
        } else {
            rc = cs->engine ? sc_engine_off(cs->engine, slot, pos, k.shape, &v, &other)
                            : lockstep_off(cs, slot, k.shape, &v, &other);
        }
        if (rc != MPI_SUCCESS) return call_fails(cs, c, dk, rc, "the agreement on a call off the step pattern failed");
        v = sc_identity_settle(cs->id, v);
        if (v == SC_OFF_ON) continue;   /* some rank's call here is on the pattern: so is this one */
        if (v == SC_OFF_RELEARN) {
            /* A whole step off the pattern: every rank drops it at this
             * same call and learns again, starting with it. */
            sc_say(SC_SAY_RELEARN, 0, "starcoll: the pattern of MPI_Allreduce calls changed; learning it again (exact meanwhile)");
            sc_comm_stop_engine_here(cs);
            sc_identity_relearn(cs->id);
            cs->learn_compute_s = 0;
            cs->learn_throttled0 = -1;
            cs->learn_cpu0 = cs->learn_runq0 = -1;
            cs->row->relearns += 1;
            continue;
        }
        if (v == SC_OFF_STRAY) {   /* every rank makes it: exact, and the pattern stays */
            cs->row->stray_calls += 1;
            return cs->engine ? sc_engine_off_done(cs->engine, c)
                              : blocking_allreduce(c->sendbuf, c->recvbuf, c->count, c->dt, c->op, cs->comm, 0);
        }
        if (cs->engine) sc_engine_off_done(cs->engine, NULL);
        else {
            sc_identity_relearn(cs->id);   /* every rank knows, as in lockstep_on */
            cs->row->relearns += 1;
        }
        char expected[64] = "no eligible call in the step";
        if (slot >= 0)
            snprintf(expected, sizeof expected, "%ld %s elements expected here", sc_identity_slot_count(cs->id, slot),
                     kind_name((sc_dkind)sc_identity_slot_dkind(cs->id, slot)));
        return call_fails(cs, c, dk, MPI_ERR_OTHER,
                          "it is off the step pattern all ranks agreed on (%s) and rank %d makes another call at this "
                          "point (the ranks' call sequences disagree); not reduced, and it does not count",
                          expected, other);
    }
}

/* An ineligible call under a tolerant policy still takes its place in
 * the step (a per-step loss tells steps apart): 1 when it is part of the
 * learning, and must be agreed on like any call (learning_call). */
static int ineligible_learning(sc_comm *cs, const sc_user_call *c, sc_dkind dk, sc_elig e, sc_call_key *k, double t_in)
{
    if (!tolerant_policy() || !identity_applies(cs) || !ensure_identity(cs)) return 0;
    *k = call_key(cs, c, dk, 0, t_in);
    k->maybe_gradient = e == SC_ELIG_SMALL && c->count >= 2;
    k->one_number = e == SC_ELIG_SMALL && c->count == 1;
    int slot;
    long misaligned = sc_identity_misaligned(cs->id), foreign = sc_identity_foreign(cs->id);
    sc_id_kind kind = sc_identity_next(cs->id, k, &slot);
    if (!cs->two_models) {   /* once exact for good, nothing more to do or say */
        if (sc_identity_foreign(cs->id) > foreign) sc_keep_exact_two_models(cs);
        else if (sc_identity_misaligned(cs->id) > misaligned) note_misaligned(cs);
    }
    return kind == SC_ID_LEARNING;
}

/* ---- nonblocking calls (MPI_Iallreduce) ---------------------------------
 * An MPI_Iallreduce that takes part in the rounds returns a generalized
 * request (MPI_Grequest_start), completed by the engine once the round
 * holding its buffer is in (engine.h, sc_engine_icall).  So every way a
 * code completes requests works unchanged, MPI_Wait to MPI_Testall and
 * MPI_Request_free, from C, Fortran and mpi4py, mixed with the code's own
 * requests, and starcoll needs none of them for completion (blocking.c
 * wraps the waits only to say this rank is away while blocked in them).
 * A call that finishes inside MPI_Iallreduce (while the pattern is
 * learned, exact lockstep, a direct step, missed rounds returned at once)
 * gets a request already complete. */

static int nb_query(void *extra, MPI_Status *st)
{
    const sc_nb_call *nb = extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return nb->rc;
}

static int nb_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int nb_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;   /* a reduction under way cannot be cancelled: it completes as usual */
}

/* A request for a call about to start; NULL (with *rc) when none can be had. */
static sc_nb_call *nb_start(MPI_Request *request, int *rc)
{
    sc_nb_call *nb = calloc(1, sizeof *nb);
    *rc = nb ? PMPI_Grequest_start(nb_query, nb_free, nb_cancel, nb, &nb->req) : MPI_ERR_NO_MEM;
    if (*rc != MPI_SUCCESS) {
        free(nb);
        return NULL;
    }
    *request = nb->req;
    return nb;
}

/* The call finished inside MPI_Iallreduce with rc: its request completes
 * now; on a failure there is none (MPI leaves it undefined), as with any
 * call that returns an error. */
static int nb_finish(sc_nb_call *nb, MPI_Request *request, int rc)
{
    nb->rc = rc;
    PMPI_Grequest_complete(nb->req);
    if (rc != MPI_SUCCESS) {
        PMPI_Request_free(request);
        *request = MPI_REQUEST_NULL;
    }
    return rc;
}

/* The exact paths of a nonblocking call: a call that must be agreed on
 * or reduced in lockstep right now runs blocking, and its request is
 * complete when MPI_Iallreduce returns. */
static int finished_request(MPI_Request *request, int rc)
{
    if (!request) return rc;
    if (rc != MPI_SUCCESS) return rc;
    int rc2;
    sc_nb_call *nb = nb_start(request, &rc2);
    if (!nb) return rc2;
    return nb_finish(nb, request, rc);
}

#define PLAIN(c) (request ? PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, c, request) \
                          : PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, c))

static int reduce_on(sc_comm *cs, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, MPI_Request *request);

/* Whether cs's eligible calls go through NCCL (nccl.h): decided at its
 * first eligible call, collectively, under the exact policies (sync, hier)
 * only; the tolerant modes stage device buffers through host memory.
 * which: the call's device buffers, as reduce_on classified them. */
static void nccl_setup(sc_comm *cs, MPI_Comm comm, const void *sendbuf, void *recvbuf, int which)
{
    cs->nccl.state = SC_NCCL_OFF;
    const char *why = NULL;
    if (sc_rt.policy_disagreed)   /* eligibility may differ by rank: deciding together could hang */
        why = "the ranks' policies disagree: device buffers stage through host memory";
    else if (sc_rt.policy.cuda_off)   /* the same on every rank: a disagreement is the case above */
        why = "STARCOLL_CUDA=off";
    else if (sc_rt.policy.mode != SC_MODE_SYNC && sc_rt.policy.mode != SC_MODE_HIER)
        why = "the policy is tolerant: device buffers stage through host memory";
    else if (cs->is_inter || cs->size < 2) why = "";
    if (why) {
        if (*why && !sc_rt.nccl_why[0]) snprintf(sc_rt.nccl_why, sizeof sc_rt.nccl_why, "%s", why);
        return;
    }
    char not[200] = "";
    int away = away_begin();
    const void *dev = which & SC_DEVICE_RECV ? recvbuf : which & SC_DEVICE_SEND ? sendbuf : NULL;
    int rc = sc_nccl_setup(&cs->nccl, comm, cs->rank, cs->size, dev, not, sizeof not);
    away_end(away);
    if (rc != MPI_SUCCESS)
        sc_say(SC_SAY_DEVICE, 1, "starcoll: rank %d: deciding whether to use NCCL failed (MPI error %d); device "
               "buffers stage through host memory", sc_rt.world_rank, rc);
    if (cs->nccl.state == SC_NCCL_READY) sc_rt.nccl_comms += 1;
    else if (!sc_rt.nccl_why[0]) snprintf(sc_rt.nccl_why, sizeof sc_rt.nccl_why, "%s", not);
}

/* A call on CUDA device buffers, whatever its shape: run blocking on host
 * copies (device.h), eligible ones in whatever mode, the others exact
 * through MPI, the result copied back before it returns; a nonblocking
 * one gets a request already complete.  The copies span the datatype's
 * true extent, so derived types stage whole.  While staged, the call is
 * known by its device buffers (cs->staged_where), never by the host
 * copies, which the next call may reuse. */
static int reduce_staged(sc_comm *cs, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request, int which)
{
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent);
    if (rc != MPI_SUCCESS) return rc;   /* not a datatype: MPI's own error, as without starcoll */
    size_t span = (size_t)true_extent + (size_t)(count - 1) * (size_t)extent;
    sc_staged st;
    int in_place = sendbuf == MPI_IN_PLACE;
    rc = sc_device_stage(&st, sendbuf, recvbuf, in_place, which, (long)true_lb, span);
    if (rc == MPI_SUCCESS) {
        cs->staged_where = sc_where_hash(in_place ? NULL : sendbuf, recvbuf);
        rc = reduce_on(cs, in_place ? MPI_IN_PLACE : st.send, st.recv, count, datatype, op, comm, NULL);
        cs->staged_where = 0;
        rc = sc_device_unstage(&st, rc);
    }
    cs->row->device_calls += 1;
    cs->row->device_bytes += (double)span * (st.send_on_device + st.recv_on_device);
    cs->row->device_s += st.seconds;
    cs->row->device_pinned += st.pinned;
    return finished_request(request, rc);
}

/* The first few element counts of sums kept exact for their size while
 * an engine ran: the report names them (a model's small biases would ride
 * with a lower STARCOLL_MIN_BYTES). */
static void note_exact_small(sc_stats *row, int count)
{
    for (int i = 0; i < SC_EXACT_SMALL_SEEN; i++) {
        if (row->exact_small[i] == 0) row->exact_small[i] = count;
        if (row->exact_small[i] == count) {
            row->exact_small_calls[i] += 1;
            return;
        }
    }
}

/* A call on cs, which this thread holds for the call's length. */
static int reduce_on(sc_comm *cs, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, MPI_Request *request)
{
    sc_call_shape shape = {
        .op_is_sum = op == MPI_SUM,
        .dkind = datatype_kind(datatype),
        .is_inter = cs->is_inter,
        .comm_size = cs->size,
        .count = count,
        .aliased = sendbuf == recvbuf && sendbuf != MPI_IN_PLACE,
    };
    sc_elig e = sc_eligibility(&shape, sc_rt.policy.min_bytes, &sc_rt.policy.exact);
    int on_device = cs->staged_where || count <= 0
                        ? 0
                        : sc_device_buffers(sendbuf, recvbuf, sendbuf == MPI_IN_PLACE, &cs->row->host_asked);
    if (e == SC_ELIG_OK && cs->nccl.state == SC_NCCL_UNTRIED && !cs->staged_where)
        nccl_setup(cs, comm, sendbuf, recvbuf, on_device);
    if (on_device && !(e == SC_ELIG_OK && cs->nccl.state == SC_NCCL_READY))
        return reduce_staged(cs, sendbuf, recvbuf, count, datatype, op, comm, request, on_device);
    sc_comm_polling(0);   /* a call of its own: not polling any more */
    sc_user_call call = {sendbuf, recvbuf, count, datatype, op};
    double t0 = PMPI_Wtime();
    int rc;
    if (request) cs->row->nonblocking += 1;
    if (e != SC_ELIG_OK) {
        sc_call_key k;
        if (ineligible_learning(cs, &call, shape.dkind, e, &k, t0))
            rc = finished_request(request, learning_call(cs, &k, &call, shape.dkind));
        else if (request) rc = PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
        else rc = blocking_allreduce(sendbuf, recvbuf, count, datatype, op, comm, meets_first(cs, e));
        cs->last_any_exit = PMPI_Wtime();
        double dt = cs->last_any_exit - t0;
        cs->row->passthrough += 1;
        cs->row->why_not[e] += 1;
        if (cs->staged_where) cs->row->device_exact += 1;
        cs->row->time_in += dt;
        if (cs->engine) {   /* an exact collective inside a tolerant job: everyone waits for the slowest */
            cs->row->exact_in_tolerant += 1;
            cs->row->exact_in_tolerant_s += dt;
            if (e == SC_ELIG_SMALL) note_exact_small(cs->row, count);
        }
        return rc;
    }
    /* Injected straggling stands for compute: it happens before the call
     * and is not counted as time inside the library.  The ranks named are
     * world ranks on every communicator: "rank=1" slows the job's rank 1,
     * not each split communicator's second member. */
    if (sc_rt.policy.inject.enabled) {
        sleep_s(sc_inject_delay(&sc_rt.policy.inject, sc_rt.world_rank, sc_rt.world_size, cs->eligible_calls));
        t0 = PMPI_Wtime();
    }
    cs->eligible_calls++;
    sc_mode mode = SC_MODE_SYNC;
    if (cs->nccl.state == SC_NCCL_READY) {
        mode = sc_rt.policy.mode;
        double copied = 0;
        rc = finished_request(request, sc_nccl_allreduce(&cs->nccl, sendbuf, recvbuf, (size_t)count,
                                                         shape.dkind == SC_DK_DOUBLE, on_device, &copied));
        cs->row->device_nccl += 1;
        cs->row->device_bytes += copied;
        if (on_device) {
            cs->row->device_calls += 1;
            cs->row->device_mode[mode] += 1;
        }
    } else if (sc_rt.policy.mode == SC_MODE_HIER && !sc_rt.pcontrol_exact) {
        mode = SC_MODE_HIER;
        rc = finished_request(request, sc_hier_allreduce(&cs->hier, comm, sc_rt.policy.group_size, sendbuf, recvbuf,
                                                         count, datatype, 0));
    } else if (tolerant_policy() && ensure_identity(cs)) {
        int pending = 0;
        sc_nb_call *nb = request ? nb_start(request, &rc) : NULL;
        if (request && !nb) return call_fails(cs, &call, shape.dkind, rc, "no request could be made for it");
        rc = tolerant_allreduce(cs, &call, shape.dkind, &mode, t0, nb, &pending);
        if (pending) cs->row->overlapped += 1;
        else if (nb) rc = nb_finish(nb, request, rc);
    } else {
        rc = PLAIN(comm);
        /* the policy keeps every call exact, or this communicator could not have rounds */
        cs->row->why_not[tolerant_policy() ? SC_WHY_NO_ENGINE : SC_ELIG_OK] += 1;
    }
    double t1 = PMPI_Wtime(), dt = t1 - t0;
    cs->last_exit = cs->last_any_exit = t1;
    cs->row->eligible += 1;
    cs->row->bytes += (double)count * (double)sc_dkind_size(shape.dkind);
    cs->row->time_in += dt;
    cs->row->mode_calls[mode] += 1;
    if (cs->staged_where) cs->row->device_mode[mode] += 1;
    return rc;
}

/* MPI_Allreduce (request NULL) and MPI_Iallreduce, from any thread:
 * calls on different communicators may run at once (each communicator's
 * state is its own; what they share is locked in comm_state.c), two on
 * the same one may not (erroneous MPI: said, and passed through). */
static int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  MPI_Request *request)
{
    if (!sc_rt.active) return PLAIN(comm);
    sc_comm *cs = sc_comm_get(comm);
    if (!cs) {
        sc_say(SC_SAY_COMM_STATE, 0, "starcoll: cannot attach state to a communicator; its calls pass through");
        return PLAIN(comm);
    }
    if (!sc_comm_enter(cs)) {
        sc_say(SC_SAY_THREAD, 1, "starcoll: rank %d: two threads call MPI_Allreduce on one communicator at once "
               "(comm %s; erroneous in MPI: the order of the two is undefined); such calls pass through unchanged",
               sc_rt.world_rank, cs->label);
        cs->row->passthrough += 1;
        cs->row->why_not[SC_ELIG_THREAD] += 1;
        return PLAIN(comm);
    }
    int rc = reduce_on(cs, sendbuf, recvbuf, count, datatype, op, comm, request);
    sc_comm_leave(cs);
    return rc;
}
#undef PLAIN

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce(sendbuf, recvbuf, count, datatype, op, comm, NULL);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request)
{
    return reduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}
