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
#include "comm_state.h"
#include "eligibility.h"
#include "mode_hier.h"
#include "report.h"
#include "kernels.h"
#include "monitor.h"

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

static void count_hosts(void)
{
    MPI_Comm node;
    sc_rt.nhosts = 1;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return;
    int node_rank, leaders = 0;
    PMPI_Comm_rank(node, &node_rank);
    int one = node_rank == 0;
    if (PMPI_Allreduce(&one, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS) sc_rt.nhosts = leaders;
    PMPI_Comm_free(&node);
}

/* All ranks must hold the same policy; compare a hash of it. */
static void check_policy_agreement(void)
{
    unsigned long long h = sc_policy_hash(&sc_rt.policy), v[2] = {h, ~h}, r[2];
    if (PMPI_Allreduce(v, r, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return;
    if (r[0] != ~r[1]) {
        if (sc_rt.world_rank == 0)
            fprintf(stderr, "starcoll: ranks disagree on the policy (STARCOLL_* differ between ranks); using sync everywhere\n");
        sc_rt.policy.mode = SC_MODE_SYNC;
        sc_rt.policy.inject.enabled = 0;
    }
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
    sc_rt.init_thread = pthread_self();
    PMPI_Comm_rank(MPI_COMM_WORLD, &sc_rt.world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &sc_rt.world_size);
    sc_rt.t_init = PMPI_Wtime();
    if (sc_rt.world_rank == 0 && sc_rt.policy_msgs[0]) fputs(sc_rt.policy_msgs, stderr);
    if (sc_comm_keyval_init() != MPI_SUCCESS) {
        sc_say(SC_SAY_COMM_STATE, 0, "starcoll: cannot create an attribute keyval; every call passes through");
        return;
    }
    count_hosts();
    check_policy_agreement();
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
    if (sc_comm_engines() > 1) sc_comm_away(waiting_in, away);
}

/* An exact all-reduce by the application's thread.  While tolerant
 * engines run, their coordinators are told this rank is away, so no round
 * waits for it meanwhile (which could wait forever: the ranks it needs may
 * be the ones blocked here). */
static int blocking_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    int engines = sc_comm_engines_here();
    if (engines) sc_comm_away(NULL, 1);
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    if (engines) sc_comm_away(NULL, 0);
    return rc;
}

/* Results drained from a dropped pattern are owed to the next call of the
 * same shape on the communicator. */
static void pay_carry(sc_comm *cs, sc_sig sig, void *recvbuf)
{
    for (sc_carry **p = &cs->carry; *p; p = &(*p)->next) {
        sc_carry *c = *p;
        if (c->sig.count != sig.count || c->sig.dkind != sig.dkind) continue;   /* shape only: buffers may have moved */
        sc_sum_into(recvbuf, c->buf, (size_t)sig.count, (sc_dkind)sig.dkind);
        *p = c->next;
        free(c->buf);
        free(c);
        return;
    }
}

/* An eligible call in a tolerant policy: learn the step pattern (exact
 * meanwhile), then hand pattern calls to the engine.  *mode gets the mode
 * the call counted in. */
static int tolerant_allreduce(sc_comm *cs, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                              sc_sig sig, sc_mode *mode)
{
    double outside = cs->last_exit > 0 ? PMPI_Wtime() - cs->last_exit : 0;
    int slot = sc_pattern_next(&cs->pattern, sig);
    if (slot == SC_PAT_RELEARN && cs->engine) {
        sc_say(SC_SAY_RELEARN, 0, "starcoll: the pattern of MPI_Allreduce calls changed; learning it again (exact meanwhile)");
        sc_comm_stop_engine(cs, 1);   /* collective: every rank drops the pattern at this same call */
        cs->learn_compute_s = 0;
    }
    if (slot >= 0 && !cs->engine && !cs->engine_failed) {
        sc_mode start = sc_rt.policy.mode == SC_MODE_AUTO ? SC_MODE_SYNC : sc_rt.policy.mode;
        sc_engine_away_hook = away_hook;
        cs->engine = sc_engine_start(cs->comm, &cs->pattern, start, (int)(cs->row - sc_rt.rows), cs->learn_compute_s);
        if (!cs->engine) {
            cs->engine_failed = 1;
            sc_say(SC_SAY_ENGINE, 0, "starcoll: could not start the tolerant engine; this communicator stays exact (sync)");
        }
    }
    if (slot < 0 || !cs->engine) {
        cs->learn_compute_s += outside;
        *mode = SC_MODE_SYNC;
        return blocking_allreduce(sendbuf, recvbuf, count, dt, MPI_SUM, cs->comm);
    }
    if (slot == 0) cs->row->steps += 1;
    cs->row->compute_s += outside;
    *mode = sc_engine_mode(cs->engine);
    return sc_engine_call(cs->engine, slot, sendbuf, recvbuf, sc_rt.pcontrol_exact);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!sc_rt.active) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    sc_comm *cs = sc_comm_get(comm);
    if (!cs) {
        sc_say(SC_SAY_COMM_STATE, 0, "starcoll: cannot attach state to a communicator; its calls pass through");
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
    sc_call_shape shape = {
        .op_is_sum = op == MPI_SUM,
        .dkind = datatype_kind(datatype),
        .is_inter = cs->is_inter,
        .comm_size = cs->size,
        .count = count,
        .aliased = sendbuf == recvbuf && sendbuf != MPI_IN_PLACE,
        .foreign_thread = !pthread_equal(pthread_self(), sc_rt.init_thread),
    };
    sc_elig e = sc_eligibility(&shape, sc_rt.policy.min_bytes);
    if (e == SC_ELIG_THREAD)
        sc_say(SC_SAY_THREAD, 1, "starcoll: MPI_Allreduce called from a thread other than MPI_Init's; such calls pass through unchanged");
    double t0 = PMPI_Wtime();
    int rc;
    if (e != SC_ELIG_OK) {
        rc = e == SC_ELIG_THREAD ? PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm)
                                 : blocking_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
        double dt = PMPI_Wtime() - t0;
        cs->row->passthrough += 1;
        cs->row->time_in += dt;
        if (cs->engine) {   /* an exact collective inside a tolerant job: everyone waits for the slowest */
            cs->row->exact_in_tolerant += 1;
            cs->row->exact_in_tolerant_s += dt;
        }
        return rc;
    }
    /* Injected straggling stands for compute: it happens before the call
     * and is not counted as time inside the library. */
    if (sc_rt.policy.inject.enabled) {
        sleep_s(sc_inject_delay(&sc_rt.policy.inject, cs->rank, cs->size, cs->eligible_calls));
        t0 = PMPI_Wtime();
    }
    cs->eligible_calls++;
    sc_sig sig = {count, shape.dkind, sendbuf, recvbuf};
    sc_mode mode = SC_MODE_SYNC;
    if (sc_rt.policy.mode == SC_MODE_HIER && !sc_rt.pcontrol_exact) {
        mode = SC_MODE_HIER;
        rc = sc_hier_allreduce(&cs->hier, comm, sc_rt.policy.group_size, sendbuf, recvbuf, count, datatype);
    } else if (tolerant_policy()) {
        rc = tolerant_allreduce(cs, sendbuf, recvbuf, count, datatype, sig, &mode);
    } else {
        rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
    if (cs->carry && rc == MPI_SUCCESS) pay_carry(cs, sig, recvbuf);
    double t1 = PMPI_Wtime(), dt = t1 - t0;
    cs->last_exit = t1;
    cs->row->eligible += 1;
    cs->row->bytes += (double)count * (double)sc_dkind_size(shape.dkind);
    cs->row->time_in += dt;
    cs->row->mode_calls[mode] += 1;
    return rc;
}
