/* The PMPI interposition layer: MPI_Init, MPI_Init_thread, MPI_Finalize,
 * MPI_Allreduce, MPI_Iallreduce and MPI_Pcontrol, and which path each
 * all-reduce takes: exact (exact_call.c), NCCL or staged device buffers,
 * hier, or a tolerant policy's (tolerant_call.c).  The only calls made
 * from here on are PMPI_ ones, so nothing re-enters the library. */
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
#include "eligibility.h"
#include "mode_hier.h"
#include "report.h"
#include "kernels.h"
#include "monitor.h"
#include "startup.h"
#include "away_around.h"
#include "exact_call.h"
#include "tolerant_call.h"

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
    if (sc_tolerant_policy()) open_monitor();
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

/* An ineligible call (a loss, a metric) beside its communicator's engine
 * rounds meets first (sc_exact_allreduce).  Every rank decides alike: the
 * engine's start and stop are agreed on, and direct steps (no rounds to
 * serve) hold on every rank at the same program points.  Not a call that
 * clashed with another thread's on the communicator: only this rank saw
 * the clash, and an extra collective here would pair with the others' next. */
static int meets_first(const sc_comm *cs, sc_elig e)
{
    return e != SC_ELIG_THREAD && cs->engine && !sc_engine_direct(cs->engine);
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
        if (sc_tolerant_ineligible(cs, &call, shape.dkind, e, t0, &rc))   /* agreed while the step is learned */
            rc = finished_request(request, rc);
        else if (request) rc = PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
        else rc = sc_exact_allreduce(sendbuf, recvbuf, count, datatype, op, comm, meets_first(cs, e));
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
    } else if (sc_tolerant_policy() && sc_tolerant_ready(cs)) {
        int pending = 0;
        sc_nb_call *nb = request ? nb_start(request, &rc) : NULL;
        if (request && !nb) return sc_call_fails(cs, &call, shape.dkind, rc, "no request could be made for it");
        rc = sc_tolerant_allreduce(cs, &call, shape.dkind, &mode, t0, nb, &pending);
        if (pending) cs->row->overlapped += 1;
        else if (nb) rc = nb_finish(nb, request, rc);
    } else {
        rc = PLAIN(comm);
        /* the policy keeps every call exact, or this communicator could not have rounds */
        cs->row->why_not[sc_tolerant_policy() ? SC_WHY_NO_ENGINE : SC_ELIG_OK] += 1;
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
