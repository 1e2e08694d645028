#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include "report.h"
#include "runtime.h"
#include "monitor.h"
#include "outfile.h"
#include "report_stragglers.h"

/* Per-row fields reduced with MPI_SUM, then with MPI_MAX. */
enum { F_ELIG, F_PASS, F_BYTES, F_TIME, F_MODE0, F_SIZE = F_MODE0 + SC_NMODES, F_INST, F_RANKS,
       F_STEPS, F_ROUNDS, F_FRESH, F_LATE, F_STALE, F_WAIT, F_CHILD, F_XCALLS, F_XTIME, F_COMPUTE, F_RELAXED,
       F_NEGMINFRESH, F_LEARN, F_AMBIG, F_STRAY, F_RELEARN, F_FAILED, F_CARRY, F_TURNED, F_MISALIGNED, F_MOVED, F_NB, F_OVERLAP, F_FUSED, F_COPIED, F_POLLED, F_DEV_CALLS, F_DEV_BYTES, F_DEV_S,
       F_DEV_MODE0, F_DEV_EXACT = F_DEV_MODE0 + SC_NMODES, F_DEV_PINNED, F_DEV_NCCL, F_HOST_ASKED,
       F_HOST_TIMED, F_HOST_TIMED_S, F_XSMALL0, F_XSMALLN0 = F_XSMALL0 + SC_EXACT_SMALL_SEEN,
       F_WHY0 = F_XSMALLN0 + SC_EXACT_SMALL_SEEN,
       F_N = F_WHY0 + SC_ELIG_NREASONS_MAX };

/* What happened to calls on CUDA device buffers (device.h): by the mode
 * that ran the eligible ones, the others exact through MPI; the staging. */
static void write_device(FILE *f, const double *tot)
{
    char modes[256] = "";
    size_t at = 0;
    for (int k = 0; k < SC_MODE_AUTO && at < sizeof modes; k++)
        if (tot[F_DEV_MODE0 + k] > 0)
            at += (size_t)snprintf(modes + at, sizeof modes - at, "%s%.0f %s", at ? ", " : "", tot[F_DEV_MODE0 + k],
                                   sc_mode_name((sc_mode)k));
    fprintf(f, "@ Device    : %.0f calls on CUDA device buffers (summed over ranks): eligible ones %s; %.0f not "
               "eligible, exact through MPI\n", tot[F_DEV_CALLS], at ? modes : "none", tot[F_DEV_EXACT]);
    fprintf(f, "@ Device    : staged through host memory (%.0f calls in pinned memory): %.4g bytes copied, %.3f s "
               "copying per rank\n",
            tot[F_DEV_PINNED], tot[F_DEV_BYTES], tot[F_DEV_S] / (sc_rt.world_size > 0 ? sc_rt.world_size : 1));
    if (tot[F_DEV_NCCL] > 0)
        fprintf(f, "@ Device    : NCCL: %.0f eligible calls (summed over ranks) reduced with ncclAllReduce on %d "
                   "communicator(s); a rank's host buffers ride through device memory\n",
                tot[F_DEV_NCCL], sc_rt.nccl_comms);
    else
        fprintf(f, "@ Device    : NCCL not used: %s\n", sc_rt.nccl_why[0] ? sc_rt.nccl_why : "no communicator tried it");
}

/* What recognising device buffers cost host buffers: pointers outside the
 * heap, the caller's stack and the program's data are asked of the driver
 * (device.h).  Said wherever it happened, so a job with CUDA loaded and
 * host buffers sees its price and how to drop it. */
static void write_host_asked(FILE *f, const double *tot)
{
    double each = tot[F_HOST_TIMED] > 0 ? tot[F_HOST_TIMED_S] / tot[F_HOST_TIMED] : 0;
    fprintf(f, "@ Device    : the CUDA driver was asked about %.0f host pointers (summed over ranks), %.2f us each "
               "on average (one in 16 timed), about %.3g s per rank in all%s\n",
            tot[F_HOST_ASKED], 1e6 * each, each * tot[F_HOST_ASKED] / (sc_rt.world_size > 0 ? sc_rt.world_size : 1),
            tot[F_DEV_CALLS] > 0 || tot[F_DEV_NCCL] > 0
                ? ""
                : "; no call was on device buffers: STARCOLL_CUDA=off would not ask");
}

/* A report row as world rank 0 gathers it: which communicator
 * (sc_report_label), its fields, and why its calls stayed exact. */
typedef struct wire_row {
    double ord, leader;
    double v[F_N];
    char why[400];
} wire_row;

/* Every rank's rows, one per communicator, in their names' order (world
 * rank 0).  Past MERGED_MAX communicators, the last row lumps the rest. */
#define MERGED_MAX 64
typedef struct merged {
    int n;
    double sum[MERGED_MAX * F_N], max[MERGED_MAX * F_N];
    int ord[MERGED_MAX], leader[MERGED_MAX];
    char label[MERGED_MAX][24];
    char why[MERGED_MAX][400];
} merged;

void sc_report_label(int ord, int leader, char *buf, size_t len)
{
    if (ord >= SC_REPORT_ROWS - 1) snprintf(buf, len, "%d+", SC_REPORT_ROWS - 1);
    else if (leader <= 0) snprintf(buf, len, "%d", ord);
    else snprintf(buf, len, "%d@%d", ord, leader);
}

static void pack(wire_row *w, int r)
{
    const sc_stats *s = &sc_rt.rows[r];
    double *o = w->v;
    w->ord = s->label_ord;
    w->leader = s->leader;
    snprintf(w->why, sizeof w->why, "%s", sc_rt.row_why[r]);
    o[F_ELIG] = s->eligible;
    o[F_PASS] = s->passthrough;
    o[F_BYTES] = s->bytes;
    o[F_TIME] = s->time_in;
    for (int k = 0; k < SC_NMODES; k++) o[F_MODE0 + k] = s->mode_calls[k];
    o[F_SIZE] = s->size;
    o[F_INST] = s->instances;
    o[F_RANKS] = s->instances > 0;
    o[F_STEPS] = s->steps;
    o[F_ROUNDS] = s->rounds;
    o[F_FRESH] = s->fresh_sum;
    o[F_LATE] = s->late_calls;
    o[F_STALE] = s->max_stale;
    o[F_WAIT] = s->wait_s;
    o[F_CHILD] = s->child_rounds;
    o[F_XCALLS] = s->exact_in_tolerant;
    o[F_XTIME] = s->exact_in_tolerant_s;
    o[F_COMPUTE] = s->compute_s;
    o[F_RELAXED] = s->relaxed;
    o[F_NEGMINFRESH] = s->min_fresh > 0 ? -s->min_fresh : -1e9;   /* reduced with MAX: the least min */
    o[F_LEARN] = s->learning_calls;
    o[F_AMBIG] = s->ambiguous_calls;
    o[F_STRAY] = s->stray_calls;
    o[F_RELEARN] = s->relearns;
    o[F_FAILED] = s->failed;
    o[F_CARRY] = s->carries_left;
    o[F_TURNED] = s->turned;
    o[F_MISALIGNED] = s->misaligned;
    o[F_MOVED] = s->moved;
    o[F_NB] = s->nonblocking;
    o[F_OVERLAP] = s->overlapped;
    o[F_FUSED] = s->fused_calls;
    o[F_COPIED] = s->copied_bytes;
    o[F_POLLED] = s->polled;
    o[F_DEV_CALLS] = s->device_calls;
    o[F_DEV_BYTES] = s->device_bytes;
    o[F_DEV_S] = s->device_s;
    for (int k = 0; k < SC_NMODES; k++) o[F_DEV_MODE0 + k] = s->device_mode[k];
    o[F_DEV_EXACT] = s->device_exact;
    o[F_DEV_PINNED] = s->device_pinned;
    o[F_DEV_NCCL] = s->device_nccl;
    o[F_HOST_ASKED] = s->host_asked.host_pointers;
    o[F_HOST_TIMED] = s->host_asked.timed;
    o[F_HOST_TIMED_S] = s->host_asked.seconds;
    for (int k = 0; k < SC_EXACT_SMALL_SEEN; k++) {
        o[F_XSMALL0 + k] = s->exact_small[k];
        o[F_XSMALLN0 + k] = s->exact_small_calls[k];
    }
    for (int k = 0; k < SC_ELIG_NREASONS_MAX; k++) o[F_WHY0 + k] = s->why_not[k];
}

/* Folds one rank's row into the row of its communicator: fields summed,
 * and their maxima. */
static void merge_row(merged *t, const wire_row *w)
{
    int ord = (int)w->ord, leader = ord >= SC_REPORT_ROWS - 1 ? -1 : (int)w->leader, i = 0;
    while (i < t->n && !(t->ord[i] == ord && t->leader[i] == leader)) i++;
    if (i == MERGED_MAX) {
        i = MERGED_MAX - 1;
        t->ord[i] = INT_MAX;   /* lumped: sorted last */
        snprintf(t->label[i], sizeof t->label[i], "more");
    } else if (i == t->n) {
        t->n++;
        t->ord[i] = ord;
        t->leader[i] = leader;
        sc_report_label(ord, leader, t->label[i], sizeof t->label[i]);
        memcpy(t->max + i * F_N, w->v, sizeof w->v);
    }
    for (int k = 0; k < F_N; k++) {
        t->sum[i * F_N + k] += w->v[k];
        if (w->v[k] > t->max[i * F_N + k]) t->max[i * F_N + k] = w->v[k];
    }
    if (!t->why[i][0]) memcpy(t->why[i], w->why, sizeof t->why[i]);
}

static void swap_bytes(void *a, void *b, size_t n)
{
    unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = x[i];
        x[i] = y[i];
        y[i] = c;
    }
}

static void swap_rows(merged *t, int a, int b)
{
    swap_bytes(t->sum + a * F_N, t->sum + b * F_N, sizeof(double) * F_N);
    swap_bytes(t->max + a * F_N, t->max + b * F_N, sizeof(double) * F_N);
    swap_bytes(&t->ord[a], &t->ord[b], sizeof t->ord[0]);
    swap_bytes(&t->leader[a], &t->leader[b], sizeof t->leader[0]);
    swap_bytes(t->label[a], t->label[b], sizeof t->label[0]);
    swap_bytes(t->why[a], t->why[b], sizeof t->why[0]);
}

/* Every rank's LEN bytes at world rank 0, in rank order, *total bytes in
 * all, with one byte more after them (a text's end); NULL elsewhere, or
 * when they cannot be had (the ranks agree before each collective, so a
 * rank 0 out of memory costs no rank a hang). */
static char *gather_bytes(const void *mine, int len, size_t *total)
{
    int n = sc_rt.world_size, me = sc_rt.world_rank;
    int *lens = me == 0 ? calloc((size_t)n, sizeof(int)) : NULL, *at = me == 0 ? calloc((size_t)n, sizeof(int)) : NULL;
    int ok = me != 0 || (lens && at), all = 0;
    char *out = NULL;
    *total = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && all &&
        PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS) {
        for (int r = 0; me == 0 && r < n; r++) {
            at[r] = (int)*total;
            *total += (size_t)lens[r];
        }
        out = me == 0 ? malloc(*total + 1) : NULL;
        ok = me != 0 || out;
        if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !all ||
            PMPI_Gatherv(mine, len, MPI_BYTE, out, lens, at, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
            free(out);
            out = NULL;
        }
    }
    free(lens);
    free(at);
    return out;
}

/* Each rank's rows of communicators it used, at world rank 0, one row per
 * communicator (NULL elsewhere, or when they cannot be had).  Keyed by
 * name, not by each rank's own order: disjoint communicators (a split's
 * colours) and communicators two threads first used in different orders
 * keep rows of their own. */
static merged *gather_rows(void)
{
    wire_row mine[SC_REPORT_ROWS];
    int nmine = 0;
    memset(mine, 0, sizeof mine);
    for (int r = 0; r < SC_REPORT_ROWS; r++)
        if (sc_rt.rows[r].instances > 0) pack(&mine[nmine++], r);
    size_t total = 0;
    wire_row *all_rows = (wire_row *)gather_bytes(mine, nmine * (int)sizeof(wire_row), &total);
    merged *t = all_rows ? calloc(1, sizeof *t) : NULL;
    if (t) {
        for (size_t i = 0; i < total / sizeof(wire_row); i++) merge_row(t, &all_rows[i]);
        for (int a = 1; a < t->n; a++)   /* by name: order at rank 0, then that rank */
            for (int b = a; b > 0 && (t->ord[b - 1] > t->ord[b] ||
                                      (t->ord[b - 1] == t->ord[b] && t->leader[b - 1] > t->leader[b])); b--)
                swap_rows(t, b - 1, b);
    }
    free(all_rows);
    return t;
}

/* Three copies of a layer in a row can pass for steps (identity_evidence.c,
 * need_matches); a loss and a validation pass's come fewer times. */
#define SC_SMALL_REPEATED 2.5

/* Which of those exact calls were sums kept exact for their size alone
 * (every rank sees the same first counts: the maxima are the counts), and
 * how to let them ride if they are gradients: not where one count comes
 * several times a step (sum: its calls over every rank), as a bias or a
 * one-number gate in each of identical layers: riding, such layers leave
 * no call to tell one from a step, and may pass for steps whose tensors
 * mix (README, Limits). */
static void write_small_advice(FILE *f, const char *label, const double *m, const double *sum, double steps)
{
    char counts[96] = "", repeated[96] = "";
    size_t at = 0, rat = 0;
    int n = 0, nrep = 0;
    for (int k = 0; k < SC_EXACT_SMALL_SEEN && m[F_XSMALL0 + k] > 0 && at < sizeof counts; k++, n++) {
        at += (size_t)snprintf(counts + at, sizeof counts - at, "%s%.0f", k ? ", " : "", m[F_XSMALL0 + k]);
        double per_step = steps > 0 ? sum[F_XSMALLN0 + k] / steps : 0;
        if (per_step >= SC_SMALL_REPEATED && rat < sizeof repeated)
            rat += (size_t)snprintf(repeated + rat, sizeof repeated - rat, "%s%.0f (%.0f a step)", nrep++ ? ", " : "",
                                    m[F_XSMALL0 + k], per_step);
    }
    if (!n) return;
    fprintf(f, "@ comm %s: of them, sums of %s element%s stayed exact for being under STARCOLL_MIN_BYTES (%zu bytes);",
            label, counts, n == 1 && m[F_XSMALL0] == 1 ? "" : "s", sc_rt.policy.min_bytes);
    if (nrep)
        fprintf(f, " sums of %s come several times a step, as a bias or a one-number gate in each of identical"
                   " layers would: with STARCOLL_MIN_BYTES under them, no call tells such layers from steps, and their"
                   " tensors may mix (README, Limits), so keep the default unless the layers differ in shape\n",
                repeated);
    else
        fprintf(f, " if they are gradients (small biases), STARCOLL_MIN_BYTES=4 lets them ride with the step, and"
                   " STARCOLL_EXACT then keeps a loss or metric among them exact (STARCOLL_EXACT=1 for a one-number"
                   " loss)\n");
}

/* The tolerant modes: rounds, freshness, lateness, staleness, children,
 * waiting, and exact collectives inside tolerant steps. */
static void write_tolerant(FILE *f, const merged *t)
{
    const double *sum = t->sum, *max = t->max;
    int any = 0;
    for (int r = 0; r < t->n; r++) any |= sum[r * F_N + F_ROUNDS] > 0;
    if (!any) return;
    fprintf(f, "@--- Tolerant rounds per communicator (rounds per rank; staleness in rounds) ---\n");
    fprintf(f, "%4s %7s %8s %11s %10s %10s %11s %10s %15s\n", "comm", "steps", "rounds", "fresh/round", "late calls",
            "max stale", "child rnds", "wait(s)", "avoided(s/rank)");
    for (int r = 0; r < t->n; r++) {
        const double *s = sum + r * F_N, *m = max + r * F_N;
        if (s[F_ROUNDS] <= 0) continue;
        double ranks = s[F_RANKS] > 0 ? s[F_RANKS] : 1;
        /* Under sync every rank would wait, at least, for the slowest
         * rank's compute: estimate the waiting avoided against that. */
        double sync_wait = (ranks * m[F_COMPUTE] - s[F_COMPUTE]) / ranks;
        double avoided = sync_wait - s[F_WAIT] / ranks;
        fprintf(f, "%4s %7.0f %8.0f %11.2f %10.0f %10.0f %11.0f %10.3f %15.3f\n", t->label[r], s[F_STEPS] / ranks,
                s[F_ROUNDS] / ranks, s[F_FRESH] / s[F_ROUNDS], s[F_LATE], m[F_STALE], s[F_CHILD],
                s[F_WAIT] / ranks, avoided);
        if (s[F_FUSED] > 0)
            fprintf(f, "@ comm %s: %.1f small-tensor calls per step rode in fused rounds (under STARCOLL_FUSE_BYTES;"
                       " each returns its tensor's sum one step late)\n",
                    t->label[r], s[F_STEPS] > 0 ? s[F_FUSED] / s[F_STEPS] : 0);
        if (s[F_STEPS] > 0)
            fprintf(f, "@ comm %s: %.4g bytes per step copied per rank to and from the callers' buffers (deposits,"
                       " fused stages, results not reduced straight into a waiting caller's buffer)\n",
                    t->label[r], s[F_COPIED] / s[F_STEPS]);
        double per_step = s[F_STEPS] > 0 ? s[F_XCALLS] / s[F_STEPS] : 0;
        if (per_step >= 0.5) {
            fprintf(f, "@ comm %s: %.1f exact MPI_Allreduce per step (ineligible or off the pattern, e.g. a loss or metric)"
                       " cost %.3f s per rank: each makes every rank wait for the slowest and undoes the tolerance;"
                       " reduce it every few steps, or make it eligible\n",
                    t->label[r], per_step, s[F_XTIME] / ranks);
            write_small_advice(f, t->label[r], m, s, s[F_STEPS]);
        }
        if (s[F_RELAXED] > 0)
            fprintf(f, "@ comm %s: %.0f rounds closed below the quorum after long waits without progress (ranks blocked"
                       " in a call starcoll cannot see, such as an exact collective each step, or not running at all on"
                       " a loaded machine)\n", t->label[r], s[F_RELAXED]);
    }
}

/* Communicators whose engine polled its collectives (STARCOLL_COLL_WAIT;
 * polled_coll.h), rounds or direct steps. */
static void write_polled(FILE *f, const merged *t)
{
    for (int r = 0; r < t->n; r++) {
        const double *s = t->sum + r * F_N;
        if (s[F_POLLED] <= 0) continue;
        double ranks = s[F_RANKS] > 0 ? s[F_RANKS] : 1;
        fprintf(f, "@ comm %s: %.0f rounds and direct-step calls per rank waited polled (STARCOLL_COLL_WAIT=%s)\n",
                t->label[r], s[F_POLLED] / ranks,
                sc_rt.policy.coll_wait == SC_WAIT_POLLED ? "polled"
                                                         : "auto: a rank ran another communicator's engine");
    }
}

/* Eligible calls a tolerant policy kept exact, and why (call identity:
 * identity.h): learning, tensors not told apart, strays, relearns, and
 * calls that failed because the ranks' calls disagreed. */
static void write_identity(FILE *f, const merged *t)
{
    const double *sum = t->sum;
    int any = 0;
    for (int r = 0; r < t->n; r++) {
        const double *s = sum + r * F_N;
        any |= s[F_LEARN] + s[F_AMBIG] + s[F_STRAY] + s[F_RELEARN] + s[F_FAILED] + s[F_CARRY] + s[F_TURNED] + s[F_MISALIGNED] +
               s[F_MOVED] > 0;
    }
    if (!any) return;
    fprintf(f, "@--- Eligible calls kept exact under a tolerant policy, and why (calls summed over ranks) ---\n");
    for (int r = 0; r < t->n; r++) {
        const double *s = sum + r * F_N;
        double ranks = s[F_RANKS] > 0 ? s[F_RANKS] : 1;
        if (s[F_LEARN] > 0)
            fprintf(f, "@ comm %s: %.0f stayed exact while the step's pattern was learned (agreed on by every rank)\n", t->label[r],
                    s[F_LEARN]);
        if (s[F_AMBIG] > 0)
            fprintf(f, "@ comm %s: %.0f stayed exact because the step's tensors cannot be told apart: %s\n", t->label[r], s[F_AMBIG],
                    t->why[r][0] ? t->why[r] : "(reason not recorded)");
        if (s[F_STRAY] > 0)
            fprintf(f, "@ comm %s: %.0f stray calls every rank made off the pattern ran exact\n", t->label[r], s[F_STRAY]);
        if (s[F_RELEARN] > 0)
            fprintf(f, "@ comm %s: the calls' pattern changed %.0f time(s) and was learned again\n", t->label[r], s[F_RELEARN] / ranks);
        if (s[F_FAILED] > 0)
            fprintf(f, "@ comm %s: %.0f calls failed (each rank said why on stderr)\n", t->label[r], s[F_FAILED]);
        if (s[F_CARRY] > 0)
            fprintf(f, "@ comm %s: %.0f results of a dropped pattern were never delivered (that pattern did not come "
                       "back before MPI_Finalize)\n", t->label[r], s[F_CARRY]);
        if (s[F_MISALIGNED] > 0)
            fprintf(f, "@ comm %s: %.0f step(s) between two per-step calls held calls on the learned pattern but not a "
                       "whole step of it: another model's step in turn, whose shapes line up with this one's?  Their "
                       "rounds may have summed one tensor into another; give each model its own communicator "
                       "(MPI_Comm_dup) or run STARCOLL_MODE=sync\n", t->label[r], s[F_MISALIGNED] / ranks);
        if (s[F_TURNED] > 0)
            fprintf(f, "@ comm %s: on %.0f rank(s) a tensor's buffer went to another one and came back, twice, after the "
                       "step was learned: two models of one shape trained in turn?  Tolerant rounds may have summed one "
                       "into the other; give each model a communicator of its own (MPI_Comm_dup) or run "
                       "STARCOLL_MODE=sync\n", t->label[r], s[F_TURNED]);
        if (s[F_MOVED] > 0)
            fprintf(f, "@ comm %s: on %.0f rank(s) each tensor's buffer came earlier in the step than it had, all at once "
                       "and for a whole step, after the step was learned: a step that left a gradient out?  No shape "
                       "and no per-step call shows where these steps start, so tolerant rounds may have summed one "
                       "tensor into another there; reduce a loss every step (MPI_Allreduce) or run "
                       "STARCOLL_MODE=sync\n",
                    t->label[r], s[F_MOVED]);
    }
}

/* Calls not reshaped, by reason, per communicator; and the nonblocking
 * calls.  Eligible calls kept exact by the identity are in write_identity. */
static void write_not_reshaped(FILE *f, const merged *t)
{
    const double *sum = t->sum;
    int any = 0;
    for (int r = 0; r < t->n; r++)
        for (int k = 0; k <= SC_WHY_NO_ENGINE; k++) any |= sum[r * F_N + F_WHY0 + k] > 0;
    for (int r = 0; r < t->n; r++) any |= sum[r * F_N + F_NB] > 0;
    if (!any) return;
    fprintf(f, "@--- Calls not reshaped, and why; nonblocking calls (calls summed over ranks) ---\n");
    for (int r = 0; r < t->n; r++) {
        const double *s = sum + r * F_N;
        char line[1024];
        int used = 0;
        for (int k = 0; k <= SC_WHY_NO_ENGINE && used < (int)sizeof line - 80; k++) {
            if (s[F_WHY0 + k] <= 0) continue;
            const char *why = k == SC_ELIG_OK ? "kept exact by the policy (STARCOLL_MODE=sync)"
                              : k == SC_WHY_NO_ENGINE ? (t->why[r][0] ? t->why[r] : "no tolerant rounds on it")
                                                      : sc_elig_reason((sc_elig)k);
            used += snprintf(line + used, sizeof line - (size_t)used, "%s%.0f %s", used ? ", " : "", s[F_WHY0 + k], why);
        }
        if (used) fprintf(f, "@ comm %s: passed through: %s\n", t->label[r], line);
        if (s[F_NB] > 0)
            fprintf(f, "@ comm %s: %.0f MPI_Iallreduce calls; %.0f of them completed by the rounds after the call "
                       "returned (the rest completed inside it: exact, learning, or missed rounds returned at once)\n",
                    t->label[r], s[F_NB], s[F_OVERLAP]);
    }
}

/* One plain sentence when starcoll changed nothing: every reducing call
 * passed through, and the commonest reason. */
static void write_all_passed(FILE *f, const double *tot)
{
    double calls = tot[F_ELIG] + tot[F_PASS];
    double kept = tot[F_WHY0 + SC_ELIG_OK] + tot[F_WHY0 + SC_WHY_NO_ENGINE] + tot[F_LEARN] + tot[F_AMBIG];
    if (calls <= 0 || tot[F_ELIG] - kept > 0) return;
    int top = -1;
    double most = 0;
    for (int k = 0; k <= SC_WHY_NO_ENGINE; k++)
        if (tot[F_WHY0 + k] > most) most = tot[F_WHY0 + k], top = k;
    const char *why = top < 0 ? "the eligible calls stayed exact (see below)"
                      : top == SC_ELIG_OK ? "STARCOLL_MODE=sync keeps every call exact"
                      : top == SC_WHY_NO_ENGINE ? "their communicators were kept exact, each for the reason below"
                                                : sc_elig_reason((sc_elig)top);
    if (tot[F_LEARN] + tot[F_AMBIG] > most)
        why = tot[F_LEARN] >= tot[F_AMBIG] ? "the step's pattern was never learned" : "the step's tensors could not be told apart";
    fprintf(f, "@ Note      : starcoll changed nothing in this job: all %.0f MPI_Allreduce calls passed through exact"
               " (mostly: %s)\n", calls, why);
}

void sc_report_decision(const char *comm, long step, sc_mode mode, int k, int children, const char *reason,
                        const char *signals)
{
    sc_rt.ndecisions++;
    size_t used = strlen(sc_rt.decisions);
    if (used + 300 >= sizeof sc_rt.decisions) return;   /* the first ones are kept; the count says how many */
    snprintf(sc_rt.decisions + used, sizeof sc_rt.decisions - used, "  comm %s step %ld: %s k=%d children=%d: %s%s%s\n",
             comm, step, sc_mode_name(mode), k, children, reason, signals && signals[0] ? " | " : "",
             signals ? signals : "");
}

void sc_report_note(const char *comm, const char *text)
{
    size_t used = strlen(sc_rt.decisions);
    if (used + strlen(text) + 40 >= sizeof sc_rt.decisions) return;
    snprintf(sc_rt.decisions + used, sizeof sc_rt.decisions - used, "  comm %s: %s\n", comm, text);
}

void sc_report_coordinator(const char *comm, int rank)
{
    char text[96];
    snprintf(text, sizeof text, "coordinator rank %d (least load while learning, of the ranks given a fair CPU share)", rank);
    sc_report_note(comm, text);
}

/* Decisions and straggler rows are kept by each communicator's
 * coordinator, which may be any rank: world rank 0 gathers a text of each
 * process, in rank order.  NULL when they cannot be had (the report then
 * goes without them); *count (may be NULL) gets the sum of mine_count. */
static char *gather_text(const char *mine, int mine_count, int *count)
{
    int sum = 0, counted = PMPI_Reduce(&mine_count, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD) == MPI_SUCCESS;
    size_t total = 0;
    char *text = gather_bytes(mine, (int)strlen(mine), &total);
    if (!counted) {
        free(text);
        return NULL;
    }
    if (count) *count = sum;
    if (text) text[total] = '\0';
    return text;
}

/* Every rank's host name, HOST_LEN chars each, at world rank 0 (NULL
 * elsewhere, or when they cannot be had). */
#define HOST_LEN 64
static char *gather_hosts(void)
{
    char mine[HOST_LEN] = "", name[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    if (PMPI_Get_processor_name(name, &len) == MPI_SUCCESS) snprintf(mine, sizeof mine, "%.*s", (int)sizeof mine - 1, name);   /* cut to HOST_LEN */
    int me = sc_rt.world_rank, ok, all = 0;
    char *hosts = me == 0 ? calloc((size_t)sc_rt.world_size, HOST_LEN) : NULL;
    ok = me != 0 || hosts;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !all ||
        PMPI_Gather(mine, HOST_LEN, MPI_CHAR, hosts, HOST_LEN, MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(hosts);
        return NULL;
    }
    return hosts;
}

static void write_decisions(FILE *f, const char *text, int count)
{
    if (!text || !text[0]) return;
    fprintf(f, "@--- Decisions (%d; step counted by the coordinator) ---\n", count);
    fputs(text, f);
}

typedef struct gathered {
    char *decisions, *stragglers, *hosts;
    int ndecisions;
} gathered;

static void write_report(FILE *f, const merged *t, const gathered *g)
{
    const double *sum = t->sum, *max = t->max;
    char pol[512], inj[256];
    sc_policy_describe(&sc_rt.policy, pol, sizeof pol);
    sc_inject_describe(&sc_rt.policy.inject, inj, sizeof inj);
    fprintf(f, "@ starcoll %s report (%s)\n", PACKAGE_VERSION, SC_MPI_IMPL);
    fprintf(f, "@ Policy    : %s\n", pol);
    fprintf(f, "@ Ranks     : %d on %d host(s)%s\n", sc_rt.world_size, sc_rt.nhosts,
            sc_rt.spawned ? ", started by another job's MPI_Comm_spawn (that job's report is its own)" : "");
    fprintf(f, "@ Wall time : %.3f s (rank 0, MPI_Init to MPI_Finalize)\n", PMPI_Wtime() - sc_rt.t_init);
    double tot[F_N] = {0};
    for (int r = 0; r < t->n; r++)
        for (int k = 0; k < F_N && sum[r * F_N + F_RANKS] > 0; k++) tot[k] += sum[r * F_N + k];
    write_all_passed(f, tot);
    if (sc_rt.policy.inject.enabled) fprintf(f, "@ Injection : ON, %s\n", inj);
    if (tot[F_DEV_CALLS] > 0 || tot[F_DEV_NCCL] > 0) write_device(f, tot);
    if (tot[F_HOST_ASKED] > 0) write_host_asked(f, tot);
    if (sc_rt.monitor) {   /* which signal sources ran (rank 0's view) */
        char d[1024];
        sc_monitor_describe(sc_rt.monitor, d, sizeof d);
        for (char *line = strtok(d, "\n"); line; line = strtok(NULL, "\n")) fprintf(f, "@ Monitor   : %s\n", line);
    }
    fprintf(f, "@--- MPI_Allreduce per communicator (calls summed over ranks; time per rank) ---\n");
    fprintf(f, "%4s %5s %5s %10s %10s %12s %10s %10s", "comm", "size", "inst", "eligible", "passthru", "bytes",
            "mean(s)", "max(s)");
    for (int k = 0; k < SC_MODE_AUTO; k++) fprintf(f, " %8s", sc_mode_name((sc_mode)k));
    fputc('\n', f);
    for (int r = 0; r < t->n; r++) {
        const double *s = sum + r * F_N, *m = max + r * F_N;
        if (s[F_RANKS] == 0) continue;
        fprintf(f, "%4s %5.0f %5.0f %10.0f %10.0f %12.4g %10.4f %10.4f", t->label[r], m[F_SIZE], s[F_INST], s[F_ELIG],
                s[F_PASS], s[F_BYTES], s[F_TIME] / s[F_RANKS], m[F_TIME]);
        for (int k = 0; k < SC_MODE_AUTO; k++) fprintf(f, " %8.0f", s[F_MODE0 + k]);
        fputc('\n', f);
    }
    int led_elsewhere = 0;
    for (int r = 0; r < t->n; r++) led_elsewhere |= strchr(t->label[r], '@') != NULL;
    if (led_elsewhere)
        fprintf(f, "@ comm N: the N-th communicator its rank 0 used (0: the world), written N@W where that rank is "
                   "world rank W, not 0\n");
    write_not_reshaped(f, t);
    write_identity(f, t);
    write_tolerant(f, t);
    write_polled(f, t);
    sc_stragglers_write(f, g->stragglers, g->hosts, HOST_LEN);
    write_decisions(f, g->decisions, g->ndecisions);
    fprintf(f, "@--- end of starcoll report ---\n");
    fprintf(f, "starcoll: totals eligible=%.0f passthrough=%.0f bytes=%.0f", tot[F_ELIG], tot[F_PASS], tot[F_BYTES]);
    for (int k = 0; k < SC_MODE_AUTO; k++) fprintf(f, " %s=%.0f", sc_mode_name((sc_mode)k), tot[F_MODE0 + k]);
    double stale = 0, negmin = -1e9;
    for (int r = 0; r < t->n; r++) {
        if (max[r * F_N + F_STALE] > stale) stale = max[r * F_N + F_STALE];
        if (max[r * F_N + F_NEGMINFRESH] > negmin) negmin = max[r * F_N + F_NEGMINFRESH];
    }
    fprintf(f, " rounds=%.0f min_fresh=%.0f max_staleness=%.0f relaxed=%.0f\n", tot[F_ROUNDS],
            negmin > -1e9 ? -negmin : 0, stale, tot[F_RELAXED]);
}

/* The straggler table's CSV beside a report file: REPORT.stragglers.csv
 * (outfile.h: never over an existing file). */
static void write_csv(const char *report_used, const gathered *g)
{
    char path[SC_PATH_LEN + 56], used[SC_PATH_LEN + 64], note[2 * SC_PATH_LEN + 200];
    snprintf(path, sizeof path, "%s.stragglers.csv", report_used);
    FILE *f = sc_outfile_open(path, used, sizeof used, note, sizeof note);
    if (note[0]) fprintf(stderr, "starcoll: straggler CSV: %s\n", note);
    if (!f) return;
    sc_stragglers_write_csv(f, g->stragglers, g->hosts, HOST_LEN);
    int err = sc_outfile_close(f);
    if (err) fprintf(stderr, "starcoll: straggler CSV: writing %s failed (%s)\n", used, strerror(err));
}

/* World rank 0: the report to its file (or stderr), and the CSV.  A
 * spawned job's goes to REPORT.spawned: it inherits the parents'
 * STARCOLL_REPORT, and ending first it took that name from them. */
static void write_files(const merged *t, const gathered *g)
{
    FILE *f = stderr;
    char path[SC_PATH_LEN + 16], used[SC_PATH_LEN + 32] = "", note[SC_PATH_LEN * 2 + 100];
    if (sc_rt.policy.report == SC_REPORT_FILE) {
        snprintf(path, sizeof path, "%s%s", sc_rt.policy.report_path, sc_spawned_suffix());
        f = sc_outfile_open(path, used, sizeof used, note, sizeof note);
        if (note[0]) fprintf(stderr, "starcoll: STARCOLL_REPORT: %s%s\n", note, f ? "" : "; writing the report to stderr");
        if (!f) f = stderr;
    }
    write_report(f, t, g);
    if (f != stderr) {
        int err = sc_outfile_close(f);
        if (err) {   /* said, and the report goes to stderr after all */
            fprintf(stderr, "starcoll: STARCOLL_REPORT: writing %s failed (%s); the report follows on stderr\n", used,
                    strerror(err));
            write_report(stderr, t, g);
        }
        write_csv(used, g);
    }
    fflush(stderr);
}

void sc_report_write(void)
{
    if (sc_rt.policy.report == SC_REPORT_NONE) return;
    merged *t = gather_rows();
    int ok = sc_rt.world_rank != 0 || t, all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !all) {
        if (sc_rt.world_rank == 0) fprintf(stderr, "starcoll: could not gather the report; none written\n");
        free(t);
        return;
    }
    gathered g = {0};
    g.decisions = gather_text(sc_rt.decisions, sc_rt.ndecisions, &g.ndecisions);
    g.stragglers = gather_text(sc_rt.stragglers, 0, NULL);
    g.hosts = gather_hosts();
    if (sc_rt.world_rank == 0) write_files(t, &g);
    free(t);
    free(g.decisions);
    free(g.stragglers);
    free(g.hosts);
    fflush(stderr);
}
