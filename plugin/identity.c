/* Call identity: learning the step's unit from shapes, the address hint,
 * the agreed pattern and the position of each call in it (identity.h). */
#include "identity.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_HIST_CAP (3 * SC_STEP_MAX)   /* calls remembered while learning */
/* The last SC_STEP_MAX calls' shapes and addresses once more (in 32-bit
 * halves), each stored twice (at j and j + SC_RECENT), so the calls 1 to
 * SC_STEP_MAX back lie in one run of memory: the vote compares each with
 * the new call, and that scan, through sc_call_key's 48 bytes with a
 * modulo and a branch per call, was most of a learning call's cost (perf:
 * 35% of the Intel MPI Benchmarks' Allreduce time at 256 B). */
#define SC_RECENT (SC_STEP_MAX + 1)
#define SC_MARKERS_MAX 8

struct sc_identity {
    /* learning: a ring of the calls since learning began, and per lag L
     * the number of consecutive recent calls equal to the call L back */
    int learned;
    sc_call_key *hist;
    long nhist;
    uint32_t *recent;   /* shape low, high, address low, high halves: 2 * SC_RECENT each */
    int *run_shape, *run_where;           /* committed */
    int *next_shape, *next_where;         /* with the call being voted on */
    double *scratch;                      /* SC_STEP_MAX values */
    int voting;                           /* a vote is pending decide */
    long first_gradient;                  /* the first call that is or may be a gradient, -1 none yet */
    /* the agreed pattern */
    int nslots;
    uint64_t *slot_shape;
    long *slot_count;
    int *slot_dkind;
    int trusted;
    char why[400];
    char how[400];             /* how the step's length was found, for STARCOLL_VERBOSE */
    long pos;
    int miss_streak;
    long relearns;
    /* a pattern told apart only by ineligible calls */
    int marker_dependent;
    uint64_t markers[SC_MARKERS_MAX];
    int marker_gap[SC_MARKERS_MAX];     /* eligible calls from the marker before, around the unit */
    int marker_slot;                    /* the slot after markers[0] (sc_identity_marker_slot), -1 none */
    int nmarkers;
    long since_marker;
    int seen_marker, shifted;
    /* a pattern told apart by shapes, with a per-step call: steps whose
     * calls between two such calls were on the pattern, but not a whole
     * step of it (sc_identity_misaligned); of them, steps that also held
     * a call off the pattern that no gradient left out explains (another
     * model's tensor: sc_identity_foreign) */
    long misaligned, foreign;
    int off_foreign;           /* such a call since the last per-step call */
    int shift_next;            /* the slot a call off the pattern is after a gradient left out, -1 none since */
    /* two tensors in turn at one place (sc_identity_turns_since) */
    int turned;                /* while learning: this rank saw one */
    int steady;                /* while learning: this rank's buffers were its own and steady once */
    int watch;                 /* after learning: this rank's buffers were its own, the same every unit */
    uint64_t *slot_where;      /* ... each slot's buffer then */
    uint64_t *slot_now;        /* each slot's buffer at its latest call (its learned one before), 0 unknown */
    int kept;                  /* this rank's buffers are its own per slot, the same at every call since learning */
    /* Which pattern this is: the relearn count when it was learned (a
     * resumed one keeps it), and its slot j is slot (j + rot) mod n of the
     * pattern as learned then.  The same on every rank. */
    long lineage;
    int rot;
    /* The trusted pattern dropped last, resumed where it left off when the
     * calls since continue it for a step and SC_RESUME_EXTRA calls more
     * (continues_cache): a model trained in turn with another (a GAN's
     * critic) comes back to its own step, and the late results owed to it
     * are paid by position. */
    int cache_n;               /* 0: none */
    uint64_t *cache_shape, *cache_where;
    long *cache_count;
    int *cache_dkind;
    int cache_next;            /* the slot it expected next */
    int cache_rot, cache_kept;
    long cache_lineage;
    char cache_how[300];
    long cache_match;          /* eligible calls since that continue it, in a row */
    uint64_t *slot_away;       /* the buffer it is away in, 0 while it is in its own */
    uint64_t *slot_last_away;  /* the buffer of its last time away, 0 none */
    long turns_since;
    int turn_slot;
    /* every slot's buffer the buffer of the slot move_d on, for move_run
     * calls in a row (watch_moves); moves: whole steps seen so, over every
     * pattern (never reset), the last by moved_by slots */
    int watch_moves, move_d, moved_by;
    long move_run, moves;
    /* the last off call was a moved one (sc_identity_off_moved) */
    int off_moved;
    /* the unit and length the step would have had when only the wait for
     * turns held it: the wait delays the step, never lengthens it */
    long ready_L, ready_M;
    char ready_how[400];
};

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t sc_shape_hash(long count, int type_code, int op_code, int eligible)
{
    uint64_t h = mix64((uint64_t)count);
    h = mix64(h ^ ((uint64_t)(uint32_t)type_code << 1));
    h = mix64(h ^ ((uint64_t)(uint32_t)op_code << 2));
    return mix64(h ^ (uint64_t)(eligible != 0)) & 0x3fffffffffffffffULL;   /* fits a long, and its negation */
}

uint64_t sc_where_hash(const void *sendbuf, const void *recvbuf)
{
    return mix64((uint64_t)(uintptr_t)(sendbuf ? sendbuf : recvbuf));
}

static void forget_history(sc_identity *id)
{
    id->learned = 0;
    id->nhist = 0;
    id->voting = 0;
    id->first_gradient = -1;
    memset(id->run_shape, 0, sizeof(int) * (SC_STEP_MAX + 1));
    memset(id->run_where, 0, sizeof(int) * (SC_STEP_MAX + 1));
    id->nslots = 0;
    id->trusted = 0;
    id->why[0] = '\0';
    id->pos = 0;
    id->miss_streak = 0;
    id->marker_dependent = 0;
    id->nmarkers = 0;
    id->marker_slot = -1;
    id->since_marker = 0;
    id->seen_marker = id->shifted = 0;
    id->misaligned = id->foreign = 0;
    id->off_foreign = 0;
    id->shift_next = -1;
    id->turned = id->steady = id->watch = id->kept = 0;
    id->turns_since = 0;
    id->turn_slot = -1;
    id->watch_moves = id->move_d = 0;
    id->move_run = 0;
    id->off_moved = 0;
    id->ready_L = id->ready_M = 0;
}

sc_identity *sc_identity_new(void)
{
    sc_identity *id = calloc(1, sizeof *id);
    if (!id) return NULL;
    id->hist = malloc(sizeof(sc_call_key) * SC_HIST_CAP);
    id->recent = calloc(8 * SC_RECENT, sizeof(uint32_t));   /* lags before the first call read it */
    id->run_shape = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->run_where = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->next_shape = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->next_where = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->slot_shape = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_count = malloc(sizeof(long) * SC_SLOTS_MAX);
    id->slot_dkind = malloc(sizeof(int) * SC_SLOTS_MAX);
    id->scratch = malloc(sizeof(double) * SC_STEP_MAX);
    id->slot_where = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_away = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_last_away = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_now = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->cache_shape = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->cache_where = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->cache_count = malloc(sizeof(long) * SC_SLOTS_MAX);
    id->cache_dkind = malloc(sizeof(int) * SC_SLOTS_MAX);
    if (!id->hist || !id->recent || !id->run_shape || !id->run_where || !id->next_shape || !id->next_where ||
        !id->slot_shape || !id->slot_count || !id->slot_dkind || !id->scratch || !id->slot_where || !id->slot_away ||
        !id->slot_last_away || !id->slot_now || !id->cache_shape || !id->cache_where || !id->cache_count ||
        !id->cache_dkind) {
        sc_identity_free(id);
        return NULL;
    }
    forget_history(id);
    return id;
}

void sc_identity_free(sc_identity *id)
{
    if (!id) return;
    free(id->hist);
    free(id->recent);
    free(id->run_shape);
    free(id->run_where);
    free(id->next_shape);
    free(id->next_where);
    free(id->slot_shape);
    free(id->slot_count);
    free(id->slot_dkind);
    free(id->scratch);
    free(id->slot_where);
    free(id->slot_away);
    free(id->slot_last_away);
    free(id->slot_now);
    free(id->cache_shape);
    free(id->cache_where);
    free(id->cache_count);
    free(id->cache_dkind);
    free(id);
}

static const sc_call_key *at(const sc_identity *id, long i)
{
    return &id->hist[i % SC_HIST_CAP];
}

static int need_matches(int L)
{
    /* 3 units (2 after the first), and never fewer than the minimum calls,
     * so a run of equal shapes inside a longer step (A A A B) is not taken
     * for a step of one */
    int window = 3 * L > SC_LEARN_MIN_CALLS ? 3 * L : SC_LEARN_MIN_CALLS;
    return window - L;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The unit of the last L of the first n calls: does it hold two shapes or
 * more, one of them once only?  Deterministic in the shapes, so every rank
 * answers the same. */
static int told_apart_by_shape(const sc_identity *id, long n, int L)
{
    uint64_t *s = malloc(sizeof(uint64_t) * (size_t)L);
    if (!s) return 0;
    for (int j = 0; j < L; j++) s[j] = at(id, n - L + j)->shape;
    qsort(s, (size_t)L, sizeof *s, cmp_u64);
    int distinct = 0, single = 0;
    for (int j = 0; j < L;) {
        int k = j;
        while (k < L && s[k] == s[j]) k++;
        distinct++;
        single |= k - j == 1;
        j = k;
    }
    free(s);
    return distinct >= 2 && single;
}

/* The ineligible calls of the last unit of U calls whose shape occurs once
 * in it (a per-step loss or metric: they mark where steps start): how many,
 * up to max, with their shapes in out when it is not NULL, in gap the
 * eligible calls from the marker before (the unit's last one for the
 * first) up to each, and in *before_first those before the first. */
static int unit_markers(const sc_identity *id, long n, int U, uint64_t *out, int *gap, int *before_first, int max)
{
    int found = 0, eligible = 0, total = 0, between = 0;
    for (int j = 0; j < U; j++) {
        const sc_call_key *c = at(id, n - U + j);
        if (c->eligible) {
            eligible++;
            total++;
            continue;
        }
        if (found == max) continue;
        int occurs = 0;
        for (int i = 0; i < U && occurs < 2; i++) occurs += at(id, n - U + i)->shape == c->shape;
        if (occurs == 1) {
            if (out) out[found] = c->shape;
            if (gap) gap[found] = eligible;
            if (found > 0) between += eligible;
            else if (before_first) *before_first = eligible;
            eligible = 0;
            found++;
        }
    }
    /* the first marker's: after the last one, around to it */
    if (gap && found > 0) gap[0] = total - between;
    return found;
}

/* A call that is surely no gradient (a loss, a count, a flag): neither
 * eligible nor, under the size floor, maybe a small gradient. */
static int is_value(const sc_call_key *c)
{
    return !c->eligible && !c->maybe_gradient;
}

/* The place in the unit (the last U of n calls) of its first value, a
 * call that is surely no gradient (a loss, a count, a flag), or -1: a unit
 * whose only calls off the slots may be small gradients
 * (sc_call_key.maybe_gradient, a narrow layer's bias) may be one of a
 * model's identical blocks, each holding its bias, and its marker would
 * make one block the step. */
static int first_value(const sc_identity *id, long n, int U)
{
    for (int j = 0; j < U; j++)
        if (is_value(at(id, n - U + j))) return j;
    return -1;
}

/* The unit (the last U of n calls) holds values, and each is a one-number
 * sum under the size floor (sc_call_key.one_number): a loss, or a
 * one-number parameter's gradient in every layer. */
static int values_one_number(const sc_identity *id, long n, int U)
{
    int values = 0;
    for (int j = 0; j < U; j++) {
        const sc_call_key *c = at(id, n - U + j);
        if (!is_value(c)) continue;
        if (!c->one_number) return 0;
        values++;
    }
    return values > 0;
}

/* Before the run of calls that repeat with the unit of L, since learning
 * began: a call that is or may be a gradient (a model's head before its
 * identical blocks; first_gradient, kept as calls commit, so no scan of
 * the history per call), or calls the history no longer holds.  A count
 * or a flag summed once at start is none. */
static int gradient_before_run(const sc_identity *id, int L)
{
    long end = id->nhist - id->run_shape[L] - L;   /* where the unit's first copy in the run starts */
    if (end <= 0) return 0;
    if (id->nhist > SC_HIST_CAP) return 1;
    return id->first_gradient >= 0 && id->first_gradient < end;
}

/* Every call of the unit (the last U of n calls) in a buffer of its own on
 * this rank: then buffers equal one unit back are the same tensors. */
static int own_buffers(const sc_identity *id, long n, int U)
{
    uint64_t *w = malloc(sizeof(uint64_t) * (size_t)U);
    if (!w) return 0;
    for (int j = 0; j < U; j++) w[j] = at(id, n - U + j)->where;
    qsort(w, (size_t)U, sizeof *w, cmp_u64);
    int distinct = 1;
    for (int j = 1; j < U && distinct; j++) distinct = w[j] != w[j - 1];
    free(w);
    return distinct;
}

/* The k-th smallest of m[0..n) (reorders m), in linear time on average. */
static double kth_smallest(double *m, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = m[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (m[i] < pivot) i++;
            while (m[j] > pivot) j--;
            if (i <= j) {
                double t = m[i];
                m[i++] = m[j];
                m[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return m[k];
}

/* The gap before call start + j dominates the unit of U calls from start:
 * at least 200 us, and twice any other gap of the unit. */
static int gap_dominates(const sc_identity *id, long start, int U, int j)
{
    double top = at(id, start + j)->gap, next = 0;
    for (int k = 0; k < U; k++)
        if (k != j && at(id, start + k)->gap > next) next = at(id, start + k)->gap;
    return top >= 200e-6 && top >= 2 * next;
}

/* This rank's gaps: over the last two units of U calls, one place of the
 * unit was preceded both times by a gap that dominates its unit (the
 * forward pass before a step's first gradient), and the smaller of the
 * two is three times the median place's.  Each unit on its own, not the
 * smaller gap at each place: a code's own work between calls (filling a
 * fresh buffer, longer before larger tensors) repeats with a model's
 * layers, and the work before one of GPT-2's large tensors, paired with
 * the true step gap one unit on, once passed for a step start every
 * three layers, putting tensors of different layers in one slot. */
static int step_gap_shows(const sc_identity *id, long n, int U)
{
    if (U < 2 || n < 2L * U) return 0;
    double *m = id->scratch, top = -1, next = -1;
    int place = 0;   /* of top */
    long ia = (n - 2L * U) % SC_HIST_CAP, ib = (n - U) % SC_HIST_CAP;   /* no modulo per call compared */
    for (int j = 0; j < U; j++, ia = ia + 1 == SC_HIST_CAP ? 0 : ia + 1, ib = ib + 1 == SC_HIST_CAP ? 0 : ib + 1) {
        double a = id->hist[ia].gap, b = id->hist[ib].gap;
        m[j] = a < b ? a : b;
        if (m[j] > top) {
            next = top;
            top = m[j];
            place = j;
        } else if (m[j] > next) {
            next = m[j];
        }
    }
    if (top < 200e-6 || top < 2 * next) return 0;
    if (!gap_dominates(id, n - 2L * U, U, place) || !gap_dominates(id, n - U, U, place)) return 0;
    return top >= 3 * kth_smallest(m, U, (U - 1) / 2);
}

/* The newest of n calls, an eligible one, back in its buffer X after one
 * unit in another, Y, which it had been in once before, a steady run of X
 * ago: Y X X.. X Y X at this place of the unit of L calls (the newest
 * last).  Two tensors of one shape in turn (a GAN's critic, then its
 * generator), which no shape shows.  Twice, and with the same Y: not the
 * buffers an allocator gives back every other step (X Y X Y), nor one that
 * moved for good or now and then by chance. */
static int buffer_turned(const sc_identity *id, long n, int L)
{
    if (L <= 0 || n < 5L * L + 1) return 0;
    const sc_call_key *c0 = at(id, n - 1), *c1 = at(id, n - 1 - L);
    if (!c0->eligible || c1->shape != c0->shape || c1->where == c0->where) return 0;
    int a = 0;   /* the run of X between the two Ys */
    for (long j = 2; j * L < n && j * L < SC_HIST_CAP; j++) {
        const sc_call_key *c = at(id, n - 1 - j * L);
        if (c->shape != c0->shape) return 0;
        if (c->where == c0->where) {
            a++;
            continue;
        }
        return a >= 2 && c->where == c1->where;
    }
    return 0;
}

/* The unit of L calls ending before call `end` in buffers of this rank's
 * own, each the same as one unit before. */
static int unit_steady_at(const sc_identity *id, long end, int L)
{
    if (end < 2L * L) return 0;
    if (L > 1 && at(id, end - 1)->where == at(id, end - 2)->where) return 0;   /* one buffer (staging): at once */
    for (long i = end - L; i < end; i++)
        if (at(id, i)->where != at(id, i - L)->where || at(id, i)->shape != at(id, i - L)->shape) return 0;
    return own_buffers(id, end, L);
}

/* This rank's buffers are its own per call of the unit of L, the same as
 * one unit back, in one of the last three units: each tensor keeps its
 * buffer.  Not the newest unit alone: a unit becomes the candidate only
 * after a few repeats, and the other model's step may be the one then. */
static int own_and_steady(const sc_identity *id, long n, int L)
{
    for (int j = 0; j < 3 && (long)j * L < SC_HIST_CAP - 2L * L; j++)
        if (unit_steady_at(id, n - (long)j * L, L)) return 1;
    return 0;
}

/* The next unit after `after` that the recent shapes repeat (next_shape,
 * with the call just added), or 0. */
static int candidate_unit(const sc_identity *id, long n, int after)
{
    for (int L = after + 1; L <= SC_STEP_MAX && L < n; L++)
        if (id->next_shape[L] >= need_matches(L)) return L;
    return 0;
}

/* This rank's view of a candidate unit L: its address hint (the smallest m
 * whose m units its buffers repeat over three times, 0 none), and whether
 * it shows the unit spans a whole step (identity.h): buffers of their own
 * repeating with it, a run longer than any step, or a step gap every
 * `*gap` units. */
static int judge_unit(const sc_identity *id, long n, int L, int *hint, int *gap)
{
    int mmax = SC_STEP_MAX / L < SC_HINT_MAX ? SC_STEP_MAX / L : SC_HINT_MAX;
    *hint = *gap = 0;
    for (int m = 1; m <= mmax && !*hint; m++)
        if (id->next_where[m * L] >= 2 * m * L) *hint = m;
    for (int m = 1; m <= mmax && !*gap; m++)
        if (step_gap_shows(id, n, m * L)) *gap = m;
    int U = *hint > 1 ? *hint * L : L;
    return id->next_shape[L] >= 2 * L + SC_STEP_MAX || (*hint && U >= 2 && own_buffers(id, n, U));
}

/* For every lag L (1 to SC_STEP_MAX), the run of calls equal to the call
 * L back, with the new call: one longer where it matches, else 0 (and the
 * same for shape and address together).  x_back[-L] is call L back.  A
 * fixed count, no branches (whether a call matches is data, not
 * predictable) and restrict arguments: the compiler vectorizes it at -O2. */
static void match_lags(const uint32_t *restrict sl_back, const uint32_t *restrict sh_back,
                       const uint32_t *restrict wl_back, const uint32_t *restrict wh_back, uint32_t s_lo,
                       uint32_t s_hi, uint32_t w_lo, uint32_t w_hi, const int *restrict run_shape,
                       const int *restrict run_where, int *restrict next_shape, int *restrict next_where)
{
    for (int L = 1; L <= SC_STEP_MAX; L++) {
        int same = (sl_back[-L] == s_lo) & (sh_back[-L] == s_hi);
        int same_where = same & (wl_back[-L] == w_lo) & (wh_back[-L] == w_hi);
        next_shape[L] = (run_shape[L] + 1) * same;
        next_where[L] = (run_where[L] + 1) * same_where;
    }
}

void sc_identity_vote(sc_identity *id, const sc_call_key *k, long vote[SC_VOTE_LEN])
{
    memset(vote, 0, sizeof(long) * SC_VOTE_LEN);
    long i = id->nhist;
    id->hist[i % SC_HIST_CAP] = *k;
    /* The recent calls' shape and address, in 32-bit halves: baseline
     * x86-64 (SSE2) compares 32-bit lanes only, and the compiler then
     * vectorizes the lag loop below. */
    int q = (int)(i % SC_RECENT);
    const uint32_t s_lo = (uint32_t)k->shape, s_hi = (uint32_t)(k->shape >> 32);
    const uint32_t w_lo = (uint32_t)k->where, w_hi = (uint32_t)(k->where >> 32);
    uint32_t *r = id->recent;
    r[q] = r[q + SC_RECENT] = s_lo;
    r[2 * SC_RECENT + q] = r[3 * SC_RECENT + q] = s_hi;
    r[4 * SC_RECENT + q] = r[5 * SC_RECENT + q] = w_lo;
    r[6 * SC_RECENT + q] = r[7 * SC_RECENT + q] = w_hi;
    const uint32_t *sl_back = r + q + SC_RECENT, *sh_back = r + 3 * SC_RECENT + q;
    const uint32_t *wl_back = r + 5 * SC_RECENT + q, *wh_back = r + 7 * SC_RECENT + q;
    int lim = i < SC_STEP_MAX ? (int)i : SC_STEP_MAX;
    match_lags(sl_back, sh_back, wl_back, wh_back, s_lo, s_hi, w_lo, w_hi, id->run_shape, id->run_where,
               id->next_shape, id->next_where);
    for (int L = lim + 1; L <= SC_STEP_MAX; L++)   /* lags before the first call */
        id->next_shape[L] = id->next_where[L] = 0;
    id->voting = 1;
    vote[SC_VOTE_SHAPE] = (long)k->shape;
    vote[SC_VOTE_NSHAPE] = -(long)k->shape;
    long n = i + 1;
    /* The first candidate this rank has evidence for, else the smallest:
     * a run of equal blocks inside the step (a smaller candidate) must
     * not hide the step itself.  Multiples of the smallest are judged
     * with it (its hints and gaps look m units ahead). */
    int L = 0, hint = 0, gap = 0, spans = 0, tries = 0;
    int multiple = 0;   /* of L, the next at or above c: L is set once, so no division per candidate */
    for (int c = candidate_unit(id, n, 0); c && tries < 8; c = candidate_unit(id, n, c)) {
        while (L && multiple < c) multiple += L;
        if (L && c == multiple) continue;
        tries++;
        int h, g, sp = judge_unit(id, n, c, &h, &g);
        if (!L || sp || g) {
            L = c;
            hint = h;
            gap = g;
            spans = sp;
        }
        if (sp || g || L == 1) break;   /* every later candidate is a multiple of a unit of 1 */
    }
    vote[SC_VOTE_UNIT] = L;
    vote[SC_VOTE_NUNIT] = -L;
    if (!L) return;
    /* Own, steady buffers: learn for SC_TURN_UNITS units, so that two
     * models of one shape trained in turn can show (buffer_turned).  Only
     * then: a step that takes longer to learn (one marked by a small
     * bias alone, SC_BLOCK_RUN_MAX) gives fresh buffers that much more
     * time for an allocator to hand them back in such a pattern by chance
     * (a tensor-parallel code's NumPy replicas did, on every rank). */
    if (n <= (long)(SC_TURN_UNITS + 1) * L) id->turned |= buffer_turned(id, n, L);
    if (!id->steady) id->steady = own_and_steady(id, n, L);   /* and stays so: the other model's step breaks it */
    vote[SC_VOTE_NOT_TURNED] = !id->turned;
    /* The first learning only (a pattern learned again has been watched
     * since: sc_identity_turns_since), and no further back than the
     * history reaches. */
    if (!id->turned && id->steady && id->relearns == 0 && n < (long)SC_TURN_UNITS * L && n < SC_HIST_CAP)
        vote[SC_VOTE_TURN_WAIT] = 1;
    /* Address hints are needed only for a unit shapes do not tell apart:
     * for one, wait until every m could have shown. */
    int mmax = SC_STEP_MAX / L < SC_HINT_MAX ? SC_STEP_MAX / L : SC_HINT_MAX;
    if (hint) vote[SC_VOTE_HINT0 + hint - 1] = 1;
    else if (!told_apart_by_shape(id, n, L) && n < 3 * (long)mmax * L) vote[SC_VOTE_WAIT] = 1;
    vote[SC_VOTE_SPANS] = spans;
    vote[SC_VOTE_NO_GAP] = !gap;
    vote[SC_VOTE_NOT_OWN1] = !(hint == 1 && own_buffers(id, n, L));
    if (gap) vote[SC_VOTE_GAP0 + gap - 1] = 1;
}

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void commit_call(sc_identity *id)
{
    int *t = id->run_shape;
    id->run_shape = id->next_shape;
    id->next_shape = t;
    t = id->run_where;
    id->run_where = id->next_where;
    id->next_where = t;
    const sc_call_key *c = at(id, id->nhist);
    if (id->first_gradient < 0 && (!is_value(c) || c->one_number)) id->first_gradient = id->nhist;   /* gradient_before_run */
    id->nhist++;
    id->voting = 0;
}

/* The unit's calls (the last U of n) between the calls of its first
 * value's shape (an ineligible call that is no gradient: a loss), around
 * the unit, where that shape comes twice or more: do two such runs that
 * hold calls differ?  Then the unit is two steps of different patterns in
 * turn, each with its loss: PowerSGD's power iteration sums its packed P
 * factors one step and its Q factors the next, and each rank computes the
 * next factors from the last sum at once (through an orthogonalization),
 * so a late or partial sum is wrong, not late (at 8 ranks under quorum
 * its loss went back from 0.2 to 1.0).  A value that comes once marks one
 * step (unit_markers); a one-number sum that comes SC_LAYER_VALUES_MIN
 * times or more is a parameter of every layer.  Deterministic in the
 * shapes: the same on every rank. */
static int alternates(const sc_identity *id, long n, int U)
{
    int first = first_value(id, n, U), times = 0;
    if (first < 0) return 0;
    const sc_call_key *v = at(id, n - U + first);
    uint64_t value = v->shape, seen = 0, run = 0;
    for (int j = 0; j < U; j++) times += at(id, n - U + j)->shape == value;
    if (times < 2) return 0;
    if (v->one_number && times >= SC_LAYER_VALUES_MIN) return 0;
    int held = 0, kinds = 0;
    for (int k = 1; k <= U; k++) {
        const sc_call_key *c = at(id, n - U + (first + k) % U);
        if (c->shape != value) {
            run = mix64(run ^ c->shape);
            held |= c->eligible;
            continue;
        }
        if (held) {
            if (kinds == 0) seen = run, kinds = 1;
            else if (run != seen) return 1;
        }
        run = 0;
        held = 0;
    }
    return 0;
}

/* The agreed pattern: M units of the last L calls, starting with the call
 * after this one; its eligible calls are the slots.  turned: every rank's
 * buffers showed two tensors in turn (buffer_turned): exact. */
static void adopt(sc_identity *id, int L, long M, int turned)
{
    long unit = M * L;
    int by_shape = told_apart_by_shape(id, id->nhist, L);
    int nslots = 0, nonslot = 0, too_many = 0;
    if (unit > SC_STEP_MAX) unit = L;   /* the hints disagree: the pattern stays exact (below) */
    /* the last step's own calls where they are remembered (decide: they
     * repeat one step back), else the unit's, M times */
    int whole = id->nhist >= unit && unit <= SC_HIST_CAP;
    for (long j = 0; j < unit; j++) {
        const sc_call_key *c = whole ? at(id, id->nhist - unit + j) : at(id, id->nhist - L + (j % L));
        if (!c->eligible) {
            nonslot++;
            continue;
        }
        if (nslots == SC_SLOTS_MAX) {
            too_many = 1;
            break;
        }
        id->slot_shape[nslots] = c->shape;
        id->slot_count[nslots] = c->count;
        id->slot_dkind[nslots] = c->dkind;
        id->slot_where[nslots] = c->where;
        id->slot_now[nslots] = whole ? c->where : 0;
        id->slot_away[nslots] = id->slot_last_away[nslots] = 0;
        nslots++;
    }
    id->learned = 1;
    id->nslots = too_many ? 0 : nslots;
    id->pos = 0;
    id->miss_streak = 0;
    id->trusted = 0;
    if (M * L > SC_STEP_MAX)
        snprintf(id->why, sizeof id->why, "the ranks' buffer addresses suggest steps of different lengths");
    else if (too_many)
        snprintf(id->why, sizeof id->why, "more than %d eligible calls per step", SC_SLOTS_MAX);
    else if (nslots == 0)
        snprintf(id->why, sizeof id->why, "no eligible call in the step");
    else if (whole && alternates(id, id->nhist, (int)unit))
        snprintf(id->why, sizeof id->why,
                 "the step is two patterns in turn, each with its per-step call (PowerSGD summing its P factors one "
                 "step and its Q factors the next, which it computes from those sums at once, or two models trained "
                 "in turn), or a one-number sum in each of fewer than %d layers (a ReZero gate, a PReLU slope): a "
                 "late sum may be wrong, not late; a communicator per model (MPI_Comm_dup) tells two models apart",
                 SC_LAYER_VALUES_MIN);
    else if (turned)
        snprintf(id->why, sizeof id->why,
                 "every rank's buffer at one place of the step went to another one and came back, twice, while the "
                 "step was learned: two tensors of one shape there in turn (two models trained alternately?); a "
                 "communicator per model (MPI_Comm_dup) tells them apart");
    else if (!by_shape && M == 1 && L == 1)
        snprintf(id->why, sizeof id->why,
                 "every call has one shape (%ld elements) and no buffer of its own: one tensor per step cannot be "
                 "told from several of one size passed in turn through one buffer (a per-step loss "
                 "MPI_Allreduce tells steps apart)", id->slot_count[0]);
    else if (!by_shape && M == 1)
        snprintf(id->why, sizeof id->why,
                 "the step repeats one sequence of %d calls with no call of a shape of its own and no buffer of "
                 "its own per tensor, so where a step starts is unknown (a per-step loss MPI_Allreduce tells "
                 "steps apart)", L);
    else
        id->trusted = 1;
    /* Told apart only by ineligible calls: every slot has one shape. */
    int one_shape = 1;
    for (int s = 1; s < id->nslots; s++) one_shape &= id->slot_shape[s] == id->slot_shape[0];
    id->marker_dependent = id->trusted && M == 1 && nonslot > 0 && one_shape;
    int before_first = 0;
    id->nmarkers =
        id->trusted ? unit_markers(id, id->nhist, L, id->markers, id->marker_gap, &before_first, SC_MARKERS_MAX) : 0;
    id->marker_slot = id->nmarkers > 0 && M == 1 && whole ? before_first % id->nslots : -1;
    id->since_marker = 0;
    id->seen_marker = id->shifted = 0;
    id->misaligned = id->foreign = 0;
    id->off_foreign = 0;
    id->shift_next = -1;
    id->watch = id->trusted && M == 1 && own_and_steady(id, id->nhist, L);
    id->kept = whole && 2 * unit <= SC_HIST_CAP && unit_steady_at(id, id->nhist, (int)unit);
    id->lineage = id->relearns;
    id->rot = 0;
    id->cache_n = 0;
    id->turns_since = 0;
    id->turn_slot = -1;
    id->watch_moves = id->trusted && id->kept;
    id->move_d = 0;
    id->move_run = 0;
}

/* After learning, on a rank whose buffers were its own and steady: a
 * slot's call in a buffer not its learned one is away; back in the learned
 * one after a time away in the same buffer as the time before is a turn
 * (buffer_turned's rule).  Away in two buffers in one go means the rank's
 * buffers are not kept per tensor after all: it stops watching. */
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

#define RESUMED "resumed where it left off, the calls since continuing it for a step and more; learned as "

/* The cached pattern again, from the slot the calls that continued it
 * reached (that slot first). */
static void resume(sc_identity *id)
{
    int n = id->cache_n, first = (int)((id->cache_next + id->cache_match) % n);
    for (int j = 0; j < n; j++) {
        int o = (first + j) % n;
        id->slot_shape[j] = id->cache_shape[o];
        id->slot_count[j] = id->cache_count[o];
        id->slot_dkind[j] = id->cache_dkind[o];
        id->slot_now[j] = id->slot_where[j] = id->cache_where[o];
        id->slot_away[j] = id->slot_last_away[j] = 0;
    }
    id->learned = id->trusted = 1;
    id->nslots = n;
    id->why[0] = '\0';
    snprintf(id->how, sizeof id->how, "%s%s", RESUMED, id->cache_how);
    id->pos = 0;
    id->miss_streak = 0;
    id->marker_dependent = id->nmarkers = 0;
    id->marker_slot = -1;
    id->watch = 0;
    id->kept = id->cache_kept;   /* until a call's buffer differs from its last one */
    id->watch_moves = id->kept;
    id->move_d = 0;
    id->move_run = 0;
    id->lineage = id->cache_lineage;
    id->rot = (id->cache_rot + first) % n;
    id->cache_n = 0;
}

/* Learning: has the cached pattern been continued by the calls since, in
 * a row, for a whole step and SC_RESUME_EXTRA calls more?  Not a step
 * only: a unit learned by mistake (a run of equal blocks inside a longer
 * step, taken for the step on one rank's timing, as seen under
 * AddressSanitizer) would come back at every run of its blocks.
 * Deterministic in the shapes: every rank answers the same. */
static int continues_cache(sc_identity *id)
{
    const sc_call_key *c = at(id, id->nhist - 1);
    if (!id->cache_n || !c->eligible) return 0;
    int n = id->cache_n;
    if (c->shape == id->cache_shape[(id->cache_next + id->cache_match) % n]) id->cache_match++;
    else id->cache_match = c->shape == id->cache_shape[id->cache_next];
    return id->cache_match >= (long)n + SC_RESUME_EXTRA;
}

sc_learn_outcome sc_identity_decide(sc_identity *id, const long agreed[SC_VOTE_LEN])
{
    if (!id->voting) return SC_LEARN_GO_ON;
    if (agreed[SC_VOTE_SHAPE] != -agreed[SC_VOTE_NSHAPE]) {
        id->voting = 0;   /* the call leaves the history */
        return SC_LEARN_DISAGREE;
    }
    long L = agreed[SC_VOTE_UNIT];
    commit_call(id);
    if (continues_cache(id)) {
        resume(id);
        return SC_LEARN_DONE;
    }
    if (L <= 0 || L != -agreed[SC_VOTE_NUNIT] || agreed[SC_VOTE_WAIT]) return SC_LEARN_GO_ON;
    /* A unit with a per-step call that is no gradient (a loss, a metric)
     * is no run of layers inside a step: no further evidence needed. */
    int marked = unit_markers(id, id->nhist, (int)L, NULL, NULL, NULL, 1) > 0;
    /* Marked only by calls that may be small gradients (a narrow layer's
     * bias under STARCOLL_MIN_BYTES), and no value beside them (a loss):
     * maybe one of a model's identical layers, inside the step, each
     * holding its bias.  Not a gap shows it spans a step (the work before
     * each layer's first call makes one too), nor buffers (malloc hands
     * each layer's back alike): a run longer than such layers run in one
     * step does.  A step with a loss is learned by its loss long before.
     * Buffers of their own may then lengthen it, as an unmarked unit's. */
    int block_like = marked && first_value(id, id->nhist, (int)L) < 0;
    /* Marked by one-number sums alone, after gradients that did not
     * repeat with the unit (a model's head before its blocks): the one
     * number may be a gate or a slope in every layer (ReZero, PReLU), and
     * the unit a block inside the step.  A loss-marked step repeats from
     * where learning began (every call of it, however placed), so it is
     * learned at once; this one after the long run, or as a longer unit.
     * Not a unit that was ready before, held only by the wait for turns
     * (ready_L): calls that broke its run since (a validation pass,
     * another model's step) are no head before it. */
    if (marked && !block_like && id->ready_L != L && values_one_number(id, id->nhist, (int)L) &&
        gradient_before_run(id, (int)L))
        block_like = 1;
    if (block_like) {
        if (id->run_shape[L] < 2 * L + SC_BLOCK_RUN_MAX) return SC_LEARN_GO_ON;
        marked = 0;
    }
    if (!marked && !block_like && !agreed[SC_VOTE_SPANS] && agreed[SC_VOTE_NO_GAP])
        return SC_LEARN_GO_ON;   /* maybe a run inside a step */
    /* The step is the least common multiple of what the ranks' buffers
     * say and, for a unit shapes tell apart, of where their gaps fall.
     * Not of the gaps when every rank holds each tensor of the unit in a
     * buffer of its own, the same every unit: a call one unit on is then
     * the same tensor, so the unit is the step, whatever a gap says (one
     * rank's scheduling hiccup, twice at the same place, once made two
     * steps of one here, and a flush then reached only half the slots).
     * Neither when the unit holds a call of its own shape that is not a
     * gradient (a per-step loss or metric): that call marks the step, and
     * fresh arrays every step that one rank's allocator gives back every
     * other step must not make the step two steps long. */
    /* Nor where some rank's step gap comes every unit: then another's
     * every m units is noise (its compute next to nothing every other
     * step, as random compute times do now and then), far likelier than
     * a model of identical layers whose work before each layer dominates
     * on some rank; a step learned twice too long keeps a one-step flush
     * from reaching half its slots. */
    int gaps_count = !marked && !block_like && told_apart_by_shape(id, id->nhist, (int)L) &&
                     agreed[SC_VOTE_NOT_OWN1] && !agreed[SC_VOTE_GAP0];
    long M = 1;
    size_t used = (size_t)snprintf(id->how, sizeof id->how, "a unit of %ld calls%s", L,
                                   marked       ? ", marked by a per-step call that is no gradient"
                                   : block_like ? ", marked by calls that may be small gradients, after a long run"
                                                : "");
    for (int m = 2; !marked && m <= SC_HINT_MAX && M * L <= SC_STEP_MAX; m++) {
        int by_hint = agreed[SC_VOTE_HINT0 + m - 1] > 0, by_gap = gaps_count && agreed[SC_VOTE_GAP0 + m - 1] > 0;
        if (!by_hint && !by_gap) continue;
        M = M / gcd(M, m) * m;
        if (used < sizeof id->how)
            used += (size_t)snprintf(id->how + used, sizeof id->how - used, "; x%d: %s", m,
                                     by_hint && by_gap ? "some rank's buffers and gaps repeat so"
                                     : by_hint     ? "some rank's buffers repeat so"
                                                   : "some rank's step gaps come so");
    }
    /* Held only by the wait for turns: the step as it stands now is the
     * step, agreed when the wait ends.  Buffers that repeat every other
     * step on some rank (fresh arrays an allocator gives back) would
     * otherwise have the longer learning double it, and a one-step flush
     * would reach half of its slots. */
    if (agreed[SC_VOTE_TURN_WAIT]) {
        if (id->ready_L != L) {
            id->ready_L = L;
            id->ready_M = M;
            snprintf(id->ready_how, sizeof id->ready_how, "%s", id->how);
        }
        return SC_LEARN_GO_ON;
    }
    if (id->ready_L == L) {
        M = id->ready_M;
        snprintf(id->how, sizeof id->how, "%s", id->ready_how);
    }
    /* A step of M units is the last M * L calls, which must repeat one
     * step back: gaps every M units say where steps start, not that the
     * units between are equal (ResNet-50's blocks: a unit of one block,
     * gaps at every step of 81 calls, and the step is not nine blocks).
     * Buffers that repeat so (a hint) have shown it already. */
    if (M > 1 && M * L <= SC_STEP_MAX && id->run_shape[M * L] < M * L) return SC_LEARN_GO_ON;
    adopt(id, (int)L, M, agreed[SC_VOTE_NOT_TURNED] == 0);
    return SC_LEARN_DONE;
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

void sc_identity_relearn(sc_identity *id)
{
    /* a trusted pattern of gradients is kept to resume (not one told
     * apart by a per-step call: its markers are not kept) */
    if (id->learned && id->trusted && !id->marker_dependent && id->nslots > 0) {
        int n = id->nslots;
        memcpy(id->cache_shape, id->slot_shape, sizeof(uint64_t) * (size_t)n);
        memcpy(id->cache_where, id->slot_now, sizeof(uint64_t) * (size_t)n);
        memcpy(id->cache_count, id->slot_count, sizeof(long) * (size_t)n);
        memcpy(id->cache_dkind, id->slot_dkind, sizeof(int) * (size_t)n);
        id->cache_n = n;
        id->cache_next = (int)(id->pos % n);
        id->cache_rot = id->rot;
        id->cache_kept = id->kept;
        id->cache_lineage = id->lineage;
        const char *how = strncmp(id->how, RESUMED, strlen(RESUMED)) ? id->how : id->how + strlen(RESUMED);
        snprintf(id->cache_how, sizeof id->cache_how, "%.*s", (int)sizeof id->cache_how - 1, how);
        id->cache_match = 0;
    }
    forget_history(id);
    id->relearns++;
}

int sc_identity_learned(const sc_identity *id) { return id->learned; }
int sc_identity_trusted(const sc_identity *id) { return id->learned && id->trusted; }
int sc_identity_slots(const sc_identity *id) { return id->nslots; }
long sc_identity_slot_count(const sc_identity *id, int slot) { return id->slot_count[slot]; }
int sc_identity_slot_dkind(const sc_identity *id, int slot) { return id->slot_dkind[slot]; }
uint64_t sc_identity_slot_shape(const sc_identity *id, int slot) { return id->slot_shape[slot]; }
uint64_t sc_identity_slot_buffer(const sc_identity *id, int slot) { return id->slot_now[slot]; }
int sc_identity_buffers_kept(const sc_identity *id) { return id->learned && id->kept; }
long sc_identity_lineage(const sc_identity *id, int *rot)
{
    *rot = id->rot;
    return id->lineage;
}
long sc_identity_position(const sc_identity *id) { return id->pos; }
long sc_identity_relearns(const sc_identity *id) { return id->relearns; }
int sc_identity_marker_slot(const sc_identity *id, uint64_t *shape)
{
    if (!id->learned || id->marker_slot < 0) return -1;
    if (shape) *shape = id->markers[0];
    return id->marker_slot;
}
const char *sc_identity_why_exact(const sc_identity *id) { return id->learned ? id->why : "pattern not learned"; }

long sc_identity_misaligned(const sc_identity *id) { return id->learned ? id->misaligned : 0; }
long sc_identity_foreign(const sc_identity *id) { return id->learned ? id->foreign : 0; }

long sc_identity_moves(const sc_identity *id, int *by)
{
    *by = id->moved_by;
    return id->moves;
}

long sc_identity_turns_since(const sc_identity *id, int *slot)
{
    *slot = id->turn_slot;
    return id->learned ? id->turns_since : 0;
}

const char *sc_identity_how(const sc_identity *id) { return id->learned ? id->how : "pattern not learned"; }

uint64_t sc_identity_pattern_hash(const sc_identity *id)
{
    uint64_t h = mix64((uint64_t)id->nslots);
    for (int s = 0; s < id->nslots; s++) h = mix64(h ^ id->slot_shape[s]);
    return h;
}
