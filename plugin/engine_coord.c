/* The coordinator's engine thread: it collects every rank's notices,
 * closes rounds by the rules of round_rules.h and sends the round
 * messages, which carry mode, quorum and topology changes, so every rank
 * switches at the same round; it applies the selector's decisions, and
 * judges calls off the pattern once every rank's call at that position is
 * known. */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include "runtime.h"

/* Where rank r is blocked, from what this coordinator knows: the first
 * slot holding a deposit it waits for (its blocking call, or nonblocking
 * calls not complete yet, several at once), else outside the rounds (in a
 * call elsewhere, in direct steps, off the pattern), else nowhere. */
static void reblock(sc_engine *e, int r)
{
    for (int s = 0; s < e->nslots; s++) {
        const sc_track *t = &e->slots[s].track;
        if (t->waits_upto[r] > t->included[r]) {
            e->blocked_at[r] = s;
            e->blocked_need[r] = t->waits_upto[r];
            return;
        }
    }
    e->blocked_at[r] = e->outside[r] || e->in_direct[r] ? SC_BLOCKED_OUTSIDE : -1;
}

void sc_coord_reblock_after(sc_engine *e, int s)
{
    for (int r = 0; r < e->n; r++)
        if (e->blocked_at[r] == s && e->slots[s].track.included[r] >= e->blocked_need[r]) reblock(e, r);
}

/* Rank r's caller waits for its deposit `count` on the slot of track t. */
static void waits_for(sc_engine *e, sc_track *t, int r, long count)
{
    if (count <= t->waits_upto[r]) return;
    t->waits_upto[r] = count;
    if (e->blocked_at[r] < 0) reblock(e, r);
}

/* A stall in a tolerant mode (nothing announced for the stall time while
 * ranks wait): a rank still computing that has made at least as many calls
 * as some waiting rank is taken to be blocked in a call starcoll cannot
 * see, as if it had said AWAY, until it next says anything.  Such a call
 * (a receive, a Fortran binding's PMPI_ call) held the fast ranks that had
 * finished their steps while the straggler's last rounds needed them: the
 * rule closed a few rounds below the quorum, then the staleness bound held
 * the next ones for those ranks, and the job never ended.  A rank behind
 * every waiting rank is not presumed: it may be computing, and the
 * staleness bound keeps waiting for it (DESIGN.md, invariant 3). */
static void presume_outside(sc_engine *e)
{
    long least = -1;   /* calls made by the waiting rank least far on */
    for (int r = 0; r < e->n; r++)
        if (e->blocked_at[r] >= 0 && (least < 0 || e->last_pos[r] < least)) least = e->last_pos[r];
    for (int r = 0; r < e->n; r++)
        if (!e->gone[r] && e->blocked_at[r] == -1 && !e->outside[r] && e->last_pos[r] >= least) {
            e->outside[r] = e->presumed[r] = 1;
            reblock(e, r);
        }
}

static void apply_note(sc_engine *e, int src, const long *note)
{
    int who = note[NOTE_FOR] >= 0 ? (int)note[NOTE_FOR] : src;
    if (who < 0 || who >= e->n) return;
    /* heard from: where it is, its notices say (not its engine thread's) */
    if (e->presumed[who] && note[0] != NOTE_STALLED && note[0] != NOTE_CROWD) {
        e->presumed[who] = 0;
        if (!e->in_direct[who]) e->outside[who] = 0;
        reblock(e, who);
    }
    if (note[0] == NOTE_DEPOSIT && note[NOTE_POS] + 1 > e->last_pos[who]) e->last_pos[who] = note[NOTE_POS] + 1;
    if (note[0] == NOTE_DEPOSIT) {
        if (note[1] < 0 || note[1] >= e->nslots) return;
        sc_track *t = &e->slots[note[1]].track;
        if (note[3] & NOTE_COUNT_ONLY) {
            sc_track_counted(t, who, note[2]);
        } else if (note[3] & NOTE_WAIT_ONLY) {
            /* A child waits for a round holding a deposit its parent
             * announced: blocked there, so a round it waits for may excuse
             * ranks blocked in another communicator's call (without this,
             * two communicators whose small tensors were all fused
             * deadlocked: the children waited on one, unseen, for ring
             * members blocked on the other). */
            waits_for(e, t, who, note[2]);
        } else {
            /* A deposit counts from its owner under the current topology:
             * a member itself, a child through its parent, held under this
             * epoch.  Anything else is from before a topology change; the
             * owner announces it again.  The epoch matters where a child
             * keeps its parent across a change: the parent dropped what it
             * held at the change, and a round counting its word from before
             * claimed calls nobody summed (a lost step). */
            if (note[NOTE_FOR] >= 0 ? e->parent[who] != src || note[NOTE_EPOCH] != e->epoch : e->parent[who] != -1)
                return;
            sc_track_announce(t, who, note[2], (int)(note[3] & NOTE_KIND_FLAGS));
            if (note[3] & NOTE_WAITS) waits_for(e, t, who, note[2]);
        }
    } else if (note[0] == NOTE_AWAY || note[0] == NOTE_DIRECT || note[0] == NOTE_OFF) {
        /* A rank gone direct deposits nothing until it comes back: rounds
         * left over from the switch (a later slot's deposit of a rank that
         * was behind) must not wait for it.  Nor do they wait for a rank
         * blocked until the verdict on its call off the pattern. */
        if (note[0] == NOTE_DIRECT) e->in_direct[who] = 1;
        if (note[0] == NOTE_OFF) {
            e->off_pos[who] = note[NOTE_POS];
            e->off_shape[who] = note[NOTE_COUNT];
            e->noff++;
        }
        e->outside[who] = 1;
        reblock(e, who);
    } else if (note[0] == NOTE_BACK || note[0] == NOTE_ROUNDS) {
        if (note[0] == NOTE_ROUNDS) e->in_direct[who] = 0;
        if (!e->in_direct[who]) e->outside[who] = 0;
        reblock(e, who);
    } else if (note[0] == NOTE_STALLED) {
        sc_stall_alarm(e, who, (double)note[NOTE_COUNT] * 1e-3);
    } else if (note[0] == NOTE_CROWD) {
        sc_crowd_heard(e, who, note[NOTE_COUNT]);
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

int sc_coord_drain_notes(sc_engine *e)
{
    int got = 0, src;
    long note[NOTE_LEN];
    while (sc_recv_next(e->ctrl, TAG_NOTE, MPI_LONG, note, NOTE_LEN, &src) == 1) {
        apply_note(e, src, note);
        /* The watchdog's notes say that nothing moves: not progress, or
         * they would put off the rule that ends a stall (below).  Nor are
         * a rank's comings and goings on other communicators: a rank that
         * goes on there while rounds here wait (for a rank held there)
         * sends them at every call, and once put that rule off for 46 s. */
        if (note[0] != NOTE_STALLED && note[0] != NOTE_AWAY && note[0] != NOTE_BACK && note[0] != NOTE_CROWD)
            e->last_note_t = sc_now();
        e->last_activity = sc_now();
        got = 1;
    }
    double feat[SC_NFEAT];
    while (sc_recv_next(e->ctrl, TAG_FEAT, MPI_DOUBLE, feat, SC_NFEAT, &src) == 1) {
        sc_decider_observe(e->decider, src, feat);
        got = 1;
    }
    return got;
}

int sc_send_round(sc_engine *e, long kind, int s, sc_mode mode, int k, const long *tail, long fresh, long seq)
{
    e->msg[RH_FRESH] = fresh;
    e->msg[RH_SEQ] = seq;
    e->msg[RH_DIRECT] = kind == ROUND_RUN ? e->round_direct : 0;
    e->msg[RH_POLL] = e->polled;
    e->msg[RH_KIND] = kind;
    e->msg[RH_SLOT] = s;
    e->msg[RH_MODE] = mode;
    e->msg[RH_K] = k;
    e->msg[RH_EPOCH] = e->epoch;
    memcpy(e->msg + RH_LEN, tail, sizeof(long) * (size_t)e->n);
    for (int r = 0; r < e->n; r++) {
        if (r == e->rank || (kind == ROUND_RUN && e->parent[r] != -1)) continue;
        int len = RH_LEN + e->n;
        if (kind == ROUND_TOPO) {   /* and what of r's deposits is included already, and the rounds, per slot */
            for (int sl = 0; sl < e->nslots; sl++) {
                e->msg[RH_LEN + e->n + sl] = e->slots[sl].track.included[r];
                e->msg[RH_LEN + e->n + e->nslots + sl] = e->slots[sl].seq_closed;
            }
            len += 2 * e->nslots;
        }
        int rc = PMPI_Send(e->msg, len, MPI_LONG, r, TAG_ROUND, e->ctrl);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* Close slot s's round: bookkeeping, round message to the members, and
 * this rank's part of the reduction. */
static int close_round(sc_engine *e, int s, sc_rules *rules, sc_mode mode, int k)
{
    sc_track *tr = &e->slots[s].track;
    /* Said by the coordinator, whichever rank that is, once per engine: a
     * process coordinating two stalled communicators names both. */
    if (rules->relax_quorum && !e->relaxed++) {
        char comm_name[64];
        sc_say(-1, 1, "starcoll: %s: tolerant rounds made no progress for %.0f s while ranks waited (ranks "
               "blocked in a call starcoll cannot see, or not running at all on a loaded machine); closing rounds below "
               "the quorum to go on%s", sc_comm_label(e, comm_name, sizeof comm_name), sc_now() - e->last_note_t,
               sc_exact_mode(mode) ? ""   /* rounds of an exact mode presume nobody away (the coordinator loop) */
                                   : "; silent ranks level with or past a waiting rank count as away until they next call");
        if (sc_rt.policy.verbose >= 2) sc_stall_books(e, 0);
    }
    int flushing = sc_track_flushing(tr);
    long deposits = 0;
    memcpy(e->prev_incl, tr->included, sizeof(long) * (size_t)e->n);
    for (int r = 0; r < e->n; r++) deposits -= tr->included[r];
    int fresh = sc_round_close(tr, rules, e->incl);
    for (int r = 0; r < e->n; r++) deposits += e->incl[r];
    if (!rules->relax_quorum && fresh < rules->k)   /* below the quorum for want of ranks presumed outside */
        for (int r = 0; r < e->n; r++)
            if (e->presumed[r]) {
                e->relaxed++;
                break;
            }
    /* Going direct: only from a slot-0 round that includes a waiting
     * (exact) deposit of every rank, so every rank learns the switch before
     * its next call and all switch at the same one.  And only with equal
     * call counts: direct steps are plain collectives, matched by program
     * point, so a rank still calls behind the others would leave them
     * blocked (in an exact collective of the application's, say) where
     * rounds would go on without it; equal positions too (identity.h),
     * since ranks whose calls disagreed once stay a call apart.  And only
     * with no other slot holding a deposit no round has included yet (a
     * late call's, from the tolerant spell): no round of that slot would
     * close while the steps run direct, and it would be lost if the job
     * ended so.  Until then the exact mode runs as rounds (see catch_up). */
    e->round_direct = 0;
    int others_drained = 1;
    for (int o = 1; o < e->nslots && others_drained; o++) others_drained = !sc_track_has_news(&e->slots[o].track);
    if (s == 0 && others_drained && e->pending_direct != SC_NMODES && mode == e->pending_direct) {
        int all_wait = 1;
        for (int r = 0; r < e->n && all_wait; r++) {
            /* a departed rank could not join the direct steps that follow */
            if (e->gone[r]) {
                all_wait = 0;
                break;
            }
            all_wait = e->incl[r] > e->prev_incl[r] && tr->exact_upto[r] == e->incl[r] && e->parent[r] == -1 &&
                       e->incl[r] == e->incl[0] && e->last_pos[r] == e->last_pos[0];
        }
        if (all_wait) {
            e->round_direct = 1;
            e->pending_direct = SC_NMODES;
            pthread_mutex_lock(&e->mu);
            e->direct_at = e->incl[e->rank] + 1;
            e->direct_polled_at = e->polled;   /* as the round message says */
            pthread_mutex_unlock(&e->mu);
        }
    }
    if (!flushing && !rules->relax_quorum && !rules->excuse_blocked && !sc_exact_mode(mode) &&
        mode != SC_MODE_GROUPS && (e->stats.min_fresh < 0 || fresh < e->stats.min_fresh))
        e->stats.min_fresh = fresh;
    if (tr->max_absent > e->stats.max_staleness) e->stats.max_staleness = tr->max_absent;
    sc_coord_reblock_after(e, s);
    long seq = ++e->slots[s].seq_closed;
    int rc = sc_send_round(e, ROUND_RUN, s, mode, k, e->incl, deposits, seq);
    if (sc_engine_failed(e, rc)) return rc;
    sc_run_round(e, s, e->incl, deposits, mode, k, seq, e->polled);
    double tn = sc_now();
    /* A round the stall rule closed measures the stall, not the step: were
     * it counted, the period would jump tenfold and the rule (100 periods)
     * would not fire again for minutes while the same rank stays away. */
    if (e->last_round_t > 0 && !rules->relax_quorum) {
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
    int rc = sc_send_round(e, ROUND_TOPO, 0, mode, k, parent, 0, 0);
    if (rc != MPI_SUCCESS) return rc;
    long *mine = malloc(sizeof(long) * (size_t)e->nslots);
    if (!mine) return MPI_ERR_NO_MEM;
    for (int s = 0; s < e->nslots; s++) mine[s] = e->slots[s].track.included[e->rank];
    rc = sc_groups_apply(e, parent, e->epoch, mine, NULL);
    free(mine);
    return rc;
}


/* The verdict for rank r's off-pattern call: to its engine thread, or
 * straight to this rank's application thread. */
static int send_verdict(sc_engine *e, int r, sc_off_verdict v, int other)
{
    e->off_pos[r] = -1;
    e->noff--;
    if (r == e->rank) {
        pthread_mutex_lock(&e->mu);
        e->verdict = (int)v;
        e->verdict_rank = other;
        pthread_cond_broadcast(&e->cv_main);
        pthread_mutex_unlock(&e->mu);
        return MPI_SUCCESS;
    }
    long msg[RH_LEN] = {0};
    msg[RH_KIND] = ROUND_VERDICT;
    msg[RH_SLOT] = v;
    msg[RH_K] = other;
    return PMPI_Send(msg, RH_LEN, MPI_LONG, r, TAG_ROUND, e->ctrl);
}

/* Calls off the pattern (DESIGN.md, "Identity of a call").  A rank's call
 * at position p is off; once another rank is known to have made an
 * on-pattern call at p, the off call is one that rank does not make:
 * rejected.  Once every rank is off at p with the same shape, it is a
 * stray call they all make: each runs it exact.  Otherwise wait for the
 * ranks behind.  Every rank's deposits carry their positions, so this
 * needs no collective. */
static int judge_off(sc_engine *e)
{
    if (e->noff <= 0) return 0;
    int moved = 0;
    for (int r = 0; r < e->n; r++) {
        long p = e->off_pos[r];
        if (p < 0) continue;
        int ahead = -1, all_off = 1, differs = -1;
        for (int q = 0; q < e->n; q++) {
            if (q == r) continue;
            if (e->gone[q]) {
                differs = q;   /* a rank that left cannot make the call */
                continue;
            }
            if (e->last_pos[q] > p) ahead = q;
            if (e->off_pos[q] != p) all_off = 0;
            else if (e->off_shape[q] != e->off_shape[r]) differs = q;
        }
        int rc = MPI_SUCCESS;
        if (ahead >= 0) {
            rc = send_verdict(e, r, SC_OFF_REJECT, ahead);
        } else if (all_off) {
            sc_off_verdict v = differs < 0 ? SC_OFF_STRAY : SC_OFF_REJECT;
            for (int q = 0; q < e->n && rc == MPI_SUCCESS; q++)
                if (e->off_pos[q] == p) rc = send_verdict(e, q, v, differs >= 0 ? differs : r);
        } else {
            continue;
        }
        moved = 1;
        if (sc_engine_failed(e, rc)) return 1;
    }
    return moved;
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
    /* A catch-up was for going direct; tolerant, the ranks behind make the
     * calls it waits for fused when slot 0 is a small tensor, and a flush
     * of its own slot would wait for them forever (the soak with two
     * communicators hung so). */
    if (!sc_exact_mode(mode)) sc_track_cancel_catch_up(&e->slots[0].track);
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
    if (sc_track_flushing(tr)) return;
    long lo = -1, hi = -1;
    for (int r = 0; r < e->n; r++) {
        int waits_exact = tr->announced[r] > tr->included[r] && tr->exact_upto[r] == tr->announced[r];
        if (e->gone[r] || e->parent[r] != -1 || !waits_exact) return;
        if (lo < 0 || tr->announced[r] < lo) lo = tr->announced[r];
        if (tr->announced[r] > hi) hi = tr->announced[r];
    }
    if (hi > lo && hi - lo <= SC_CATCH_UP_MAX) sc_track_catch_up(tr, hi);
}

void sc_coordinator_loop(sc_engine *e)
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
        int progressed = sc_coord_drain_notes(e);
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
        if (rules.relax_quorum && !sc_exact_mode(mode)) presume_outside(e);
        /* First pass by the plain rules; a second pass excuses ranks
         * blocked in other rounds, only when nothing could close at all. */
        int closed = 0;
        for (int pass = 0; pass < 2 && !closed; pass++) {
            rules.excuse_blocked = pass;
            for (int i = 0; i < e->nslots; i++) {
                int s = (rr + i) % e->nslots;
                double w;
                rules.slot = s;
                /* Deposits no other rank will join (engine_fusion.c): a
                 * group's in an exact mode, a member's own slot's in a
                 * tolerant one (a rank that saw the exact mode late). */
                rules.drain = sc_exact_mode(mode) ? e->slots[s].nmembers > 0 : e->slots[s].fuse >= 0;
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
        progressed |= judge_off(e);
        progressed |= sc_stall_progress(e);
        progressed |= sc_crowd_progress(e);
        if (e->ngone == e->n) {
            int news = 0;
            for (int s = 0; s < e->nslots; s++) news |= sc_track_has_news(&e->slots[s].track);
            if (!news) {
                memset(e->incl, 0, sizeof(long) * (size_t)e->n);
                for (int r = 0; r < e->n; r++) e->parent[r] = -1;   /* STOP goes to everybody */
                sc_send_round(e, ROUND_STOP, 0, mode, k, e->incl, 0, 0);
                sc_stop_traffic(e);
                goto out;
            }
        }
        if (progressed) {
            nap = 20e-6;
            continue;
        }
        if (sc_engine_idle(e, &nap, wake > 0 ? wake - t : -1)) goto out;
    }
out:
    free(member);
    free(newparent);
}

/* ---- engine thread: any other rank ------------------------------------- */
