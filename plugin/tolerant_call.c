/* The calls of a tolerant policy (quorum, groups, auto), on the
 * application's thread: which tensor each is, learned and agreed by all
 * ranks of its communicator (identity.h, agree.h), then the engine's
 * rounds, or exact where the tensors are not told apart; a call off the
 * pattern goes where all ranks agree (tolerant_call.h). */
#include "tolerant_call.h"
#include <stdio.h>
#include <stdlib.h>
#include "runtime.h"
#include "exact_call.h"
#include "agree.h"
#include "kept_exact.h"
#include "away_around.h"
#include "report.h"
#include "cgroup_source.h"
#include "proc_source.h"

int sc_tolerant_policy(void)
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
int sc_tolerant_ready(sc_comm *cs)
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
    if (rc != MPI_SUCCESS) return sc_call_fails(cs, c, dk, rc, "the agreement on which call this is failed");
    if (out == SC_LEARN_DISAGREE)
        return sc_call_fails(cs, c, dk, MPI_ERR_OTHER,
                          "%d of %d ranks make another MPI_Allreduce at this point (the ranks' call sequences "
                          "disagree; without starcoll this would hang or fail with MPI_ERR_TRUNCATE); not reduced, and "
                          "it does not count", cs->size - others, cs->size);
    cs->row->learning_calls += k->eligible;
    /* what the step's values say, for sc_keep_guessed_exact */
    int probe = k->eligible && !sc_rt.policy.exact_comms_set && (cs->wprobe || (cs->wprobe = sc_wprobe_new()));
    if (probe) sc_wprobe_before(cs->wprobe, c->sendbuf == MPI_IN_PLACE ? c->recvbuf : c->sendbuf, c->count, dk);
    rc = sc_exact_allreduce(c->sendbuf, c->recvbuf, c->count, c->dt, c->op, cs->comm, 0);
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
    return sc_call_fails(cs, c, dk, MPI_ERR_OTHER,
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
int sc_tolerant_allreduce(sc_comm *cs, const sc_user_call *c, sc_dkind dk, sc_mode *mode, double t_in, sc_nb_call *nb,
                          int *pending)
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
                return sc_call_fails(cs, c, dk, rc, "rank %d makes another MPI_Allreduce at this point (the ranks' call "
                                  "sequences disagree); this call's sum would be incomplete, so it fails", other);
            return sc_call_fails(cs, c, dk, rc, "the tolerant engine failed");
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
        if (rc != MPI_SUCCESS) return sc_call_fails(cs, c, dk, rc, "the agreement on a call off the step pattern failed");
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
                              : sc_exact_allreduce(c->sendbuf, c->recvbuf, c->count, c->dt, c->op, cs->comm, 0);
        }
        if (cs->engine) sc_engine_off_done(cs->engine, NULL);
        else {
            sc_identity_relearn(cs->id);   /* every rank knows, as in lockstep_on */
            cs->row->relearns += 1;
        }
        char expected[64] = "no eligible call in the step";
        if (slot >= 0)
            snprintf(expected, sizeof expected, "%ld %s elements expected here", sc_identity_slot_count(cs->id, slot),
                     sc_dkind_name((sc_dkind)sc_identity_slot_dkind(cs->id, slot)));
        return sc_call_fails(cs, c, dk, MPI_ERR_OTHER,
                          "it is off the step pattern all ranks agreed on (%s) and rank %d makes another call at this "
                          "point (the ranks' call sequences disagree); not reduced, and it does not count",
                          expected, other);
    }
}

int sc_tolerant_ineligible(sc_comm *cs, const sc_user_call *c, sc_dkind dk, sc_elig e, double t_in, int *rc)
{
    if (!sc_tolerant_policy() || !identity_applies(cs) || !sc_tolerant_ready(cs)) return 0;
    sc_call_key k = call_key(cs, c, dk, 0, t_in);
    k.maybe_gradient = e == SC_ELIG_SMALL && c->count >= 2;
    k.one_number = e == SC_ELIG_SMALL && c->count == 1;
    int slot;
    long misaligned = sc_identity_misaligned(cs->id), foreign = sc_identity_foreign(cs->id);
    sc_id_kind kind = sc_identity_next(cs->id, &k, &slot);
    if (!cs->two_models) {   /* once exact for good, nothing more to do or say */
        if (sc_identity_foreign(cs->id) > foreign) sc_keep_exact_two_models(cs);
        else if (sc_identity_misaligned(cs->id) > misaligned) note_misaligned(cs);
    }
    if (kind != SC_ID_LEARNING) return 0;
    *rc = learning_call(cs, &k, c, dk);
    return 1;
}
