#include "round_rules.h"
#include <stdlib.h>
#include <string.h>

int sc_track_init(sc_track *t, int n)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->announced = calloc((size_t)n, sizeof(long));
    t->included = calloc((size_t)n, sizeof(long));
    t->absent = calloc((size_t)n, sizeof(int));
    t->exact_upto = calloc((size_t)n, sizeof(long));
    t->waits_upto = calloc((size_t)n, sizeof(long));
    t->counted = calloc((size_t)n, sizeof(long));
    t->quorum_since = -1;
    if (!t->announced || !t->included || !t->absent || !t->exact_upto || !t->waits_upto || !t->counted) {
        sc_track_free(t);
        return -1;
    }
    return 0;
}

void sc_track_free(sc_track *t)
{
    free(t->announced);
    free(t->included);
    free(t->absent);
    free(t->exact_upto);
    free(t->waits_upto);
    free(t->counted);
    t->announced = t->included = t->exact_upto = t->waits_upto = t->counted = NULL;
    t->absent = NULL;
}

void sc_track_announce(sc_track *t, int r, long count, int flags)
{
    if (r < 0 || r >= t->n) return;
    if (count > t->announced[r]) t->announced[r] = count;
    if ((flags & SC_DEP_FLUSH) && count > t->flush_upto) t->flush_upto = count;
    if ((flags & SC_DEP_FLUSH) && count > t->flush_asked) t->flush_asked = count;
    if ((flags & (SC_DEP_FLUSH | SC_DEP_EXACT)) && count > t->exact_upto[r]) t->exact_upto[r] = count;
}

void sc_track_counted(sc_track *t, int r, long count)
{
    if (r >= 0 && r < t->n && count > t->counted[r]) t->counted[r] = count;
}

int sc_track_has_news(const sc_track *t)
{
    for (int i = 0; i < t->n; i++)
        if (t->announced[i] > t->included[i]) return 1;
    return 0;
}

static int gone(const sc_rules *r, int i) { return r->gone && r->gone[i]; }
static int counts(const sc_rules *r, int i) { return !r->member || r->member[i]; }
static int blocked_elsewhere(const sc_rules *r, int i)
{
    return r->blocked_at && (r->blocked_at[i] == SC_BLOCKED_OUTSIDE || (r->blocked_at[i] >= 0 && r->blocked_at[i] != r->slot));
}

void sc_track_catch_up(sc_track *t, long count)
{
    if (count > t->flush_upto) t->flush_upto = count;
}

void sc_track_cancel_catch_up(sc_track *t)
{
    if (t->flush_upto > t->flush_asked) t->flush_upto = t->flush_asked;
}

int sc_track_flushing(const sc_track *t)
{
    return t->flush_upto != 0;
}

/* Every active rank has made as many calls as the flush deposit's count.
 * A count, not each rank's own flush deposit: MPI_Pcontrol is a local call,
 * and a flush one rank alone asked for must not wait for the others'. */
static int flush_complete(const sc_track *t, const sc_rules *r)
{
    for (int i = 0; i < t->n; i++)
        if (!gone(r, i) && t->announced[i] < t->flush_upto && t->counted[i] < t->flush_upto) return 0;
    return 1;
}

/* How far a round may include rank i's deposits while a flush caps them
 * at `cap` (< 0: no cap).  A member's deposits are one call each, cut
 * anywhere.  A child's reach its parent as sums over runs of calls (what
 * accumulated while its link was busy, engine_groups.c), announced by
 * their ends, and the parent can only take a run whole: a round counted up
 * to a cap inside a run summed none of it, and at the next topology
 * change the parent dropped the run and the child the calls the round
 * claimed, so a step of a child's gradients was lost.  A child past the
 * cap therefore waits whole for the flush round, which includes everything;
 * meanwhile it is held, not absent: its deposits are all announced, and the
 * staleness bound, which waits for ranks still computing, must not wait
 * for it (the flush round would then never come). */
static int held_whole(const sc_track *t, const sc_rules *r, int i, long cap)
{
    return cap >= 0 && t->announced[i] > cap && !counts(r, i);
}

static long capped(const sc_track *t, const sc_rules *r, int i, long cap)
{
    long a = t->announced[i];
    if (cap < 0 || a <= cap) return a;
    return held_whole(t, r, i, cap) ? t->included[i] : cap;
}

/* While a flush is pending, ranks that have not reached it yet still get
 * rounds of their deposits before the flush (the flushing ranks wait and
 * deposit nothing new); the flush round proper closes once every active
 * rank has made as many calls. */
static sc_verdict flush_verdict(const sc_track *t, const sc_rules *r)
{
    if (flush_complete(t, r)) return sc_track_has_news(t) ? SC_CLOSE : SC_WAIT;
    int news = 0;
    long cap = t->flush_upto - 1;   /* as sc_round_close counts while the flush is pending */
    for (int i = 0; i < t->n; i++) {
        int is_fresh = capped(t, r, i, cap) > t->included[i];
        news |= is_fresh;
        /* the staleness bound holds here too, for ranks still computing */
        int blocked = r->blocked_at && r->blocked_at[i] != -1;
        if (!is_fresh && !blocked && !gone(r, i) && !held_whole(t, r, i, cap) && t->absent[i] >= r->staleness)
            return SC_WAIT;
    }
    return news ? SC_CLOSE : SC_WAIT;
}

sc_verdict sc_round_verdict(sc_track *t, const sc_rules *r, double now, double *wake_s)
{
    *wake_s = -1;
    if (sc_track_flushing(t)) return flush_verdict(t, r);
    if (r->drain) return sc_track_has_news(t) ? SC_CLOSE : SC_WAIT;
    /* Only a round somebody waits for may excuse ranks blocked elsewhere
     * (they cannot deposit here before their own round closes), and only
     * when the caller says no round can close otherwise. */
    int waiter = 0;
    for (int i = 0; i < t->n && r->blocked_at; i++) waiter |= r->blocked_at[i] == r->slot;
    int fresh = 0, active = 0, all_in = 1;
    for (int i = 0; i < t->n; i++) {
        if (gone(r, i)) continue;
        int is_fresh = t->announced[i] > t->included[i];
        if (!is_fresh && r->excuse_blocked && waiter && blocked_elsewhere(r, i)) continue;
        /* Bounded staleness: a rank left out of `staleness` rounds in a
         * row is waited for before another round closes without it. */
        if (!is_fresh && t->absent[i] >= r->staleness) return SC_WAIT;
        if (!counts(r, i)) continue;
        active++;
        fresh += is_fresh;
        all_in &= is_fresh;
    }
    if (active == 0) return sc_track_has_news(t) ? SC_CLOSE : SC_WAIT;   /* only departed ranks' leftovers */
    int k = r->k < active ? r->k : active;
    if (k < 1) k = 1;
    /* The stall rule closes on any fresh deposit, a child's too: children
     * count toward no quorum, yet a stall where only a child's deposit is
     * new (its ring members blocked elsewhere or unseen) is still one. */
    if (fresh < k && r->relax_quorum && waiter && sc_track_has_news(t)) return SC_CLOSE;
    if (fresh < k) {
        t->quorum_since = -1;
        return SC_WAIT;
    }
    if (all_in) return SC_CLOSE;
    if (t->quorum_since < 0) t->quorum_since = now;
    double deadline = t->quorum_since + r->grace_s;
    if (now >= deadline) return SC_CLOSE;
    *wake_s = deadline;
    return SC_WAIT;
}

int sc_round_close(sc_track *t, const sc_rules *r, long *incl)
{
    int fresh = 0;
    /* A pending flush holds back the flush deposits until all are in. */
    long cap = t->flush_upto && !flush_complete(t, r) ? t->flush_upto - 1 : -1;
    for (int i = 0; i < t->n; i++) {
        long upto = capped(t, r, i, cap);
        if (upto < t->included[i]) upto = t->included[i];
        int is_fresh = upto > t->included[i];
        fresh += is_fresh;
        /* Staleness counts rounds a rank misses while it computes; a rank
         * blocked in a round (here or elsewhere) or gone misses nothing,
         * nor does one left out of a drain (deposits no other rank will
         * join: a round it could not have been in), nor a child held whole
         * for a flush (capped). */
        int blocked = r->blocked_at && r->blocked_at[i] != -1;
        if (is_fresh || gone(r, i)) t->absent[i] = 0;
        else if (!blocked && !r->drain && !held_whole(t, r, i, cap) && ++t->absent[i] > t->max_absent)
            t->max_absent = t->absent[i];
        t->included[i] = upto;
        incl[i] = upto;
    }
    if (t->flush_upto && cap < 0) t->flush_upto = t->flush_asked = 0;
    t->rounds++;
    t->fresh_total += fresh;
    t->quorum_since = -1;
    return fresh;
}
