/* Direct: the exact modes (sync, hier) as plain collectives by the
 * application threads on the engine's direct communicator, with no rounds and
 * no engine traffic: as cheap as not having starcoll.  All ranks switch at
 * the same call: into direct from a round every rank waits on (engine.c),
 * and out again by the broadcast that opens every direct step, in which the
 * coordinator's thread says what comes next. */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "runtime.h"
#include "agree.h"
#include "polled_coll.h"

/* The coordinator's word for the next step: its engine's decision, or, once
 * every rank has left, stop; once an epoch, a link probe with it; and
 * whether the collectives from here to the next broadcast are polled
 * (engine_crowd.c). */
static long next_command(sc_engine *e)
{
    if (e->rank != e->coord) return CMD_NONE;
    pthread_mutex_lock(&e->mu);
    long cmd = e->direct_cmd;
    e->direct_cmd = CMD_NONE;
    pthread_mutex_unlock(&e->mu);
    if (__atomic_load_n(&e->ngone, __ATOMIC_ACQUIRE) == e->n) cmd = CMD_STOP;
    else if (cmd != CMD_ENGINE && sc_probe_wanted(e)) cmd |= CMD_PROBE;
    if (__atomic_load_n(&e->polled, __ATOMIC_ACQUIRE)) cmd |= CMD_POLL;
    return cmd;
}

/* The caller learned cmd from the step's broadcast. */
static int obey(sc_engine *e, long cmd, int *back_to_rounds)
{
    *back_to_rounds = 0;
    e->direct_polled = (cmd & CMD_POLL) != 0;
    int rc = cmd & CMD_PROBE ? sc_probe_links(e) : MPI_SUCCESS;
    cmd &= CMD_WHAT;
    if (cmd == CMD_ENGINE) {
        pthread_mutex_lock(&e->mu);
        e->direct = 0;
        pthread_cond_signal(&e->cv_engine);   /* its naps were direct steps' long ones */
        pthread_mutex_unlock(&e->mu);
        if (rc == MPI_SUCCESS) rc = sc_engine_note(e, NOTE_ROUNDS);   /* before any deposit of mine */
        *back_to_rounds = 1;
    } else if (cmd == CMD_SYNC) {
        e->direct_mode = SC_MODE_SYNC;
    } else if (cmd == CMD_HIER) {
        e->direct_mode = SC_MODE_HIER;
    }
    return rc;
}

static int direct_reduce(void *ctx, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt)
{
    sc_engine *e = ctx;
    return e->direct_mode == SC_MODE_HIER
               ? sc_hier_allreduce(&e->direct_hier, e->direct_comm, sc_rt.policy.group_size, sendbuf, recvbuf, count, dt,
                                   e->direct_polled)
               : sc_polled_allreduce(sendbuf, recvbuf, count, dt, MPI_SUM, e->direct_comm, e->direct_polled);
}

/* The broadcast that opens a direct step (slot 0). */
static int open_step(sc_engine *e, int *back_to_rounds)
{
    long cmd = next_command(e);
    int rc = sc_polled_bcast(&cmd, 1, MPI_LONG, e->coord, e->ctrl, e->direct_polled);
    return rc == MPI_SUCCESS ? obey(e, cmd, back_to_rounds) : rc;
}

/* A lockstep step found a rank off the pattern: every rank's call fails
 * here, and all go back to rounds at this same call.  The off rank's call
 * did not count and the others' did, so from now on their call streams
 * are a call apart: rounds tolerate that, and the coordinator sends
 * ranks direct only at equal positions, so they stay in rounds.  The
 * ranks whose call counted skip that deposit's number on its slot (a
 * deposit of nothing), so per-slot counts, which flushes align, stay
 * level with the off rank's, whose next call on the slot is that one. */
static int leave_direct(sc_engine *e, int skip_slot)
{
    pthread_mutex_lock(&e->mu);
    e->direct = 0;
    if (skip_slot >= 0) {
        e->slots[skip_slot].calls++;
        /* a fused member's call counts on its group too (engine_fusion.c):
         * the off rank's next call on it will, in rounds */
        if (e->slots[skip_slot].fuse >= 0) e->slots[e->slots[skip_slot].fuse].calls++;
    }
    pthread_cond_signal(&e->cv_engine);
    pthread_mutex_unlock(&e->mu);
    return sc_engine_note(e, NOTE_ROUNDS);
}

int sc_direct_call(sc_engine *e, int slot, const void *sendbuf, void *recvbuf, int *back_to_rounds, int *first_off)
{
    sc_slot *sl = &e->slots[slot];
    *back_to_rounds = 0;
    *first_off = -1;
    /* blocked here, this rank cannot deposit on other communicators */
    if (sc_engine_away_hook) sc_engine_away_hook(e, 1);
    int rc = slot == 0 ? open_step(e, back_to_rounds) : MPI_SUCCESS;
    sc_ls_outcome out = SC_LS_DONE;
    if (rc == MPI_SUCCESS && !*back_to_rounds)
        rc = sc_lockstep_on(direct_reduce, e, e->direct_comm, sendbuf, recvbuf, (int)sl->count, sl->dt, sl->dk, &out,
                            first_off, e->direct_polled);
    if (rc == MPI_SUCCESS && !*back_to_rounds && e->direct_polled)
        __atomic_add_fetch(&e->stats.polled, 1L, __ATOMIC_RELAXED);
    if (sc_engine_away_hook) sc_engine_away_hook(e, 0);
    if (*back_to_rounds) return MPI_SUCCESS;
    if (rc == MPI_SUCCESS && out != SC_LS_DONE) {
        int rc2 = leave_direct(e, slot);
        return rc2 != MPI_SUCCESS ? rc2 : MPI_ERR_OTHER;
    }
    pthread_mutex_lock(&e->mu);
    if (sl->flush_next && rc == MPI_SUCCESS) {
        /* A flush: a round left from before going direct may still be on
         * its way from a former parent (sc_rounds_all_in). */
        const sc_slot *g = sl->fuse >= 0 ? &e->slots[sl->fuse] : sl;
        while ((!sc_rounds_all_in(sl) || !sc_rounds_all_in(g)) && !e->stopped && !e->error)
            pthread_cond_wait(&e->cv_main, &e->mu);
        sl->flush_next = 0;
    }
    if (sl->inbox_rounds > 0 && rc == MPI_SUCCESS) {   /* a round left from before going direct */
        sc_sum_into(recvbuf, sl->inbox, (size_t)sl->count, sl->dk);
        memset(sl->inbox, 0, sl->bytes);
        sl->inbox_rounds = 0;
    }
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int sc_direct_off(sc_engine *e, int slot, uint64_t shape, sc_off_verdict *verdict, int *first_off, int *back_to_rounds)
{
    sc_slot *sl = &e->slots[slot];
    *back_to_rounds = 0;
    *verdict = SC_OFF_REJECT;
    if (!e->lockstep_buf && !(e->lockstep_buf = malloc(e->max_bytes))) return MPI_ERR_NO_MEM;
    if (sc_engine_away_hook) sc_engine_away_hook(e, 1);
    int rc = slot == 0 ? open_step(e, back_to_rounds) : MPI_SUCCESS;
    sc_ls_outcome out = SC_LS_REJECT;
    if (rc == MPI_SUCCESS && !*back_to_rounds)
        rc = sc_lockstep_off(direct_reduce, e, e->direct_comm, e->lockstep_buf, (int)sl->count, sl->dk, shape, &out,
                             first_off, e->direct_polled);
    if (sc_engine_away_hook) sc_engine_away_hook(e, 0);
    if (rc != MPI_SUCCESS || *back_to_rounds) return rc;
    if (out == SC_LS_STRAY) {
        *verdict = SC_OFF_STRAY;   /* every rank makes it: run it exact, and stay direct */
        return MPI_SUCCESS;
    }
    return leave_direct(e, -1);
}

/* A departing rank's part in one engine's direct steps: the broadcast, then
 * an all-reduce of zeros per slot, waited for as the running ranks wait
 * (polled_coll.h: a blocking collective does not match a nonblocking
 * one).  Its leave notice has asked the coordinator to go back to rounds,
 * where departed ranks are not waited for, so this lasts one step at most. */
static void serve_one(sc_engine *e)
{
    void *zeros = calloc(1, e->max_bytes), *sink = malloc(e->max_bytes);
    if (!zeros || !sink) {
        sc_say(SC_SAY_ERROR, 1, "starcoll: out of memory serving the direct steps while leaving; the others may wait");
        free(zeros);
        free(sink);
        return;
    }
    for (;;) {
        long cmd = next_command(e);
        int back = 0;
        if (sc_polled_bcast(&cmd, 1, MPI_LONG, e->coord, e->ctrl, e->direct_polled) != MPI_SUCCESS ||
            (cmd & CMD_WHAT) == CMD_STOP)
            break;
        if (obey(e, cmd, &back) != MPI_SUCCESS || back) break;   /* rounds again: the engine thread takes part for this rank */
        int rc = MPI_SUCCESS;
        for (int s = 0; s < e->nuser && rc == MPI_SUCCESS; s++) {   /* the steps' calls: user slots */
            const sc_slot *sl = &e->slots[s];
            rc = direct_reduce(e, zeros, sink, (int)sl->count, sl->dt);   /* as the running ranks' steps */
        }
        if (rc != MPI_SUCCESS) break;
    }
    free(zeros);
    free(sink);
}

void sc_engine_serve_while_direct(sc_engine **engines, int n)
{
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&engines[i]->mu);
        int direct = engines[i]->direct;
        pthread_mutex_unlock(&engines[i]->mu);
        if (direct) serve_one(engines[i]);
    }
}
