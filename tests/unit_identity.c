/* Unit tests of call identity (plugin/identity.c): which tensor of the
 * step a call is, learned from shapes on every rank alike, with buffer
 * addresses as hints only.  The agreement collective is played here by
 * taking the maximum of the ranks' votes, as MPI_MAX does in agree.c.
 *
 * What must hold: every rank learns the same pattern at the same call,
 * whatever its allocator does; a step whose tensors cannot be told apart
 * is not tolerated; no pattern ever maps two tensors of a step to one
 * slot; calls off the pattern are classified alike on every rank. */
#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "identity.h"
#include "cunit_main.h"

#define NR 4

typedef struct job {
    int n;
    sc_identity *id[NR];
} job;

static job *job_new(int n)
{
    job *j = calloc(1, sizeof *j);
    j->n = n;
    for (int r = 0; r < n; r++) j->id[r] = sc_identity_new();
    return j;
}

static void job_free(job *j)
{
    for (int r = 0; r < j->n; r++) sc_identity_free(j->id[r]);
    free(j);
}

/* A call of floats summed, as the plugin keys it: an ineligible one of 2
 * elements and up may be a small gradient (under the size floor); but 3,
 * which stands for a value of 3 numbers that is no sum (an MPI_MAX); one
 * of 1 element is a one-number sum (a loss, or a ReZero gate). */
static sc_call_key key(long count, int eligible, uintptr_t where)
{
    sc_call_key k = {sc_shape_hash(count, 1, 1, eligible), sc_where_hash((void *)where, (void *)(where + 8)), 1e-4,
                     count, 1, eligible, !eligible && count >= 2 && count != 3, !eligible && count == 1};
    return k;
}

/* The gap before call t of a step: a training step computes (its forward
 * pass) before its first reduction; uniform: no such structure. */
static int uniform_gaps;
/* ... and, when set, the code's own work between calls: 0.4 ms before a
 * tensor of a million elements or more (filling a fresh buffer), 0.1 ms
 * before the others. */
static const long *work_counts;
static double gap_before(int t)
{
    if (t == 0 && !uniform_gaps) return 10e-3;
    return work_counts && labs(work_counts[t]) >= 1000000 ? 0.4e-3 : 1e-4;
}
/* ... and, when not -1, one rank whose compute is next to nothing every
 * other step (random compute times do that now and then): its step gap
 * shows only every second step. */
static int gappy_rank = -1;
static double gap_of(int r, int t, int s)
{
    if (r == gappy_rank && t == 0 && s % 2 == 1) return 1e-4;
    return gap_before(t);
}

/* One call on every rank (rank r calls keys[r]); the outcome of learning,
 * which must be the same on every rank. */
static sc_learn_outcome agree(job *j, const sc_call_key *keys)
{
    long votes[NR][SC_VOTE_LEN], agreed[SC_VOTE_LEN];
    for (int r = 0; r < j->n; r++) sc_identity_vote(j->id[r], &keys[r], votes[r]);
    for (int f = 0; f < SC_VOTE_LEN; f++) {
        agreed[f] = votes[0][f];
        for (int r = 1; r < j->n; r++)
            if (votes[r][f] > agreed[f]) agreed[f] = votes[r][f];
    }
    sc_learn_outcome out = sc_identity_decide(j->id[0], agreed);
    for (int r = 1; r < j->n; r++) CU_ASSERT_EQUAL(sc_identity_decide(j->id[r], agreed), out);
    return out;
}

/* Calls before the steps, each learned on (agreed) by every rank;
 * values: the ineligible ones are values, no gradient (integers summed),
 * whatever their count. */
static void learn_prefix(job *j, const long *counts, long n, int values)
{
    for (long t = 0; t < n; t++) {
        sc_call_key keys[NR];
        int slot;
        for (int r = 0; r < j->n; r++) {
            keys[r] = key(counts[t] < 0 ? -counts[t] : counts[t], counts[t] > 0, 0x900000u + 0x1000u * (uintptr_t)t);
            if (values) keys[r].maybe_gradient = 0;
            CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &keys[r], &slot), SC_ID_LEARNING);
        }
        CU_ASSERT_EQUAL(agree(j, keys), SC_LEARN_GO_ON);
    }
}

/* Address of tensor t at step s on rank r under an allocation style. */
enum { OWN_BUFFER, STAGING, FRESH, ALTERNATING, TWO_MODELS, CYCLE4 };
/* TWO_MODELS: buffers of their own, two models of the same shapes trained
 * in turn, the second at every turn_every-th step (a GAN's generator after
 * turn_every - 1 critic steps) */
static int turn_every = 6;
static uintptr_t where(int style, int r, int t, int s)
{
    if (style == OWN_BUFFER) return 0x100000u + 0x1000u * (uintptr_t)t + 0x1000000u * (uintptr_t)r;
    if (style == CYCLE4)   /* fresh every step, the allocator giving back the buffers of four steps ago */
        return 0x700000u + 0x1000u * (uintptr_t)t + 0x100000u * (uintptr_t)(s % 4) + 0x1000000u * (uintptr_t)r;
    if (style == TWO_MODELS)
        return 0x500000u + 0x1000u * (uintptr_t)t + 0x80000u * (uintptr_t)(s % turn_every == turn_every - 1) +
               0x1000000u * (uintptr_t)r;
    if (style == ALTERNATING)   /* fresh every step, the allocator giving back the buffers of two steps ago */
        return 0x400000u + 0x1000u * (uintptr_t)t + 0x100000u * (uintptr_t)(s % 2) + 0x1000000u * (uintptr_t)r;
    if (style == STAGING) return 0x200000u + 0x1000000u * (uintptr_t)r;
    return 0x300000u + 0x10000u * (uintptr_t)((s * 131 + t * 17 + r * 7) % 997);   /* malloc per step */
}

/* Run steps of `len` calls (counts; eligible unless negative) until the
 * pattern is agreed or `max_steps` pass, ranks allocating by style[r];
 * the step under way is then finished on the pattern.  Returns the call
 * index at which it was agreed, or -1. */
static long learn(job *j, const long *counts, int len, const int *style, int max_steps)
{
    long call = 0;
    for (int s = 0; s < max_steps; s++)
        for (int t = 0; t < len; t++, call++) {
            int slot;
            sc_call_key keys[NR];
            for (int r = 0; r < j->n; r++) {
                long c = counts[t] < 0 ? -counts[t] : counts[t];
                keys[r] = key(c, counts[t] > 0, where(style[r], r, t, s));
                keys[r].gap = gap_of(r, t, s);
                CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &keys[r], &slot), SC_ID_LEARNING);
            }
            if (agree(j, keys) != SC_LEARN_DONE) continue;
            for (int u = t + 1; u < len; u++)
                for (int r = 0; r < j->n; r++) {
                    sc_call_key k = key(counts[u] < 0 ? -counts[u] : counts[u], counts[u] > 0, where(style[r], r, u, s));
                    k.gap = gap_of(r, u, s);
                    CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k, &slot), counts[u] > 0 ? SC_ID_SLOT : SC_ID_PASS);
                }
            return call;
        }
    return -1;
}

/* The slot of each call of one more step; every rank must agree, and the
 * slots of one step must be distinct (no two tensors in one slot). */
static void check_one_step(job *j, const long *counts, int len, int step, const int *style, int *slots)
{
    int n = 0;
    for (int t = 0; t < len; t++) {
        for (int r = 0; r < j->n; r++) {
            long c = counts[t] < 0 ? -counts[t] : counts[t];
            sc_call_key k = key(c, counts[t] > 0, where(style[r], r, t, step));
            k.gap = gap_of(r, t, step);
            int slot;
            sc_id_kind kind = sc_identity_next(j->id[r], &k, &slot);
            CU_ASSERT_EQUAL(kind, counts[t] > 0 ? SC_ID_SLOT : SC_ID_PASS);
            if (counts[t] > 0 && r == 0) slots[n] = slot;
            if (counts[t] > 0 && r > 0) CU_ASSERT_EQUAL(slot, slots[n]);
        }
        n += counts[t] > 0;
    }
    int *seen = calloc((size_t)n + 1, sizeof(int)), twice = 0;
    for (int a = 0; a < n; a++) {
        if (slots[a] >= 0 && slots[a] < n) twice |= seen[slots[a]]++;
        else twice = 1;
    }
    CU_ASSERT_FALSE(twice);   /* the slots of one step are 0..n-1, each once */
    free(seen);
}

static const int same_style[NR] = {FRESH, FRESH, FRESH, FRESH};

static void test_distinct_shapes_fresh_buffers(void)
{
    /* malloc per step on every rank: shapes alone tell the tensors apart */
    job *j = job_new(4);
    long step[] = {4000, 2000, 1000, 500};
    long at = learn(j, step, 4, same_style, 20);
    CU_ASSERT_EQUAL(at, SC_LEARN_MIN_CALLS - 1);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4);
    int slots[4];
    check_one_step(j, step, 4, 20, same_style, slots);
    job_free(j);
}

static void test_one_rank_gappy_every_other_step(void)
{
    /* As above, with rank 3's compute next to nothing every other step:
     * its gaps alone say the step is two, the others' say one.  Learned
     * as two, a flush a step long would reach half the slots (the suite's
     * quiet soak lost contributions so, once). */
    job *j = job_new(4);
    long step[] = {4000, 2000, 1000, 500};
    gappy_rank = 3;
    long at = learn(j, step, 4, same_style, 20);
    CU_ASSERT_TRUE(at >= 0);
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4);
    int slots[4];
    check_one_step(j, step, 4, 20, same_style, slots);
    gappy_rank = -1;
    job_free(j);
}

static void test_addresses_move_on_some_ranks(void)
{
    /* rank 1 mallocs per step, the others keep buffers: the same pattern
     * at the same call everywhere, after SC_TURN_UNITS steps (ranks 0 and
     * 2 keep buffers of their own, so two models in turn could show) */
    job *j = job_new(4);
    int style[NR] = {OWN_BUFFER, FRESH, OWN_BUFFER, STAGING};
    long step[] = {4000, 2000, 1000, 500};
    long at = learn(j, step, 4, style, 20);
    CU_ASSERT_EQUAL(at, SC_TURN_UNITS * 4L - 1);
    for (int r = 0; r < 4; r++) CU_ASSERT_EQUAL(sc_identity_slots(j->id[r]), 4);
    int slots[4];
    check_one_step(j, step, 4, 30, style, slots);
    job_free(j);
}

static void test_run_of_equal_shapes(void)
{
    /* A A A B: four slots, not a step of one */
    job *j = job_new(2);
    long step[] = {1000, 1000, 1000, 2000};
    CU_ASSERT_TRUE(learn(j, step, 4, same_style, 20) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4);
    int slots[4];
    check_one_step(j, step, 4, 20, same_style, slots);
    job_free(j);
}

static void test_staging_one_count_is_exact(void)
{
    /* four gradients of one size through one staging buffer: a step of
     * one tensor looks the same, so it is not tolerated, and says why;
     * agreed early, since the gaps show the unit spans steps */
    job *j = job_new(4);
    int style[NR] = {STAGING, STAGING, STAGING, STAGING};
    long step[] = {1000, 1000, 1000, 1000};
    long at = learn(j, step, 4, style, 40);
    CU_ASSERT_TRUE(at >= 0 && at < 40);
    CU_ASSERT_TRUE(sc_identity_learned(j->id[0]));
    CU_ASSERT_FALSE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_PTR_NOT_NULL(strstr(sc_identity_why_exact(j->id[0]), "one shape"));
    job_free(j);
    /* the same with buffers moving every step and no step in the gaps:
     * only a run longer than any step agrees on it */
    j = job_new(4);
    uniform_gaps = 1;
    at = learn(j, step, 4, same_style, 1000);
    uniform_gaps = 0;
    CU_ASSERT_EQUAL(at, 2 + SC_STEP_MAX);
    CU_ASSERT_FALSE(sc_identity_trusted(j->id[0]));
    job_free(j);
}

/* GPT-2 small's tensors: two embeddings, 12 identical blocks of 12, a
 * final norm, in backward order. */
static int gpt2(long *t)
{
    int n = 0;
    const long d = 768;
    t[n++] = 50257 * d;
    t[n++] = 1024 * d;
    for (int b = 0; b < 12; b++) {
        long part[] = {d, d, d * 3 * d, 3 * d, d * d, d, d, d, d * 4 * d, 4 * d, 4 * d * d, d};
        for (int i = 0; i < 12; i++) t[n++] = part[i];
    }
    t[n++] = d;
    t[n++] = d;
    for (int i = 0; i < n / 2; i++) {
        long x = t[i];
        t[i] = t[n - 1 - i];
        t[n - 1 - i] = x;
    }
    return n;
}

/* GPT-2's step (n calls, fresh buffers everywhere) is learned at the end
 * of its third step, with a slot per tensor, and the next step maps each
 * tensor to a slot of its own on every rank. */
static void gpt2_learned_in_three_steps(job *j, const long *step, int n)
{
    long at = learn(j, step, n, same_style, 10);
    CU_ASSERT_EQUAL(at, 3L * n - 1);
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 148);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    int slots[160];
    check_one_step(j, step, n, 10, same_style, slots);
}

static void test_repeated_blocks_are_not_a_step(void)
{
    /* The 12 blocks repeat eleven times in a row inside the first step:
     * that run must not be taken for the step.  Learned at the end of the
     * third step, with a slot per tensor. */
    long step[160];
    int n = gpt2(step);
    CU_ASSERT_EQUAL(n, 148);
    job *j = job_new(4);
    gpt2_learned_in_three_steps(j, step, n);
    job_free(j);
    /* the same with no step in the gaps: the blocks still are no step */
    j = job_new(2);
    uniform_gaps = 1;
    long at = learn(j, step, n, same_style, 40);
    uniform_gaps = 0;
    CU_ASSERT_TRUE(at >= 2L * n + SC_STEP_MAX);
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 148);
    job_free(j);
}

static void test_work_between_calls_is_no_step_gap(void)
{
    /* GPT-2 and a per-step loss (149 calls), and longer work before each
     * large weight.  36 calls back from the second step's 37th call sits
     * the work before a layer's MLP weight; paired with the true step gap
     * 36 calls on, it looked like a step start every three layers (seen on
     * every rank of a fresh-buffer loop).  Three layers are no step. */
    long step[160];
    int n = gpt2(step);
    step[n++] = -1;   /* the loss */
    job *j = job_new(4);
    work_counts = step;
    gpt2_learned_in_three_steps(j, step, n);
    work_counts = NULL;
    job_free(j);
}

static void test_staging_one_count_with_loss(void)
{
    /* ... and with a per-step loss (1 element, ineligible): four slots */
    job *j = job_new(4);
    int style[NR] = {STAGING, STAGING, FRESH, STAGING};
    long step[] = {1000, 1000, 1000, 1000, -1};
    CU_ASSERT_TRUE(learn(j, step, 5, style, 20) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4);
    int slots[4];
    for (int s = 0; s < 3; s++) check_one_step(j, step, 5, 20 + s, style, slots);
    /* a step with a fifth gradient: at the next loss the position no
     * longer says which tensor is which, so the next call is off */
    long five[] = {1000, 1000, 1000, 1000, 1000, -1};
    for (int t = 0; t < 6; t++)
        for (int r = 0; r < 4; r++) {
            sc_call_key k = key(five[t] < 0 ? 1 : 1000, five[t] > 0, where(STAGING, r, t, 40));
            int slot;
            sc_identity_next(j->id[r], &k, &slot);
        }
    for (int r = 0; r < 4; r++) {
        sc_call_key k = key(1000, 1, where(STAGING, r, 0, 41));
        int slot;
        CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k, &slot), SC_ID_OFF);
        CU_ASSERT_EQUAL(sc_identity_settle(j->id[r], SC_OFF_STRAY), SC_OFF_RELEARN);
    }
    job_free(j);
}

static void test_own_buffers_lengthen_the_step(void)
{
    /* four gradients of one size, each in its own buffer on one rank
     * (staging elsewhere): that rank's addresses say the step is four */
    job *j = job_new(4);
    int style[NR] = {STAGING, OWN_BUFFER, STAGING, FRESH};
    long step[] = {1000, 1000, 1000, 1000};
    CU_ASSERT_TRUE(learn(j, step, 4, style, 40) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4);
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[3]), 4);
    int slots[4];
    check_one_step(j, step, 4, 40, style, slots);
    job_free(j);
}

static void test_allocator_period_is_no_step(void)
{
    /* Fresh arrays every step and a per-step loss; rank 1's allocator
     * gives its buffers back every other step, and no gap shows where
     * steps start.  The loss marks the step: rank 1's buffers must not
     * make it two steps long (a flush of one step would then reach only
     * half of the slots).  Nor when every rank's buffers come back so. */
    int style[2][NR] = {{FRESH, ALTERNATING, FRESH, FRESH}, {ALTERNATING, ALTERNATING, ALTERNATING, ALTERNATING}};
    long step[] = {4000, 2000, 1000, 500, -1};
    uniform_gaps = 1;
    for (int c = 0; c < 2; c++) {
        job *j = job_new(4);
        CU_ASSERT_TRUE(learn(j, step, 5, style[c], 40) >= 0);
        CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
        for (int r = 0; r < 4; r++) CU_ASSERT_EQUAL(sc_identity_slots(j->id[r]), 4);
        int slots[4];
        check_one_step(j, step, 5, 40, style[c], slots);
        job_free(j);
    }
    uniform_gaps = 0;
}

static void test_two_models_in_turn(void)
{
    /* A GAN's critic five steps, then its generator once, with tensors of
     * the same shapes, each in a buffer of its own, and a loss per step:
     * shapes alone take both for one step and would put the critic's and
     * the generator's tensors in one slot.  Every rank's buffers show it:
     * the pattern is exact, and says why.  One rank's alone is no proof
     * (an allocator can show such a period by chance): trusted. */
    int style[2][NR] = {{TWO_MODELS, TWO_MODELS, TWO_MODELS, TWO_MODELS}, {FRESH, FRESH, TWO_MODELS, FRESH}};
    long step[] = {4000, 2000, -1};
    for (int c = 0; c < 4; c++) {   /* with a loss, and without (the unit told apart by its two shapes) */
        job *j = job_new(4);
        CU_ASSERT_TRUE(learn(j, step, c < 2 ? 3 : 2, style[c % 2], 40) >= 0);
        for (int r = 0; r < 4; r++) {
            CU_ASSERT_EQUAL(sc_identity_trusted(j->id[r]), c % 2 == 1);
            CU_ASSERT_EQUAL(strstr(sc_identity_why_exact(j->id[r]), "in turn") != NULL, c % 2 == 0);
        }
        job_free(j);
    }
}

static void test_own_buffers_learn_long_enough(void)
{
    /* Buffers of their own, the same every step, and a loss: learning
     * lasts SC_TURN_UNITS steps (so two models in turn could show), then
     * the step is trusted.  Fresh buffers the allocator gives back every
     * other step (X Y X Y) are no two models: trusted. */
    long step[] = {4000, 2000, -1};
    int own[NR] = {OWN_BUFFER, OWN_BUFFER, OWN_BUFFER, OWN_BUFFER};
    int alt[NR] = {ALTERNATING, ALTERNATING, ALTERNATING, ALTERNATING};
    job *j = job_new(4);
    long at = learn(j, step, 3, own, 40);
    CU_ASSERT_TRUE(at >= 3L * (SC_TURN_UNITS - 1));
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    job_free(j);
    j = job_new(4);
    CU_ASSERT_TRUE(learn(j, step, 3, alt, 40) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    job_free(j);
    /* No loss, buffers of their own on three ranks, and rank 1's fresh
     * ones given back every fourth step: the longer learning lets rank 1's
     * period show, but it only delays the step agreed without it, it does
     * not make it four steps long (a one-step flush must reach every
     * slot). */
    int mixed[NR] = {OWN_BUFFER, CYCLE4, OWN_BUFFER, OWN_BUFFER};
    j = job_new(4);
    CU_ASSERT_TRUE(learn(j, step, 2, mixed, 40) >= 2L * (SC_TURN_UNITS - 1));
    for (int r = 0; r < 4; r++) CU_ASSERT_EQUAL(sc_identity_slots(j->id[r]), 2);
    job_free(j);
}

static void test_two_models_after_learning(void)
{
    /* The generator at every 20th step, after the learning: each rank
     * counts a turn where its buffers come back from the same buffer as
     * the time before, so from the second time on, on slot 0 first; a
     * buffer that moved for good (one rank reallocating) is no turn. */
    turn_every = 20;
    long step[] = {4000, 2000, -1};
    int style[NR] = {TWO_MODELS, TWO_MODELS, TWO_MODELS, OWN_BUFFER};
    job *j = job_new(4);
    CU_ASSERT_TRUE(learn(j, step, 3, style, 19) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    int slot = -2, slots[2];
    for (int s = 19; s <= 20; s++) check_one_step(j, step, 3, s, style, slots);
    CU_ASSERT_EQUAL(sc_identity_turns_since(j->id[0], &slot), 0);   /* once away is no pattern yet */
    for (int s = 39; s <= 40; s++) check_one_step(j, step, 3, s, style, slots);
    CU_ASSERT_EQUAL(sc_identity_turns_since(j->id[0], &slot), 2);   /* both tensors, the second time */
    CU_ASSERT_EQUAL(slot, 0);
    CU_ASSERT_EQUAL(sc_identity_turns_since(j->id[3], &slot), 0);
    int moved[NR] = {TWO_MODELS, TWO_MODELS, TWO_MODELS, STAGING};
    for (int s = 21; s <= 23; s++) check_one_step(j, step, 3, s, moved, slots);
    CU_ASSERT_EQUAL(sc_identity_turns_since(j->id[3], &slot), 0);
    int by;
    for (int r = 0; r < 4; r++) CU_ASSERT_EQUAL(sc_identity_moves(j->id[r], &by), 0);   /* no place taken */
    job_free(j);
    turn_every = 6;
}

/* Calls of tensors first..last (1000 floats each) of step s on every
 * rank, buffers by style, as the plugin makes them: a call off the
 * pattern for a moved buffer (sc_identity_off_moved) gets the verdict the
 * coordinator would give, STRAY where every rank's call is so, else
 * REJECT, then comes on its slot.  Every rank's slot must be the same.
 * Returns how many calls every rank took off (each then learns again);
 * *offs (if given) gets how many rank-calls went off for a moved buffer. */
static int call_tensors_off(job *j, const int *style, int first, int last, int s, int *offs)
{
    int relearned = 0;
    if (offs) *offs = 0;
    for (int t = first; t <= last; t++) {
        sc_id_kind kind[NR];
        int slot[NR], moved = 0;
        sc_call_key k[NR];
        for (int r = 0; r < j->n; r++) {
            k[r] = key(1000, 1, where(style[r], r, t, s));
            k[r].gap = gap_of(r, t, s);
            kind[r] = sc_identity_next(j->id[r], &k[r], &slot[r]);
            CU_ASSERT_TRUE(kind[r] == SC_ID_SLOT || (kind[r] == SC_ID_OFF && sc_identity_off_moved(j->id[r])));
            moved += kind[r] == SC_ID_OFF;
        }
        if (offs) *offs += moved;
        sc_off_verdict v = moved == j->n ? SC_OFF_STRAY : SC_OFF_REJECT;
        for (int r = 0; r < j->n; r++) {
            if (kind[r] != SC_ID_OFF) continue;
            sc_off_verdict out = sc_identity_settle(j->id[r], v);
            CU_ASSERT_EQUAL(out, moved == j->n ? SC_OFF_RELEARN : SC_OFF_ON);
            if (out == SC_OFF_ON) CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k[r], &slot[r]), SC_ID_SLOT);
        }
        if (moved == j->n) {
            relearned++;
            continue;
        }
        for (int r = 1; r < j->n; r++) CU_ASSERT_EQUAL(slot[r], slot[0]);
    }
    return relearned;
}

static int call_tensors(job *j, const int *style, int first, int last, int s)
{
    return call_tensors_off(j, style, first, last, s, NULL);
}

static void test_step_that_left_a_gradient_out(void)
{
    /* Four gradients of one size, no loss, buffers of their own on three
     * ranks and a staging buffer on one: a step that leaves tensor 0 out
     * moves every later call a place on.  At the first such call the
     * own-buffer ranks go off the pattern, the staging rank's call is on
     * it, so theirs are too; each own-buffer rank counts the move once the
     * calls have been so for a whole step, and again at a second such step
     * (no longer off: their buffers moved once already); the staging rank
     * sees nothing.  Steps on the pattern count nothing. */
    job *j = job_new(4);
    int style[NR] = {OWN_BUFFER, OWN_BUFFER, OWN_BUFFER, STAGING};
    long step[] = {1000, 1000, 1000, 1000};
    CU_ASSERT_TRUE(learn(j, step, 4, style, 40) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    int by = -1, slots[4];
    for (int s = 40; s < 43; s++) check_one_step(j, step, 4, s, style, slots);
    CU_ASSERT_EQUAL(sc_identity_moves(j->id[0], &by), 0);
    int offs = -1;
    CU_ASSERT_EQUAL(call_tensors_off(j, style, 1, 1, 43, &offs), 0);   /* tensor 0 left out */
    CU_ASSERT_EQUAL(offs, 3);   /* the own-buffer ranks' first call after it */
    CU_ASSERT_EQUAL(call_tensors_off(j, style, 2, 3, 43, &offs), 0);
    CU_ASSERT_EQUAL(offs, 0);   /* once: their buffers are no longer kept */
    CU_ASSERT_EQUAL(sc_identity_moves(j->id[0], &by), 0);   /* not a whole step yet */
    CU_ASSERT_EQUAL(call_tensors(j, style, 0, 3, 44), 0);
    for (int r = 0; r < 3; r++) CU_ASSERT_EQUAL(sc_identity_moves(j->id[r], &by), 1);
    CU_ASSERT_EQUAL(by, 1);
    CU_ASSERT_EQUAL(sc_identity_moves(j->id[3], &by), 0);
    for (int s = 45; s < 48; s++) call_tensors(j, style, 0, 3, s);
    CU_ASSERT_EQUAL(sc_identity_moves(j->id[0], &by), 1);   /* steady in the new places */
    CU_ASSERT_EQUAL(call_tensors(j, style, 0, 1, 48), 0);   /* tensors 2 and 3 left out */
    for (int s = 49; s < 51; s++) call_tensors(j, style, 0, 3, s);
    CU_ASSERT_EQUAL(sc_identity_moves(j->id[0], &by), 2);
    CU_ASSERT_EQUAL(by, 2);
    job_free(j);

    /* Buffers of their own on every rank: every rank's first call after
     * the gap goes off the pattern, so the step is learned again there. */
    j = job_new(4);
    int own[NR] = {OWN_BUFFER, OWN_BUFFER, OWN_BUFFER, OWN_BUFFER};
    CU_ASSERT_TRUE(learn(j, step, 4, own, 40) >= 0);
    check_one_step(j, step, 4, 40, own, slots);
    CU_ASSERT_EQUAL(call_tensors(j, own, 0, 1, 41), 0);
    CU_ASSERT_EQUAL(call_tensors(j, own, 3, 3, 41), 1);   /* tensor 2 left out */
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(sc_identity_moves(j->id[r], &by), 0);
        sc_identity_relearn(j->id[r]);
        CU_ASSERT_FALSE(sc_identity_learned(j->id[r]));
    }
    job_free(j);
}

static void test_repeated_layers(void)
{
    /* W b W b: two identical layers and nothing else.  Shapes alone see a
     * step of two (the limit README.md names); a rank keeping a buffer per
     * tensor shows the step is four. */
    long step[] = {4096, 64, 4096, 64};
    int style[NR] = {OWN_BUFFER, FRESH};
    job *j = job_new(2);
    CU_ASSERT_TRUE(learn(j, step, 4, style, 40) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4);
    int slots[4];
    check_one_step(j, step, 4, 40, style, slots);
    job_free(j);
}

/* ResNet-50's gradient tensors (torchvision layout), in backward order. */
static int resnet50(long *t)
{
    int n = 0;
    t[n++] = 64 * 3 * 7 * 7;
    t[n++] = 64;
    t[n++] = 64;
    int inplanes = 64;
    const int planes_of[4] = {64, 128, 256, 512}, blocks_of[4] = {3, 4, 6, 3};
    for (int l = 0; l < 4; l++)
        for (int b = 0; b < blocks_of[l]; b++) {
            long p = planes_of[l];
            long part[] = {p * inplanes, p, p, p * p * 9, p, p, p * 4 * p, p * 4, p * 4};
            for (int i = 0; i < 9; i++) t[n++] = part[i];
            if (b == 0) {
                t[n++] = p * 4 * inplanes;
                t[n++] = p * 4;
                t[n++] = p * 4;
            }
            inplanes = (int)p * 4;
        }
    t[n++] = 1000 * 2048;
    t[n++] = 1000;
    for (int i = 0; i < n / 2; i++) {
        long x = t[i];
        t[i] = t[n - 1 - i];
        t[n - 1 - i] = x;
    }
    return n;
}

static void test_resnet50_step(void)
{
    /* 161 tensors, many of one shape (repeated blocks), plus a loss */
    long step[200];
    int n = resnet50(step);
    CU_ASSERT_EQUAL(n, 161);
    step[n++] = -1;
    job *j = job_new(4);
    long at = learn(j, step, n, same_style, 10);
    CU_ASSERT_EQUAL(at, 3L * n - 1);   /* the third step's last call: two steps repeat the first */
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 161);
    int slots[200];
    check_one_step(j, step, n, 10, same_style, slots);
    job_free(j);
}

static void test_thousand_tensors(void)
{
    /* a step of 1024 calls, told apart by one tensor of its own */
    static long step[1024];
    for (int i = 0; i < 1024; i++) step[i] = 100 + i % 7;
    step[500] = 99999;
    job *j = job_new(2);
    long at = learn(j, step, 1024, same_style, 5);
    CU_ASSERT_TRUE(at >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 1024);
    static int slots[1024];
    check_one_step(j, step, 1024, 7, same_style, slots);
    job_free(j);
}

static void test_disagreement(void)
{
    /* one rank's call has another shape: every rank hears it, the call
     * leaves the history, and learning goes on */
    job *j = job_new(3);
    sc_call_key keys[NR];
    for (int r = 0; r < 3; r++) keys[r] = key(1000, 1, 0);
    keys[2] = key(2000, 1, 0);
    int slot;
    for (int r = 0; r < 3; r++) sc_identity_next(j->id[r], &keys[r], &slot);
    CU_ASSERT_EQUAL(agree(j, keys), SC_LEARN_DISAGREE);
    long step[] = {1000, 2000, 3000};
    CU_ASSERT_EQUAL(learn(j, step, 3, same_style, 20), SC_LEARN_MIN_CALLS - 1);
    job_free(j);
}

static void test_stray_and_relearn(void)
{
    job *j = job_new(2);
    long step[] = {1000, 2000, 3000};
    CU_ASSERT_TRUE(learn(j, step, 3, same_style, 20) >= 0);
    int slots[3];
    check_one_step(j, step, 3, 30, same_style, slots);
    /* a stray call mid-step: off on every rank, and the step goes on */
    sc_call_key k = key(1000, 1, 0), x = key(77, 1, 0), b = key(2000, 1, 0);
    int slot;
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k, &slot), SC_ID_SLOT);
        CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &x, &slot), SC_ID_OFF);
        CU_ASSERT_EQUAL(slot, 1);
        CU_ASSERT_EQUAL(sc_identity_settle(j->id[r], SC_OFF_STRAY), SC_OFF_STRAY);
        CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &b, &slot), SC_ID_SLOT);
        CU_ASSERT_EQUAL(slot, 1);
    }
    /* a rejected call does not count: the position stays */
    long pos = sc_identity_position(j->id[0]);
    CU_ASSERT_EQUAL(sc_identity_next(j->id[0], &x, &slot), SC_ID_OFF);
    sc_identity_settle(j->id[0], SC_OFF_REJECT);
    CU_ASSERT_EQUAL(sc_identity_position(j->id[0]), pos);
    /* a whole step off the pattern: learn again */
    sc_off_verdict v = SC_OFF_STRAY;
    for (int i = 0; i < 10 && v == SC_OFF_STRAY; i++) {
        sc_call_key y = key(50 + i % 2, 1, 0);
        CU_ASSERT_EQUAL(sc_identity_next(j->id[1], &y, &slot), SC_ID_OFF);
        v = sc_identity_settle(j->id[1], SC_OFF_STRAY);
    }
    CU_ASSERT_EQUAL(v, SC_OFF_RELEARN);
    sc_identity_relearn(j->id[1]);
    CU_ASSERT_FALSE(sc_identity_learned(j->id[1]));
    CU_ASSERT_EQUAL(sc_identity_relearns(j->id[1]), 1);
    job_free(j);
}

/* Feeds the calls of counts (-1: the per-step loss) to both ranks of j,
 * settling each call off the pattern as a stray every rank makes. */
static void feed_calls(job *j, const long *counts, const int *kinds, int n)
{
    int slot;
    for (int t = 0; t < n; t++)
        for (int r = 0; r < 2; r++) {
            sc_call_key k = key(counts[t] < 0 ? 1 : counts[t], counts[t] > 0, 0);
            CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k, &slot), kinds[t]);
            if (kinds[t] == SC_ID_OFF) sc_identity_settle(j->id[r], SC_OFF_STRAY);
        }
}

/* A step told apart by shapes, with a per-step loss: another model's step
 * whose first tensor has the first slot's shape and whose others line up
 * after one call off the pattern (GPT-2's halves in turn) takes slots that
 * are not its own, and only the count between two losses shows it.  A
 * step of no gradient (an evaluation's loss alone) is no such step. */
static void test_misaligned_step_is_counted(void)
{
    job *j = job_new(2);
    long step[] = {1000, 2000, 3000, -1};
    CU_ASSERT_TRUE(learn(j, step, 4, same_style, 20) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    int slots[3];
    for (int s = 0; s < 2; s++) check_one_step(j, step, 4, 30 + s, same_style, slots);
    CU_ASSERT_EQUAL(sc_identity_misaligned(j->id[0]), 0);
    long evaluation[] = {-1};
    int pass[] = {SC_ID_PASS};
    feed_calls(j, evaluation, pass, 1);
    CU_ASSERT_EQUAL(sc_identity_misaligned(j->id[0]), 0);
    /* the other model: 1000 (on slot 0), 500 (off), then 2000 and 3000 on
     * slots 1 and 2, and 4000 (off): a whole step's count of calls on the
     * pattern, so not counted yet; then 1000 (slot 0) and its loss: one
     * call on the pattern since the last loss */
    long other[] = {1000, 500, 2000, 3000, 4000, -1, 1000, -1};
    int kinds[] = {SC_ID_SLOT, SC_ID_OFF, SC_ID_SLOT, SC_ID_SLOT, SC_ID_OFF, SC_ID_PASS, SC_ID_SLOT, SC_ID_PASS};
    feed_calls(j, other, kinds, 8);
    CU_ASSERT_EQUAL(sc_identity_misaligned(j->id[0]), 1);
    CU_ASSERT_EQUAL(sc_identity_misaligned(j->id[1]), 1);
    job_free(j);
}

/* Learns the step {1000, 2000, 3000, 4000, loss} on two ranks, then feeds
 * calls (kinds expected): misaligned steps, another model's or not. */
static void misaligned_after_learning(const long *calls, const int *kinds, int n, long misaligned, long foreign)
{
    long step[] = {1000, 2000, 3000, 4000, -1};
    job *j = job_new(2);
    CU_ASSERT_TRUE(learn(j, step, 5, same_style, 20) >= 0);
    int slots[4];
    for (int s = 0; s < 2; s++) check_one_step(j, step, 5, 30 + s, same_style, slots);
    feed_calls(j, calls, kinds, n);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(sc_identity_misaligned(j->id[r]), misaligned);
        CU_ASSERT_EQUAL(sc_identity_foreign(j->id[r]), foreign);
    }
    job_free(j);
}

/* An actor's step learned (Spinning Up's PPO: its gradients, then the KL
 * reduced every step), then the critic's, whose first tensors have the
 * actor's first shapes and whose last does not: calls on the pattern,
 * then one off it that no gradient left out explains, counted as another
 * model's (the communicator then stays exact).  A step that left one
 * gradient out (the calls after the gap are the next slots, in order) is
 * misaligned too, but no other model's. */
static void test_other_model_is_told_from_a_gradient_left_out(void)
{
    long critic[] = {1000, 2000, 500, -1};
    int critic_kinds[] = {SC_ID_SLOT, SC_ID_SLOT, SC_ID_OFF, SC_ID_PASS};
    misaligned_after_learning(critic, critic_kinds, 4, 1, 1);
    long left_out[] = {1000, 3000, 4000, -1};   /* 2000 left out */
    int left_out_kinds[] = {SC_ID_SLOT, SC_ID_OFF, SC_ID_OFF, SC_ID_PASS};
    misaligned_after_learning(left_out, left_out_kinds, 4, 1, 0);
    /* the step's last left out: the next step's calls come a place early,
     * off the pattern until its last (which is on it), in order */
    long last_out[] = {1000, 2000, 3000, -1, 1000, 2000, 3000, 4000, -1};
    int last_out_kinds[] = {SC_ID_SLOT, SC_ID_SLOT, SC_ID_SLOT, SC_ID_PASS, SC_ID_OFF, SC_ID_OFF, SC_ID_OFF,
                            SC_ID_SLOT, SC_ID_PASS};
    misaligned_after_learning(last_out, last_out_kinds, 9, 2, 0);
    /* two left out in a row read as another model's (README, Limits):
     * exact from there, never mixed */
    long two_out[] = {1000, 4000, -1};
    int two_out_kinds[] = {SC_ID_SLOT, SC_ID_OFF, SC_ID_PASS};
    misaligned_after_learning(two_out, two_out_kinds, 3, 1, 1);
}

/* Steps with more than one per-step call of a shape of its own: small
 * biases under STARCOLL_MIN_BYTES among the gradients (local SGD's weights:
 * loss, loss, W1, b1, W2, b2), or a loss and an accuracy around gradients
 * of one shape.  Each such call comes after the gradients since the one
 * before it, not after a whole step: no step is counted, and the pattern
 * told apart by those calls alone is not dropped. */
static void test_several_markers_in_a_step(void)
{
    job *j = job_new(2);
    long biases[] = {-1, -1, 1000, -32, 2000, -10};
    CU_ASSERT_TRUE(learn(j, biases, 6, same_style, 20) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    int slots[4];
    for (int s = 0; s < 3; s++) check_one_step(j, biases, 6, 30 + s, same_style, slots);
    CU_ASSERT_EQUAL(sc_identity_misaligned(j->id[0]), 0);
    CU_ASSERT_EQUAL(sc_identity_misaligned(j->id[1]), 0);
    job_free(j);

    j = job_new(2);
    long metrics[] = {-1, 1000, 1000, 1000, -7};
    CU_ASSERT_TRUE(learn(j, metrics, 5, same_style, 20) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    for (int s = 0; s < 3; s++) check_one_step(j, metrics, 5, 30 + s, same_style, slots);   /* SC_ID_SLOT each */
    job_free(j);
}

/* Gradients of one shape told apart by a per-step loss, then a
 * validation pass (a loss per batch, no gradient): those losses move no
 * tensor, so the step is not learned again (it was at every pass, and the
 * results the rounds owed were dropped where buffers are fresh). */
static void test_validation_pass_moves_nothing(void)
{
    job *j = job_new(2);
    long step[] = {1000, 1000, 1000, 1000, -1};
    CU_ASSERT_TRUE(learn(j, step, 5, same_style, 20) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    int slots[4];
    check_one_step(j, step, 5, 30, same_style, slots);
    long validation[] = {-1, -1, -1};
    int pass[] = {SC_ID_PASS, SC_ID_PASS, SC_ID_PASS};
    feed_calls(j, validation, pass, 3);
    int after[4];
    check_one_step(j, step, 5, 31, same_style, after);   /* SC_ID_SLOT each, not off */
    for (int t = 0; t < 4; t++) CU_ASSERT_EQUAL(after[t], slots[t]);
    CU_ASSERT_EQUAL(sc_identity_relearns(j->id[0]), 0);
    job_free(j);
}

/* PowerSGD: one step sums the packed Q factors (640 floats), the next the
 * P ones (532), each step also the packed biases (266) and a loss.  The
 * unit is the two steps; each rank computes the next factors from the last
 * sums at once, so the pattern stays exact, and says why.  A step whose
 * values sit together (a loss and an accuracy, one number each) is no
 * such pattern. */
static void test_two_patterns_in_turn(void)
{
    job *j = job_new(2);
    long psgd[] = {640, 266, -1, 532, 266, -1};
    CU_ASSERT_TRUE(learn(j, psgd, 6, same_style, 600) >= 0);
    CU_ASSERT_TRUE(sc_identity_learned(j->id[0]));
    CU_ASSERT_FALSE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_PTR_NOT_NULL(strstr(sc_identity_why_exact(j->id[1]), "two patterns in turn"));
    job_free(j);
    j = job_new(2);
    long loss_accuracy[] = {1000, 2000, 3000, -1, -1};
    CU_ASSERT_TRUE(learn(j, loss_accuracy, 5, same_style, 600) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    job_free(j);
    /* two values of their own shapes between gradients: each marks the
     * one step, none is a step of its own */
    j = job_new(2);
    long two_values[] = {1000, 2000, -1, 3000, 4000, -3};
    CU_ASSERT_TRUE(learn(j, two_values, 6, same_style, 600) >= 0);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4);
    job_free(j);
}

/* A model of identical narrow blocks, each a weight and a bias under the
 * size floor (an MLP of eight 32-wide layers), then a loss: the bias is in
 * every block, so the first step's run of blocks, [W b] eight times, is
 * no step of one block; the loss marks the step of all eight.  With no
 * loss, buffers of their own show the step, after a run longer than such
 * layers run in a step (SC_BLOCK_RUN_MAX; fresh ones cannot: Limits).  A
 * step of distinct shapes whose only sums under the floor are its biases
 * (a tensor-parallel code's replicas, whose loss is summed on another
 * communicator) is learned after that run too. */
static void test_narrow_blocks_small_biases(void)
{
    long step[17];
    for (int b = 0; b < 8; b++) step[2 * b] = 1024, step[2 * b + 1] = -32;
    step[16] = -1;
    static const int own_style[NR] = {OWN_BUFFER, OWN_BUFFER, OWN_BUFFER, OWN_BUFFER};
    const int *styles[] = {same_style, own_style};
    int slots[8];
    for (int k = 0; k < 2; k++) {
        job *j = job_new(4);
        long at = learn(j, step, 17, styles[k], 40);
        CU_ASSERT_TRUE(at >= 17);   /* not inside the first step */
        CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
        CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 8);
        check_one_step(j, step, 17, 50, styles[k], slots);
        job_free(j);
    }
    job *j = job_new(4);
    long at = learn(j, step, 16, own_style, 400);
    CU_ASSERT_TRUE(at >= 2 * 2 + SC_BLOCK_RUN_MAX);
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 8);
    check_one_step(j, step, 16, 400, own_style, slots);
    job_free(j);
    long replicas[] = {640, -10, 2048, -32};
    j = job_new(4);
    at = learn(j, replicas, 4, same_style, 200);
    CU_ASSERT_TRUE(at >= 2 * 4 + SC_BLOCK_RUN_MAX);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 2);
    job_free(j);
}

/* A one-number parameter in every layer (a ReZero gate after each of
 * GPT-2's identical blocks), between a head and embeddings, then a loss:
 * the gate marks a block, whose run follows the head's gradients, so the
 * block is no step; the whole step is learned, and with its twelve gates
 * and the loss (SC_LAYER_VALUES_MIN) it is one pattern, not two in turn.
 * With six blocks it stays exact.  A loss-marked step after a count
 * summed once at start is learned at once; after a gradient that does not
 * repeat, once the run has outlasted a model's blocks. */
static void test_one_number_in_every_layer(void)
{
    long step[41];
    static const int own_style[NR] = {OWN_BUFFER, OWN_BUFFER, OWN_BUFFER, OWN_BUFFER};
    const int *styles[] = {same_style, own_style};
    for (int blocks = 12; blocks >= 6; blocks -= 6) {
        int len = 0;
        step[len++] = 5000, step[len++] = 300;
        for (int b = 0; b < blocks; b++) step[len++] = 1000, step[len++] = 400, step[len++] = -1;
        step[len++] = 7000, step[len++] = 6000, step[len++] = -1;
        for (int k = 0; k < 2; k++) {
            job *j = job_new(4);
            long at = learn(j, step, len, styles[k], 60);
            CU_ASSERT_TRUE(at >= len);   /* not inside the first step */
            CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 4 + 2 * blocks);
            if (blocks == 12) {
                CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
                int slots[28];
                check_one_step(j, step, len, 70, styles[k], slots);
            } else {
                CU_ASSERT_FALSE(sc_identity_trusted(j->id[0]));
                CU_ASSERT_PTR_NOT_NULL(strstr(sc_identity_why_exact(j->id[0]), "a ReZero gate"));
            }
            job_free(j);
        }
    }
    long loss_step[] = {1000, 2000, -1};
    long count_first[] = {-3}, gradient_first[] = {5000};
    job *j = job_new(2);
    learn_prefix(j, count_first, 1, 0);
    long at = learn(j, loss_step, 3, same_style, 200);
    CU_ASSERT_TRUE(at >= 0 && at < 12);
    job_free(j);
    j = job_new(2);
    learn_prefix(j, gradient_first, 1, 0);
    CU_ASSERT_TRUE(learn(j, loss_step, 3, same_style, 200) >= 2 * 3 + SC_BLOCK_RUN_MAX - 1);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 2);
    job_free(j);
    /* Counts and flags summed at start, more than the history holds
     * (3 * SC_STEP_MAX calls, each of another count, never a step):
     * still no gradient before the steps, which are learned at once.
     * Before, calls past the history's reach counted as a gradient, and
     * the step waited out a model's blocks. */
    static long values[3 * SC_STEP_MAX + 100];
    for (long t = 0; t < 3 * SC_STEP_MAX + 100; t++) values[t] = -(10 + t);
    j = job_new(2);
    learn_prefix(j, values, 3 * SC_STEP_MAX + 100, 1);
    at = learn(j, loss_step, 3, same_style, 200);
    CU_ASSERT_TRUE(at >= 0 && at < 12);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    job_free(j);
}

/* Gradients of one shape told apart by a loss: the slot of the gradient
 * after the loss is said (sc_identity_marker_slot), wherever the step was
 * learned from, so that a pattern learned again maps the results of the
 * dropped one onto the same tensors.  None without a per-step call. */
static void test_marker_slot(void)
{
    long after_loss[] = {-1, 1000, 1000, 1000}, loss_between[] = {1000, -1, 1000, 1000};
    const long *steps[] = {after_loss, loss_between};
    int first_after[] = {0, 1};   /* the step's eligible call right after the loss */
    for (int v = 0; v < 2; v++)
        for (int extra = 0; extra < 3; extra++) {
            job *j = job_new(2);
            /* a few calls first, so learning ends at another place of the step */
            for (int t = 0; t < extra; t++)
                for (int r = 0; r < 2; r++) {
                    sc_call_key k = key(77 + t, 1, 0);
                    int slot;
                    CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k, &slot), SC_ID_LEARNING);
                }
            CU_ASSERT_TRUE(learn(j, steps[v], 4, same_style, 20) >= 0);
            CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
            int slots[3];
            check_one_step(j, steps[v], 4, 40, same_style, slots);
            uint64_t shape = 0;
            for (int r = 0; r < 2; r++) CU_ASSERT_EQUAL(sc_identity_marker_slot(j->id[r], &shape), slots[first_after[v]]);
            CU_ASSERT_EQUAL(shape, key(1, 0, 0).shape);
            job_free(j);
        }
    job *j = job_new(2);
    long no_loss[] = {1000, 2000, 3000};
    CU_ASSERT_TRUE(learn(j, no_loss, 3, same_style, 20) >= 0);
    CU_ASSERT_EQUAL(sc_identity_marker_slot(j->id[0], NULL), -1);
    job_free(j);
}

/* One model trained in turn with another of other shapes (two halves of a
 * network, a GAN's critic and generator): the first model's step, dropped
 * at the second's after two of its calls, is resumed where it left off
 * once calls continue it (a whole step and SC_RESUME_EXTRA calls more),
 * its slots turned to start where they reached, and its lineage
 * says it is the same pattern. */
static void test_resumed_where_it_left_off(void)
{
    job *j = job_new(2);
    long step[] = {1000, 2000, 3000, 4000};
    CU_ASSERT_TRUE(learn(j, step, 4, same_style, 20) >= 0);
    int rot = -1;
    long lineage = sc_identity_lineage(j->id[0], &rot);
    CU_ASSERT_EQUAL(rot, 0);
    int slot;
    for (int r = 0; r < 2; r++)
        for (int t = 0; t < 2; t++) {
            sc_call_key k = key(step[t], 1, 0);
            CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k, &slot), SC_ID_SLOT);
        }
    /* the other model: a whole step off, learned again */
    for (int r = 0; r < 2; r++) {
        sc_off_verdict v = SC_OFF_STRAY;
        for (int i = 0; i < 10 && v == SC_OFF_STRAY; i++) {
            sc_call_key y = key(50 + i, 1, 0);
            CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &y, &slot), SC_ID_OFF);
            v = sc_identity_settle(j->id[r], SC_OFF_STRAY);
        }
        CU_ASSERT_EQUAL(v, SC_OFF_RELEARN);
        sc_identity_relearn(j->id[r]);
    }
    /* the first model again, from its third tensor: learning calls, until
     * they continued the dropped pattern for a whole step and
     * SC_RESUME_EXTRA calls more */
    long order[] = {3000, 4000, 1000, 2000};
    int done_at = -1;
    for (int t = 0; t < 200 && done_at < 0; t++) {
        sc_call_key keys[NR];
        for (int r = 0; r < 2; r++) {
            keys[r] = key(order[t % 4], 1, 0);
            CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &keys[r], &slot), SC_ID_LEARNING);
        }
        if (agree(j, keys) == SC_LEARN_DONE) done_at = t;
    }
    CU_ASSERT_TRUE(done_at >= 3);
    CU_ASSERT_TRUE(sc_identity_trusted(j->id[0]));
    CU_ASSERT_PTR_NOT_NULL(strstr(sc_identity_how(j->id[0]), "resumed where it left off"));
    CU_ASSERT_EQUAL(sc_identity_lineage(j->id[1], &rot), lineage);
    CU_ASSERT_EQUAL(rot, (done_at + 3) % 4);   /* its slot 0 is the pattern's slot rot as learned */
    for (int r = 0; r < 2; r++)
        for (int t = 0; t < 4; t++) {
            sc_call_key k = key(order[(done_at + 1 + t) % 4], 1, 0);
            CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &k, &slot), SC_ID_SLOT);
            CU_ASSERT_EQUAL(slot, t);
        }
    job_free(j);
}

/* A code's first calls all small (under the threshold: a benchmark's
 * first sizes, a startup's metadata): the step learned holds no eligible
 * call.  The first eligible call is off it, with no slot to read, and
 * every rank learns again at once. */
static void test_step_of_no_eligible_call(void)
{
    job *j = job_new(2);
    long step[] = {-1};
    CU_ASSERT_TRUE(learn(j, step, 1, same_style, 100) >= 0);
    CU_ASSERT_TRUE(sc_identity_learned(j->id[0]));
    CU_ASSERT_EQUAL(sc_identity_slots(j->id[0]), 0);
    sc_call_key big = key(4096, 1, 0);
    for (int r = 0; r < 2; r++) {
        int slot = 7;
        CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &big, &slot), SC_ID_OFF);
        CU_ASSERT_EQUAL(slot, -1);   /* no slot: tolerant_call.c must not read one */
        CU_ASSERT_EQUAL(sc_identity_settle(j->id[r], SC_OFF_STRAY), SC_OFF_RELEARN);
        sc_identity_relearn(j->id[r]);
        CU_ASSERT_FALSE(sc_identity_learned(j->id[r]));
    }
    job_free(j);
}

static void test_never_periodic(void)
{
    job *j = job_new(2);
    for (long i = 0; i < 3000; i++) {
        sc_call_key keys[NR] = {key(100 + i, 1, 0), key(100 + i, 1, 0)};
        int slot;
        for (int r = 0; r < 2; r++) CU_ASSERT_EQUAL(sc_identity_next(j->id[r], &keys[r], &slot), SC_ID_LEARNING);
        CU_ASSERT_EQUAL(agree(j, keys), SC_LEARN_GO_ON);
    }
    CU_ASSERT_FALSE(sc_identity_learned(j->id[0]));
    CU_ASSERT_STRING_EQUAL(sc_identity_why_exact(j->id[0]), "pattern not learned");
    job_free(j);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("call identity", NULL, NULL);
    CU_add_test(s, "distinct shapes, buffers fresh every step", test_distinct_shapes_fresh_buffers);
    CU_add_test(s, "one rank's step gaps every other step only", test_one_rank_gappy_every_other_step);
    CU_add_test(s, "addresses move on some ranks only", test_addresses_move_on_some_ranks);
    CU_add_test(s, "a run of equal shapes inside a step", test_run_of_equal_shapes);
    CU_add_test(s, "one staging buffer, one count: exact, and why", test_staging_one_count_is_exact);
    CU_add_test(s, "one staging buffer, one count, a per-step loss", test_staging_one_count_with_loss);
    CU_add_test(s, "a buffer per tensor lengthens the step", test_own_buffers_lengthen_the_step);
    CU_add_test(s, "the code's work between calls is no step gap", test_work_between_calls_is_no_step_gap);
    CU_add_test(s, "repeated identical layers", test_repeated_layers);
    CU_add_test(s, "an allocator's period is no step", test_allocator_period_is_no_step);
    CU_add_test(s, "two models of one shape in turn: exact", test_two_models_in_turn);
    CU_add_test(s, "buffers of their own: learning lasts long enough", test_own_buffers_learn_long_enough);
    CU_add_test(s, "two models in turn after the learning: counted", test_two_models_after_learning);
    CU_add_test(s, "a step that left a gradient out: counted where buffers show it", test_step_that_left_a_gradient_out);
    CU_add_test(s, "ResNet-50's 161 tensors and a loss", test_resnet50_step);
    CU_add_test(s, "GPT-2's repeated blocks are not a step", test_repeated_blocks_are_not_a_step);
    CU_add_test(s, "a step of 1024 calls", test_thousand_tensors);
    CU_add_test(s, "ranks whose calls disagree", test_disagreement);
    CU_add_test(s, "stray call, rejected call, new pattern", test_stray_and_relearn);
    CU_add_test(s, "a step that held part of the learned one between two losses is counted", test_misaligned_step_is_counted);
    CU_add_test(s, "another model's step told from one that left a gradient out", test_other_model_is_told_from_a_gradient_left_out);
    CU_add_test(s, "several per-step calls in a step: none counted, none dropped", test_several_markers_in_a_step);
    CU_add_test(s, "identical narrow blocks with small biases, and a loss", test_narrow_blocks_small_biases);
    CU_add_test(s, "a validation pass between steps moves no tensor", test_validation_pass_moves_nothing);
    CU_add_test(s, "a one-number parameter in every layer (ReZero) is no step marker", test_one_number_in_every_layer);
    CU_add_test(s, "two patterns in turn, each with its loss (PowerSGD): exact", test_two_patterns_in_turn);
    CU_add_test(s, "the slot after the loss, wherever the step was learned from", test_marker_slot);
    CU_add_test(s, "a step dropped for another model's, resumed where it left off", test_resumed_where_it_left_off);
    CU_add_test(s, "no period: stays learning", test_never_periodic);
    CU_add_test(s, "a step of no eligible call, then an eligible one", test_step_of_no_eligible_call);
    return sc_cunit_run();
}
