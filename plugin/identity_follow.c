/* Call identity after learning: each call mapped to its slot by its
 * position, calls off the pattern, and what this rank's buffers show of
 * tensors in turn or moved (identity.h). */
#include "identity_internal.h"

/* After learning, on a rank whose buffers were its own and steady: a
 * slot's call in a buffer not its learned one is away; back in the learned
 * one after a time away in the same buffer as the time before is a turn
 * (sc_id_buffer_turned's rule).  Away in two buffers in one go means the
 * rank's buffers are not kept per tensor after all: it stops watching. */
static void watch_buffer(sc_identity *id, int s, uint64_t where)
{
    if (where == id->slot_where[s]) {
        if (id->slot_away[s]) {
            if (id->slot_away[s] == id->slot_last_away[s] && !id->turns_since++) id->turn_slot = s;
            id->slot_last_away[s] = id->slot_away[s];
            id->slot_away[s] = 0;
        }
    } else if (!id->slot_away[s]) {
        id->slot_away[s] = where;
    } else if (id->slot_away[s] != where) {
        id->watch = 0;
    }
}

/* The offset d (0 < d < nslots) of the first slot after s, cyclically,
 * whose buffer in bufs (slot_where or slot_now) is `where`, of s's shape;
 * 0 for none (a buffer of no other slot of this step). */
static int slot_holding(const sc_identity *id, const uint64_t *bufs, int s, uint64_t where)
{
    int n = id->nslots;
    for (int d = 1; d < n; d++) {
        int o = (s + d) % n;
        if (bufs[o] == where && id->slot_shape[o] == id->slot_shape[s]) return d;
    }
    return 0;
}

/* After learning, on a rank whose buffers were its own per slot: a whole
 * step of calls, each in the buffer of the slot d on (d > 0, the same
 * shape), is a step the calls moved d slots through (a gradient left out
 * of one step, on every rank alike: an unused parameter).  Where no shape
 * and no per-step call shows it, nothing all ranks see does, so it is only
 * counted (sc_identity_moves); then the slots are watched from where they
 * are now, so that a second such step shows too. */
static void watch_moves(sc_identity *id, int s, uint64_t where)
{
    int n = id->nslots, d = id->move_d;
    if (where == id->slot_where[s]) {
        id->move_run = 0;
        return;
    }
    if (d == 0 || id->slot_where[(s + d) % n] != where) {
        d = id->move_d = slot_holding(id, id->slot_where, s, where);
        id->move_run = 0;
        if (d == 0) return;   /* not a buffer of this step's: another model's in turn, or fresh */
    }
    if (++id->move_run < n) return;
    id->moves++;
    id->moved_by = d;
    id->move_run = 0;
    id->move_d = 0;
    for (int j = 0; j < n; j++) {   /* slot_now holds the step just made */
        id->slot_where[j] = id->slot_now[j];
        id->slot_away[j] = id->slot_last_away[j] = 0;
    }
}

/* A call on slot s's shape whose buffer, on a rank that has kept a
 * buffer per tensor since learning, is another slot's of the same shape
 * (sc_identity_off_moved).  The search runs at most once a pattern: a
 * call in a buffer not its slot's ends `kept`, whether it goes off or is
 * taken on its slot. */
static int moved_here(const sc_identity *id, int s, uint64_t where)
{
    return id->watch_moves && id->kept && where != id->slot_now[s] && slot_holding(id, id->slot_now, s, where) > 0;
}

sc_id_kind sc_identity_next(sc_identity *id, const sc_call_key *k, int *slot)
{
    *slot = -1;
    id->off_moved = 0;
    if (!id->learned) return SC_ID_LEARNING;
    if (!k->eligible) {
        for (int m = 0; m < id->nmarkers; m++)
            if (id->markers[m] == k->shape) {
                /* the unit's gradients since the marker before (a step's
                 * where it has one marker; fewer where small biases under
                 * STARCOLL_MIN_BYTES sit among the gradients), or the
                 * position no longer says which tensor is which: told
                 * apart by the marker alone, learn again; by shapes, calls
                 * took slots of a step they were not (another model's in
                 * turn whose shapes line up after a stray call) and only
                 * the count tells.  None since is a step of no gradient
                 * (a validation pass's loss per batch): nothing moved */
                if (id->seen_marker && id->since_marker != id->marker_gap[m] && id->since_marker > 0) {
                    if (id->marker_dependent) id->shifted = 1;
                    else {
                        id->misaligned++;
                        if (id->off_foreign) id->foreign++;
                    }
                }
                id->seen_marker = 1;
                id->since_marker = 0;
                id->off_foreign = 0;
                id->shift_next = -1;
            }
        return SC_ID_PASS;
    }
    if (id->nslots == 0) return SC_ID_OFF;
    int s = (int)(id->pos % id->nslots);
    *slot = s;
    if (id->shifted) return SC_ID_OFF;
    if (id->slot_shape[s] != k->shape) {
        /* after a gradient left out, the calls off the pattern are the
         * slots after it, in order (past the last: the next step's first,
         * where the step's last one was left out); any other is another
         * model's */
        int t = (id->shift_next >= 0 ? id->shift_next : s + 1) % id->nslots;
        if (id->slot_shape[t] == k->shape) id->shift_next = t + 1;
        else id->off_foreign = 1;
        return SC_ID_OFF;
    }
    if (moved_here(id, s, k->where)) {
        id->off_moved = 1;
        return SC_ID_OFF;
    }
    if (id->watch) watch_buffer(id, s, k->where);
    if (k->where != id->slot_now[s]) id->kept = 0;
    id->slot_now[s] = k->where;
    if (id->watch_moves) watch_moves(id, s, k->where);
    id->pos++;
    id->miss_streak = 0;
    id->since_marker++;
    return SC_ID_SLOT;
}

int sc_identity_off_moved(const sc_identity *id) { return id->off_moved; }

sc_off_verdict sc_identity_settle(sc_identity *id, sc_off_verdict v)
{
    if (id->off_moved) {
        id->off_moved = 0;
        if (v == SC_OFF_STRAY) return SC_OFF_RELEARN;
        id->kept = 0;   /* its buffers are no longer its own per slot: asked again, the call is on its slot */
        return SC_OFF_ON;
    }
    if (v == SC_OFF_STRAY && (id->shifted || ++id->miss_streak > id->nslots)) v = SC_OFF_RELEARN;
    return v;
}
