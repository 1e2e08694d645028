/* starcoll_loops: training loops written the way other people write them,
 * as a plain MPI program: gradients in fresh buffers every step, or
 * through one staging buffer, with a per-step loss, and every return code
 * checked.  Run under the starcoll preload it checks what starcoll must
 * keep (DESIGN.md, "Identity of a call"), and times the steps.
 *
 * Each step: compute (sleep; a straggler sleeps longer), then one
 * MPI_Allreduce per gradient tensor, then (--loss) a 1-element loss.
 * Tensor i holds multiples of 64^(i mod 3), integer-valued, so sums are
 * exact and a result that mixed two tensors shows.  Checks:
 *   returns   every call returns MPI_SUCCESS (but the one --extra-call
 *             expects to be refused);
 *   tags      every result of tensor i is made of multiples of its tag;
 *   loss      the loss sum is exact at every step;
 *   metric    (--metric N) an N-float metric vector (a per-class count, a
 *             confusion matrix), reduced every step in a fresh buffer
 *             after the gradients, is exact at every step: over the size
 *             floor it is exact only where STARCOLL_EXACT names it, or
 *             with --metric-pcontrol, between MPI_Pcontrol(0) and (1);
 *   after a flush (MPI_Pcontrol(2) and one step of zeros):
 *   conserved every rank's summed results of tensor i == the sum of every
 *             buffer of tensor i any rank sent;
 *   replicas  those sums are bitwise equal on every rank;
 *   flushed   (--soak) after each mid-run flush, every rank's sums so far
 *             equal what every rank sent, on each tensor's first elements;
 *   same      (--same-results) every rank got the same result at every
 *             call (its elements' sum), as it must where every round holds
 *             every rank's buffer: exact modes, a quorum of all.  Up to
 *             the step before the last: the flush after it closes rounds
 *             below the quorum for the ranks that have not reached it.
 * Prints "ok - ..."/"FAIL - ..." lines, a figures line
 *   loops: loop=L ranks=N steps=S fast_step_ms=F slow_step_ms=W
 * (mean step time after the first --warmup steps, of the ranks never slow
 * and of the slow one), and "N passed, N failed".
 *
 * usage: starcoll_loops [--loop fresh|moving|own|staging] [--counts C1,C2,...]
 *          [--model FILE [--scale N]] [--loss] [--metric N [--metric-pcontrol]] [--alternate K [--alternate-comm]] [--in-place] [--steps N] [--warmup N] [--compute-ms MS]
 *          [--slow-rank R] [--slow-factor F] [--extra-call STEP] [--skip-at STEP] [--eval-every N [--eval-batches B]] [--vary-last]
 *          [--stop-at STEP --stop-s S [--freeze]] [--two-comms [--halves-in-order] [--disconnect] [--part-at STEP]]
 *          [--soak] [--bound-s S]
 *          [--comm-thread] [--same-results] [--end-call CALL [--call-every N]]
 * --bound-s S: no single MPI_Allreduce may take over S seconds, less the
 *         time the process did not run at all meanwhile (machine_pause.h);
 *         the figures line gives the longest such pause (machine_pause_s).
 * --loop: fresh  malloc/free of every buffer every step, on every rank;
 *         moving fresh buffers on odd ranks only, kept ones elsewhere;
 *         own    one buffer per tensor, kept (as frameworks do);
 *         staging one staging buffer for every tensor, reduced in place.
 * --extra-call STEP: rank --slow-rank (default the last) makes one extra
 *         eligible call (another shape) at STEP: it must be refused with an
 *         error, nothing may hang, and the run goes on.
 * --stop-at STEP --stop-s S: rank --slow-rank stops calling for S seconds
 *         at STEP (the stall watchdog must name it).  --freeze: its whole
 *         process stops instead (SIGSTOP; a helper process sends SIGCONT
 *         S seconds later), every thread of it, as a node a debugger or
 *         the kernel stops: its engine threads take no part meanwhile.
 * --two-comms: the world and each half of it (even and odd ranks);
 *         --halves-in-order: the lower and upper halves instead.
 *         --disconnect: the half parted by MPI_Comm_disconnect, not
 *         MPI_Comm_free, its engine still running.  --part-at STEP: the
 *         half flushed, checked and parted at STEP (after a flush,
 *         MPI_Pcontrol(2)); the world goes on alone to the end.
 * --end-call CALL: after the steps, before the flush, every rank makes one
 *         call in which ranks done first wait for a straggler whose last
 *         rounds are still open: pmpi-sendrecv (each rank's number to the
 *         next through PMPI_Sendrecv, which starcoll cannot see, as a
 *         library calling the profiling interface), or one starcoll wraps
 *         (the rank is away meanwhile): sendrecv, recv (rank 0 receives
 *         every rank's number), probe (MPI_Probe, then MPI_Recv; the others
 *         MPI_Ssend), iprobe (rank 0 polls MPI_Iprobe for any rank's
 *         number, then MPI_Recv; the others MPI_Send), spawn (MPI_Comm_spawn
 *         of one helper process, this program, which takes a number by
 *         MPI_Bcast and answers rank 0; MPI_Comm_disconnect), split (MPI_Comm_split), file (a collective write and
 *         read of a file), split-file (on a file opened before the steps,
 *         MPI_File_write_at_all_begin and _end, a sync, and
 *         MPI_File_read_at_all_begin and _end), ifile (each rank alone, 50 times: a nonblocking
 *         write completed by MPI_Wait, a nonblocking read by MPI_Test, a
 *         collective read on MPI_COMM_SELF; a file of its own), fence (a
 *         window, a put, fences), pscw (a halo exchange: MPI_Win_post,
 *         _start, a put to each neighbour, _complete, _wait, on a window
 *         made before the steps), lock (on that window, this rank's
 *         number put into rank 0's under MPI_Win_lock and read back),
 *         connect (the even ranks MPI_Comm_accept, the odd ones
 *         MPI_Comm_connect, on a port opened before the steps, then
 *         MPI_Comm_disconnect), neighbor (MPI_Neighbor_alltoall and
 *         _allgather on a ring made by MPI_Dist_graph_create_adjacent
 *         before the steps), alltoallw, allgatherv, gatherv, scatterv,
 *         alltoallv, reduce_scatter, reduce_scatter_block, scan or exscan.
 *         Its result is checked.
 *         --call-every N: also after every N steps (a checkpoint, a
 *         figure passed on now and then).
 * --eval-every N: after every N steps, a validation pass as training codes
 *         make one: --eval-batches B (default 5) batches, each a short
 *         compute and its loss reduced (1 float, as the training loss),
 *         then the pass's (correct, total) counts (2 floats); no gradient
 *         call.  Every value must be exact.
 * --vary-last: the last tensor's count changes every step, by up to 64
 *         elements (a sparse gradient sent dense: the rows a batch touched).
 * --skip-at STEP: at STEP every rank leaves out the last tensor's call
 *         (a parameter that got no gradient that step: unused, frozen,
 *         an expert no sample was routed to).
 * --alternate K: two models trained in turn, as a GAN's critic and
 *         generator (WGAN: K = 5): the first half of the tensors reduced K
 *         steps of every K+1, the second half at the K+1st; the flush
 *         after the steps is one such cycle of zero steps.
 *         --alternate-comm: the second model's calls (its gradients and
 *         loss) on a duplicate of the communicator, as README advises
 *         where the two models' tensors have the same shapes.
 * --comm-thread: the loop runs on a thread of its own, not MPI_Init's
 *         (MPI_THREAD_MULTIPLE), as a code with a communication thread.
 * --model FILE: the step's tensors are a model's gradients (a .tensors
 *         file, benchmarks/models/: NAME COUNT per line, registration
 *         order), reduced in backward order, as frameworks do; --scale N
 *         divides the count of every tensor over 16384 elements by N (never
 *         below 16384), so the small tensors keep their real sizes. */
#include <mpi.h>
#include "mpi_check.h"
#include "tensor_list.h"
#include "machine_pause.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>

#define MAX_TENSORS 2048

static int rank, size, ntensors = 4, loss = 0, in_place = 0, steps = 60, warmup = 15;
static long counts[MAX_TENSORS] = {65536, 32768, 16384, 49152};
static double compute_ms = 10, slow_factor = 1, stop_s = 0;
static int freeze;
static int slow_rank = -1, extra_call = -1, stop_at = -1, skip_at = -1;
static const char *loop = "fresh", *model = NULL;
static long scale = 1;
static int passed, failed, bad_returns, two_comms = 0, halves_in_order = 0, disconnect = 0, soak = 0, same_results = 0;
static int part_at = -1;
static long metric = 0;              /* --metric N: elements of the per-step metric vector, 0 none */
static int alternate = 0;            /* --alternate K: two models, the first K steps of every K+1 one, then the other */
static int alternate_comm;           /* --alternate-comm: the second model's calls on a communicator of its own */
static int metric_pcontrol;          /* --metric-pcontrol: the metric call between MPI_Pcontrol(0) and (1) */
static int metric_wrong;             /* steps whose metric sum was not exact */
static int vary_last;                /* --vary-last: the last tensor's count changes every step */
static int eval_every, eval_batches = 5; /* --eval-every: a validation pass after every N steps */
static int eval_wrong;               /* validation values whose sum was not exact */
static const char *end_call = NULL;
static int call_every = 0;           /* --call-every N: the --end-call also after every N steps */
static char port_name[MPI_MAX_PORT_NAME];  /* --end-call connect: rank 0's port, and this rank's half */
static MPI_Comm port_half = MPI_COMM_NULL;
static MPI_Comm ring = MPI_COMM_NULL;      /* --end-call neighbor: each rank's two neighbours */
static int nb[2];                          /* the previous and the next rank (--end-call pscw, lock, neighbor) */
static MPI_Win halo_win = MPI_WIN_NULL;    /* --end-call pscw: made before the steps, as a stencil code does */
static MPI_Group halo_group = MPI_GROUP_NULL;
static int *halo_buf;                       /* 2 ints, and on rank 0 one more per rank (--end-call lock) */
static const char *self_path;              /* --end-call spawn: this program, spawned */
static MPI_File split_file = MPI_FILE_NULL;  /* --end-call split-file: opened before the steps */
static char end_file[300];           /* --end-call file: the file, named alike on every rank (ifile: each rank's, NAME.RANK) */
static double bound_s = 0, longest_s = 0;
static int longest_step = -1, longest_tensor = -1;   /* where this rank's longest call was */
static const char *longest_stream = "";

static void sleep_ms(double ms)
{
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    while (nanosleep(&ts, &ts) != 0) {}
}

/* A process's state letter from /proc (T: stopped), or '?'.  Called in a
 * forked child of a threaded process: open and read only, no stdio. */
static char proc_state(const char *stat_path)
{
    char buf[512];
    int fd = open(stat_path, O_RDONLY);
    if (fd < 0) return '?';
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return '?';
    buf[n] = 0;
    const char *close_paren = strrchr(buf, ')');   /* the name may hold spaces */
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : '?';
}

/* --freeze: this whole process stops for s seconds.  The helper waits
 * until it has stopped before it starts counting, so its SIGCONT cannot
 * come first and be lost; it calls nothing of MPI's. */
static void freeze_self(double s)
{
    char stat_path[64];
    pid_t me = getpid();
    snprintf(stat_path, sizeof stat_path, "/proc/%ld/stat", (long)me);
    pid_t helper = fork();
    if (helper == 0) {
        for (int i = 0; i < 1000 && proc_state(stat_path) != 'T'; i++) sleep_ms(10);
        sleep_ms(s * 1e3);
        kill(me, SIGCONT);
        _exit(0);
    }
    if (helper < 0) {
        fprintf(stderr, "starcoll_loops: fork for --freeze failed; rank %d sleeps instead\n", rank);
        sleep_ms(s * 1e3);
        return;
    }
    raise(SIGSTOP);
    waitpid(helper, NULL, 0);
}

/* A check over all ranks (a plain reduction and a broadcast: neither is
 * reshaped), counted the same on every rank. */
static void check(int ok, const char *what)
{
    int all = 0;
    if (MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Bcast(&all, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        all = 0;
    if (rank == 0) printf("%s%s\n", all ? "ok   - " : "FAIL - ", what);
    if (all) passed++;
    else failed++;
}

static void say_rc(int rc, const char *what, int step)
{
    if (rc == MPI_SUCCESS) return;
    if (bad_returns++ < 3) {
        char err[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_CHECK(MPI_Error_string(rc, err, &len));
        fprintf(stderr, "rank %d: %s at step %d returned %s\n", rank, what, step, err);
    }
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static long tag_of(int i) { return i % 3 == 0 ? 1 : i % 3 == 1 ? 64 : 4096; }

/* This rank's gradient of tensor i at step s, element e: a multiple of the tag. */
static float value(int i, int s, long e) { return (float)(tag_of(i) * (1 + (rank + s + i + e) % 3)); }

typedef struct {
    MPI_Comm comm;
    MPI_Comm second;            /* --alternate-comm: the second model's, a duplicate of comm */
    const char *name;
    float *grad[MAX_TENSORS], *out[MAX_TENSORS];   /* own: kept */
    float *stage;                                   /* staging */
    double *sent[MAX_TENSORS], *got[MAX_TENSORS];   /* per element sums, exact */
    double *result_sum;                             /* --same-results: per step and tensor */
    int tags_ok;
} state;

static float *alloc_floats(long n)
{
    float *p = malloc(sizeof(float) * (size_t)n);
    if (!p) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

/* Does this rank allocate fresh buffers this step? */
static int fresh_here(void)
{
    return !strcmp(loop, "fresh") || (!strcmp(loop, "moving") && rank % 2 == 1);
}

/* Tensor i's element count at step s: --vary-last makes the last one's
 * change from step to step (a sparse gradient sent dense, its rows those
 * the batch touched), by up to 64 elements under its --counts count. */
static long count_at(int i, int s)
{
    return vary_last && i == ntensors - 1 && counts[i] > 64 ? counts[i] - 16 * (s % 5) : counts[i];
}

static void take(state *st, int i, int s, const float *res)
{
    long tag = tag_of(i);
    double sum = 0;   /* integers under 2^53: exact */
    for (long e = 0; e < count_at(i, s); e++) {
        long v = (long)res[e];
        if (v < 0 || v % tag != 0 || (float)v != res[e]) st->tags_ok = 0;
        st->got[i][e] += (double)v;
        sum += (double)v;
    }
    if (st->result_sum) st->result_sum[(long)s * ntensors + i] = sum;
}

/* --alternate K: tensors below ntensors/2 are the first model's (a GAN's
 * critic), reduced K steps of every K+1; the others the second model's (its
 * generator), reduced at the K+1st.  Without it every tensor, every step. */
static int reduced_at(int i, int s)
{
    if (s == skip_at && i == ntensors - 1 && ntensors > 1) return 0;
    if (alternate <= 0) return 1;
    return (i < ntensors / 2) == (s % (alternate + 1) != alternate);
}

/* The communicator of step s's calls: the second model's own with
 * --alternate-comm, else the stream's. */
static MPI_Comm step_comm(const state *st, int s)
{
    return st->second != MPI_COMM_NULL && !reduced_at(0, s) ? st->second : st->comm;
}

/* One gradient reduction, the way the loop style does it. */
static void reduce_tensor(state *st, int i, int s, int zero)
{
    long n = count_at(i, s);
    int fresh = fresh_here();
    float *g = fresh ? alloc_floats(n) : st->grad[i];
    /* a fresh array of its own size elsewhere too, so addresses move */
    void *junk = fresh ? malloc((size_t)(64 + (rank * 131 + s * 17 + i) % 4096)) : NULL;
    for (long e = 0; e < n; e++) {
        g[e] = zero ? 0.0f : value(i, s, e);
        st->sent[i][e] += g[e];
    }
    int rc;
    double t0 = MPI_Wtime(), paused0 = machine_pause_total();
    if (!strcmp(loop, "staging")) {
        memcpy(st->stage, g, sizeof(float) * (size_t)n);
        rc = MPI_Allreduce(MPI_IN_PLACE, st->stage, (int)n, MPI_FLOAT, MPI_SUM, step_comm(st, s));
        if (rc == MPI_SUCCESS) take(st, i, s, st->stage);
    } else if (in_place) {
        rc = MPI_Allreduce(MPI_IN_PLACE, g, (int)n, MPI_FLOAT, MPI_SUM, step_comm(st, s));
        if (rc == MPI_SUCCESS) take(st, i, s, g);
    } else {
        float *out = fresh ? alloc_floats(n) : st->out[i];
        rc = MPI_Allreduce(g, out, (int)n, MPI_FLOAT, MPI_SUM, step_comm(st, s));
        if (rc == MPI_SUCCESS) take(st, i, s, out);
        if (fresh) free(out);
    }
    /* --bound-s bounds the waits of MPI and starcoll, not the machine's
     * pauses (machine_pause.h): those are taken out, and said. */
    double paused = machine_pause_total() - paused0, took = MPI_Wtime() - t0 - paused;
    static int pauses_said;
    if (paused > 0 && pauses_said++ < 5)
        fprintf(stderr, "rank %d: a call at step %d (tensor %d, %s) took %.3f s, %.3f s of which this process did not run "
                "at all (the machine paused, or a CPU quota held it)\n", rank, s, i, st->name, took + paused, paused);
    if (took > longest_s) {
        longest_s = took;
        longest_step = s;
        longest_tensor = i;
        longest_stream = st->name;
    }
    say_rc(rc, "a gradient MPI_Allreduce", s);
    free(junk);
    if (fresh) free(g);
}

static int me_slow(void) { return rank == (slow_rank >= 0 ? slow_rank : size - 1); }

static void one_step(state *st, int s, int zero, int *loss_ok)
{
    for (int i = 0; i < ntensors; i++) {
        if (!reduced_at(i, s)) continue;
        if (s == extra_call && me_slow() && i == 1) {
            /* a call no other rank makes: refused with an error, nothing hangs */
            long n = 20000;
            float *x = calloc((size_t)n, sizeof(float)), *y = alloc_floats(n);
            int rc = MPI_Allreduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, st->comm);
            fprintf(stderr, "rank %d: the extra call at step %d returned %s\n", rank, s,
                    rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
            free(x);
            free(y);
        }
        reduce_tensor(st, i, s, zero);
    }
    if (metric <= 0 && !loss) return;
    int crank, csize;   /* this stream's: the values' exact sums are known on every rank */
    MPI_CHECK(MPI_Comm_rank(st->comm, &crank));
    MPI_CHECK(MPI_Comm_size(st->comm, &csize));
    if (metric > 0) {
        /* element j of rank r at step s: r + j + s mod 7, counts as a metric holds */
        float *m = alloc_floats(metric), *sum = alloc_floats(metric);
        for (long j = 0; j < metric; j++) m[j] = (float)(crank + j + s % 7);
        if (metric_pcontrol) MPI_CHECK(MPI_Pcontrol(0));
        int rc = MPI_Allreduce(m, sum, (int)metric, MPI_FLOAT, MPI_SUM, st->comm);
        if (metric_pcontrol) MPI_CHECK(MPI_Pcontrol(1));
        say_rc(rc, "the metric MPI_Allreduce", s);
        int exact = rc == MPI_SUCCESS;
        for (long j = 0; j < metric && exact; j++)
            exact = sum[j] == (float)(csize * (csize - 1) / 2 + csize * (j + s % 7));
        metric_wrong += !exact;
        free(m);
        free(sum);
    }
    if (loss) {
        float l = (float)(crank + 1 + s % 5), sum = -1;
        int rc = MPI_Allreduce(&l, &sum, 1, MPI_FLOAT, MPI_SUM, step_comm(st, s));
        say_rc(rc, "the loss MPI_Allreduce", s);
        float want = (float)(csize * (csize + 1) / 2 + csize * (s % 5));
        if (rc != MPI_SUCCESS || sum != want) *loss_ok = 0;
    }
}

/* --eval-every: a validation pass, no gradients: a loss per batch, then
 * the pass's counts, on the stream's communicator; each sum checked. */
static void eval_pass(state *st, int s)
{
    int crank, csize;
    MPI_CHECK(MPI_Comm_rank(st->comm, &crank));
    MPI_CHECK(MPI_Comm_size(st->comm, &csize));
    for (int b = 0; b < eval_batches; b++) {
        sleep_ms(compute_ms / 3);
        float l = (float)(crank + b + s % 3), sum = -1;
        int rc = MPI_Allreduce(&l, &sum, 1, MPI_FLOAT, MPI_SUM, st->comm);
        say_rc(rc, "a validation loss MPI_Allreduce", s);
        eval_wrong += rc != MPI_SUCCESS || sum != (float)(csize * (csize - 1) / 2 + csize * (b + s % 3));
    }
    float counts2[2] = {(float)(crank + 1), 10.0f}, sum2[2] = {-1, -1};
    int rc = MPI_Allreduce(counts2, sum2, 2, MPI_FLOAT, MPI_SUM, st->comm);
    say_rc(rc, "the validation counts MPI_Allreduce", s);
    eval_wrong += rc != MPI_SUCCESS || sum2[0] != (float)(csize * (csize + 1) / 2) || sum2[1] != 10.0f * csize;
}

static int parse_counts(const char *s)
{
    int n = 0;
    for (const char *p = s; *p && n < MAX_TENSORS; n++) {
        char *end;
        counts[n] = strtol(p, &end, 10);
        if (end == p || counts[n] <= 0) return -1;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* Tensor i's first n elements, on the stream's rank 0: the sum of what
 * every rank sent, and the least and the most any rank received.  Plain
 * reductions (MPI_Reduce is not reshaped); returns the first error. */
static int reduce_sums(const state *st, int i, int n, double *sent, double *lo, double *hi)
{
    int rc = MPI_Reduce(st->sent[i], sent, n, MPI_DOUBLE, MPI_SUM, 0, st->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Reduce(st->got[i], lo, n, MPI_DOUBLE, MPI_MIN, 0, st->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Reduce(st->got[i], hi, n, MPI_DOUBLE, MPI_MAX, 0, st->comm);
    return rc;
}

/* --same-results: did every rank of the stream get the same result at
 * every call of the steps before the last?  Judged on the stream's rank 0
 * (plain reductions), which names the first call that differed. */
static int results_agree(const state *st)
{
    long n = (long)(steps > 1 ? steps - 1 : 1) * ntensors;
    double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
    if (!lo || !hi) MPI_Abort(MPI_COMM_WORLD, 3);
    int crank, good = MPI_Reduce(st->result_sum, lo, (int)n, MPI_DOUBLE, MPI_MIN, 0, st->comm) == MPI_SUCCESS &&
                      MPI_Reduce(st->result_sum, hi, (int)n, MPI_DOUBLE, MPI_MAX, 0, st->comm) == MPI_SUCCESS;
    MPI_CHECK(MPI_Comm_rank(st->comm, &crank));
    long differ = 0, first = -1;
    for (long c = 0; good && crank == 0 && c < n; c++)
        if (lo[c] != hi[c] && !differ++) first = c;
    if (differ)
        fprintf(stderr, "%s: %ld of %ld calls' results differed between ranks, the first at step %ld, tensor %ld "
                "(its sum %.0f to %.0f)\n", st->name, differ, n, first / ntensors, first % ntensors, lo[first], hi[first]);
    free(lo);
    free(hi);
    return good && !differ;
}

/* --soak: right after a flush step (MPI_Pcontrol(2) before it) every rank
 * must hold every contribution sent so far, on the first elements of each
 * tensor (a lost or late round shows in all of its elements); 1 when it
 * holds on every rank. */
enum { FLUSH_CHECK_ELEMS = 16 };
static int flushed_sums_agree(state *st, int s)
{
    int ok = 1, crank;
    MPI_CHECK(MPI_Comm_rank(st->comm, &crank));
    for (int i = 0; i < ntensors && ok; i++) {
        int n = counts[i] < FLUSH_CHECK_ELEMS ? (int)counts[i] : FLUSH_CHECK_ELEMS;
        double sent[FLUSH_CHECK_ELEMS], lo[FLUSH_CHECK_ELEMS], hi[FLUSH_CHECK_ELEMS];
        int good = reduce_sums(st, i, n, sent, lo, hi) == MPI_SUCCESS;
        for (int e = 0; good && crank == 0 && e < n; e++) {
            if (lo[e] != sent[e] || hi[e] != sent[e]) {
                good = 0;
                fprintf(stderr, "%s: after the flush at step %d, tensor %d element %d: received %.0f to %.0f, sent %.0f\n",
                        st->name, s, i, e, lo[e], hi[e], sent[e]);
            }
        }
        if (MPI_Bcast(&good, 1, MPI_INT, 0, st->comm) != MPI_SUCCESS) good = 0;
        ok = good;
    }
    return ok;
}

/* --end-call ifile: this rank's own file, written and read back as a code
 * overlapping its I/O does, 50 times (Open MPI's file requests once broke
 * when a tolerant engine's thread drove MPI's progress meanwhile:
 * ompio_progress.c).  1 when every call succeeded and read back right. */
static int self_file_io(int one)
{
    char path[320];
    snprintf(path, sizeof path, "%s.%d", end_file, rank);
    MPI_File fh;
    if (MPI_CHECK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh)) != MPI_SUCCESS)
        return 0;
    int ok = 1;
    for (int k = 0; k < 50 && ok; k++) {
        int w[13], r[13], c[13], n = 1 + k % 13, got = -1, done = 0;
        for (int i = 0; i < 13; i++) w[i] = one * 1000 + k * 13 + i, r[i] = c[i] = -1;
        MPI_Request req;
        MPI_Status st;
        ok = MPI_CHECK(MPI_File_iwrite_at(fh, 0, w, n, MPI_INT, &req)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Wait(&req, &st)) == MPI_SUCCESS && MPI_CHECK(MPI_Get_count(&st, MPI_INT, &got)) == MPI_SUCCESS &&
             got == n && MPI_CHECK(MPI_File_iread_at(fh, 0, r, n, MPI_INT, &req)) == MPI_SUCCESS;
        while (ok && !done) ok = MPI_CHECK(MPI_Test(&req, &done, &st)) == MPI_SUCCESS;
        ok = ok && MPI_CHECK(MPI_Get_count(&st, MPI_INT, &got)) == MPI_SUCCESS && got == n &&
             MPI_CHECK(MPI_File_read_at_all(fh, 0, c, n, MPI_INT, MPI_STATUS_IGNORE)) == MPI_SUCCESS;
        for (int i = 0; i < n && ok; i++) ok = r[i] == w[i] && c[i] == w[i];
    }
    return MPI_CHECK(MPI_File_close(&fh)) == MPI_SUCCESS && ok;
}

/* --end-call NAME on the world, its result checked: 1 right, 0 not (or
 * NAME unknown).  Rank r sends r + 1 (to the next rank, to all, or to be
 * reduced); rank 0 roots the rooted ones. */
static int make_end_call(const char *name)
{
    int n = size, one = rank + 1, got = -1, ok = 1;
    int *all = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n),
        *ones = malloc(sizeof(int) * (size_t)n), *at = malloc(sizeof(int) * (size_t)n);
    if (!all || !out || !ones || !at) MPI_Abort(MPI_COMM_WORLD, 3);
    for (int i = 0; i < n; i++) all[i] = -1, out[i] = 100 * rank + i, ones[i] = 1, at[i] = i;
    MPI_Comm w = MPI_COMM_WORLD;
    if (!strcmp(name, "sendrecv") || !strcmp(name, "pmpi-sendrecv")) {
        int from = (rank + n - 1) % n;
        int rc = name[0] == 'p' ? MPI_CHECK(PMPI_Sendrecv(&one, 1, MPI_INT, (rank + 1) % n, 7, &got, 1, MPI_INT, from, 7, w,
                                                          MPI_STATUS_IGNORE))
                                : MPI_CHECK(MPI_Sendrecv(&one, 1, MPI_INT, (rank + 1) % n, 7, &got, 1, MPI_INT, from, 7, w,
                                                         MPI_STATUS_IGNORE));
        ok = rc == MPI_SUCCESS && got == from + 1;
    } else if (!strcmp(name, "recv") || !strcmp(name, "probe")) {
        int probe = name[0] == 'p';
        for (int i = 1; i < n && rank == 0; i++) {
            MPI_Status st;
            int src = probe ? MPI_ANY_SOURCE : i;
            if (probe) ok &= MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, 8, w, &st)) == MPI_SUCCESS, src = st.MPI_SOURCE;
            ok &= MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, src, 8, w, &st)) == MPI_SUCCESS && got == st.MPI_SOURCE + 1;
        }
        if (rank != 0)
            ok = (probe ? MPI_CHECK(MPI_Ssend(&one, 1, MPI_INT, 0, 8, w)) : MPI_CHECK(MPI_Send(&one, 1, MPI_INT, 0, 8, w))) ==
                 MPI_SUCCESS;
    } else if (!strcmp(name, "spawn")) {
        /* a helper process started for a moment (an evaluator, a data
         * loader): rank 0 hands it a number through the intercommunicator,
         * it answers with that number plus one */
        MPI_Comm helper = MPI_COMM_NULL;
        int code = MPI_SUCCESS, sent = 1000 + n, back = -1;
        ok = MPI_CHECK(MPI_Comm_spawn(self_path, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, w, &helper, &code)) == MPI_SUCCESS &&
             code == MPI_SUCCESS;
        if (ok) {
            ok = MPI_CHECK(MPI_Bcast(&sent, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, helper)) == MPI_SUCCESS;
            if (rank == 0)
                ok &= MPI_CHECK(MPI_Recv(&back, 1, MPI_INT, 0, 12, helper, MPI_STATUS_IGNORE)) == MPI_SUCCESS &&
                      back == sent + 1;
            ok &= MPI_CHECK(MPI_Comm_disconnect(&helper)) == MPI_SUCCESS;
        }
    } else if (!strcmp(name, "iprobe")) {
        /* a master's loop: poll for any rank's number, take it when there */
        for (int left = n - 1; left > 0 && rank == 0 && ok;) {
            MPI_Status st;
            int flag = 0;
            ok = MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 9, w, &flag, &st)) == MPI_SUCCESS;
            if (!ok || !flag) continue;
            ok = MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, 9, w, &st)) == MPI_SUCCESS &&
                 got == st.MPI_SOURCE + 1;
            left--;
        }
        if (rank != 0) ok = MPI_CHECK(MPI_Send(&one, 1, MPI_INT, 0, 9, w)) == MPI_SUCCESS;
    } else if (!strcmp(name, "split")) {
        MPI_Comm half = MPI_COMM_NULL;
        int hs = 0;
        ok = MPI_CHECK(MPI_Comm_split(w, rank % 2, rank, &half)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Comm_size(half, &hs)) == MPI_SUCCESS && hs == (n + 1 - rank % 2) / 2 &&
             MPI_CHECK(MPI_Comm_free(&half)) == MPI_SUCCESS;
    } else if (!strcmp(name, "file")) {
        MPI_File fh;
        ok = MPI_CHECK(MPI_File_open(w, end_file, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                     MPI_INFO_NULL, &fh)) == MPI_SUCCESS;
        if (ok) {
            int back = 0, mine = (rank + 1) % n;   /* each rank reads its neighbour's number back */
            ok = MPI_CHECK(MPI_File_write_at_all(fh, (MPI_Offset)rank * 4, &one, 1, MPI_INT, MPI_STATUS_IGNORE)) ==
                     MPI_SUCCESS &&
                 MPI_CHECK(MPI_File_sync(fh)) == MPI_SUCCESS && MPI_CHECK(MPI_Barrier(w)) == MPI_SUCCESS &&
                 MPI_CHECK(MPI_File_read_at_all(fh, (MPI_Offset)mine * 4, &back, 1, MPI_INT, MPI_STATUS_IGNORE)) ==
                     MPI_SUCCESS &&
                 back == mine + 1;
            ok &= MPI_CHECK(MPI_File_close(&fh)) == MPI_SUCCESS;
        }
    } else if (!strcmp(name, "split-file")) {
        /* a checkpoint behind the compute: split collectives on the file
         * opened before the steps; each rank reads its neighbour's number */
        int back = 0, mine = (rank + 1) % n;
        MPI_Status st;
        ok = MPI_CHECK(MPI_File_write_at_all_begin(split_file, (MPI_Offset)rank * 4, &one, 1, MPI_INT)) ==
                 MPI_SUCCESS &&
             MPI_CHECK(MPI_File_write_at_all_end(split_file, &one, &st)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_File_sync(split_file)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_File_read_at_all_begin(split_file, (MPI_Offset)mine * 4, &back, 1, MPI_INT)) ==
                 MPI_SUCCESS &&
             MPI_CHECK(MPI_File_read_at_all_end(split_file, &back, &st)) == MPI_SUCCESS && back == mine + 1;
    } else if (!strcmp(name, "ifile")) {
        ok = self_file_io(one);
    } else if (!strcmp(name, "fence")) {
        MPI_Win win;
        ok = MPI_CHECK(MPI_Win_create(all, (MPI_Aint)(sizeof(int) * (size_t)n), (int)sizeof(int), MPI_INFO_NULL, w,
                                      &win)) == MPI_SUCCESS;
        if (ok) {   /* each rank puts its number into rank 0's slot for it */
            ok = MPI_CHECK(MPI_Win_fence(0, win)) == MPI_SUCCESS &&
                 MPI_CHECK(MPI_Put(&one, 1, MPI_INT, 0, rank, 1, MPI_INT, win)) == MPI_SUCCESS &&
                 MPI_CHECK(MPI_Win_fence(0, win)) == MPI_SUCCESS;
            for (int i = 0; i < n && rank == 0; i++) ok &= all[i] == i + 1;
            ok &= MPI_CHECK(MPI_Win_free(&win)) == MPI_SUCCESS;
        }
    } else if (!strcmp(name, "pscw")) {
        /* a halo exchange by access epochs on a window made once: each rank
         * exposes it to its two neighbours and puts its number into theirs
         * (slot 0 of the next rank's, slot 1 of the previous one's) */
        halo_buf[0] = halo_buf[1] = -1;
        ok = MPI_CHECK(MPI_Win_post(halo_group, 0, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Win_start(halo_group, 0, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Put(&one, 1, MPI_INT, nb[1], 0, 1, MPI_INT, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Put(&one, 1, MPI_INT, nb[0], 1, 1, MPI_INT, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Win_complete(halo_win)) == MPI_SUCCESS && MPI_CHECK(MPI_Win_wait(halo_win)) == MPI_SUCCESS &&
             halo_buf[0] == nb[0] + 1 && halo_buf[1] == nb[1] + 1;
    } else if (!strcmp(name, "connect")) {
        /* the even ranks accept, the odd ones connect, on a port opened
         * before the steps; the two halves meet and part */
        MPI_Comm inter = MPI_COMM_NULL;
        int remote = -1;
        ok = (rank % 2 == 0 ? MPI_CHECK(MPI_Comm_accept(port_name, MPI_INFO_NULL, 0, port_half, &inter))
                            : MPI_CHECK(MPI_Comm_connect(port_name, MPI_INFO_NULL, 0, port_half, &inter))) ==
                 MPI_SUCCESS &&
             MPI_CHECK(MPI_Comm_remote_size(inter, &remote)) == MPI_SUCCESS && remote == (rank % 2 ? (n + 1) / 2 : n / 2) &&
             MPI_CHECK(MPI_Comm_disconnect(&inter)) == MPI_SUCCESS;
    } else if (!strcmp(name, "neighbor")) {
        /* a gossip step on a ring made before the steps: each rank's
         * number to both neighbours, gathered and exchanged */
        int two[2] = {one, one}, in[2] = {-1, -1}, gathered[2] = {-1, -1};
        ok = MPI_CHECK(MPI_Neighbor_alltoall(two, 1, MPI_INT, in, 1, MPI_INT, ring)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Neighbor_allgather(&one, 1, MPI_INT, gathered, 1, MPI_INT, ring)) == MPI_SUCCESS;
        for (int i = 0; i < 2; i++) ok &= in[i] == nb[i] + 1 && gathered[i] == nb[i] + 1;
    } else if (!strcmp(name, "alltoallw")) {
        MPI_Datatype *ints = malloc(sizeof(MPI_Datatype) * (size_t)n);
        if (!ints) MPI_Abort(MPI_COMM_WORLD, 3);
        for (int i = 0; i < n; i++) ints[i] = MPI_INT, at[i] = i * (int)sizeof(int);
        ok = MPI_CHECK(MPI_Alltoallw(out, ones, at, ints, all, ones, at, ints, w)) == MPI_SUCCESS;
        for (int i = 0; i < n; i++) ok &= all[i] == 100 * i + rank;
        free(ints);
    } else if (!strcmp(name, "lock")) {
        /* passive target on the same window: this rank's number put into
         * rank 0's slot for it under an exclusive lock, read back under a
         * shared one (rank 0's window has a slot per rank) */
        int back = -1;
        ok = MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Put(&one, 1, MPI_INT, 0, 2 + rank, 1, MPI_INT, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Win_unlock(0, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Get(&back, 1, MPI_INT, 0, 2 + rank, 1, MPI_INT, halo_win)) == MPI_SUCCESS &&
             MPI_CHECK(MPI_Win_unlock(0, halo_win)) == MPI_SUCCESS && back == one;
    } else if (!strcmp(name, "allgatherv") || !strcmp(name, "gatherv")) {
        int rooted = name[0] == 'g';
        int rc = rooted ? MPI_CHECK(MPI_Gatherv(&one, 1, MPI_INT, all, ones, at, MPI_INT, 0, w))
                        : MPI_CHECK(MPI_Allgatherv(&one, 1, MPI_INT, all, ones, at, MPI_INT, w));
        ok = rc == MPI_SUCCESS;
        for (int i = 0; i < n && (!rooted || rank == 0); i++) ok &= all[i] == i + 1;
    } else if (!strcmp(name, "scatterv")) {
        for (int i = 0; i < n; i++) all[i] = i + 1;
        ok = MPI_CHECK(MPI_Scatterv(all, ones, at, MPI_INT, &got, 1, MPI_INT, 0, w)) == MPI_SUCCESS && got == one;
    } else if (!strcmp(name, "alltoallv")) {
        ok = MPI_CHECK(MPI_Alltoallv(out, ones, at, MPI_INT, all, ones, at, MPI_INT, w)) == MPI_SUCCESS;
        for (int i = 0; i < n; i++) ok &= all[i] == 100 * i + rank;
    } else if (!strcmp(name, "reduce_scatter") || !strcmp(name, "reduce_scatter_block")) {
        for (int i = 0; i < n; i++) out[i] = one;
        int rc = strcmp(name, "reduce_scatter") ? MPI_CHECK(MPI_Reduce_scatter_block(out, &got, 1, MPI_INT, MPI_SUM, w))
                          : MPI_CHECK(MPI_Reduce_scatter(out, &got, ones, MPI_INT, MPI_SUM, w));
        ok = rc == MPI_SUCCESS && got == n * (n + 1) / 2;
    } else if (!strcmp(name, "scan") || !strcmp(name, "exscan")) {
        int ex = name[0] == 'e';
        int rc = ex ? MPI_CHECK(MPI_Exscan(&one, &got, 1, MPI_INT, MPI_SUM, w))
                    : MPI_CHECK(MPI_Scan(&one, &got, 1, MPI_INT, MPI_SUM, w));
        int want = ex ? rank * (rank + 1) / 2 : (rank + 1) * (rank + 2) / 2;
        ok = rc == MPI_SUCCESS && (got == want || (ex && rank == 0));   /* Exscan leaves rank 0's undefined */
    } else {
        ok = 0;
    }
    free(all);
    free(out);
    free(ones);
    free(at);
    return ok;
}

/* Conservation and replicas on one stream, after its flush: plain
 * reductions (MPI_Reduce and a broadcast are not reshaped). */
static void check_stream(state *st)
{
    int cons = 1, same = 1, crank;
    MPI_CHECK(MPI_Comm_rank(st->comm, &crank));
    for (int i = 0; i < ntensors; i++) {
        long n = counts[i];
        double *sent = malloc(sizeof(double) * (size_t)n), *lo = malloc(sizeof(double) * (size_t)n),
               *hi = malloc(sizeof(double) * (size_t)n);
        if (!sent || !lo || !hi) MPI_Abort(MPI_COMM_WORLD, 3);
        int rc = reduce_sums(st, i, (int)n, sent, lo, hi);
        if (rc != MPI_SUCCESS) cons = same = 0;
        for (long e = 0; crank == 0 && rc == MPI_SUCCESS && e < n; e++) {
            if (lo[e] != hi[e]) same = 0;
            if (lo[e] != sent[e] && cons) {
                cons = 0;
                fprintf(stderr, "%s: tensor %d element %ld: received %.0f (the least of any rank; the most %.0f), "
                        "sent %.0f\n", st->name, i, e, lo[e], hi[e], sent[e]);
            }
        }
        free(sent);
        free(lo);
        free(hi);
    }
    if (crank != 0) cons = same = 1;   /* rank 0 of each stream judged it */
    char what[200];
    snprintf(what, sizeof what, "%s: nothing lost, nothing doubled, per tensor (%s)", loop, st->name);
    check(cons, what);
    snprintf(what, sizeof what, "%s: replicas bitwise equal after the flush (%s)", loop, st->name);
    check(same, what);
    if (same_results) {
        snprintf(what, sizeof what, "%s: every rank got the same result at every call before the last step (%s)",
                 loop, st->name);
        check(results_agree(st), what);
    }
}

/* The half parts: MPI_Comm_disconnect (--disconnect) or MPI_Comm_free. */
static void part_half(state *half)
{
    if (disconnect) MPI_CHECK(MPI_Comm_disconnect(&half->comm));
    else MPI_CHECK(MPI_Comm_free(&half->comm));
}

/* The training loop and the flush after it, on the streams. */
typedef struct {
    state *st;
    int nst, loss_ok;
    int end_ok;                 /* --end-call: its result was right */
    int flushes, flushes_bad;   /* --soak: mid-run flushes checked, and those that failed */
    double per_step;
} loop_run;

static void *run_loop(void *arg)
{
    loop_run *r = arg;
    double t_warm = 0, t_start = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        if (s == warmup) t_warm = MPI_Wtime();
        double ms = compute_ms * (me_slow() ? slow_factor : 1);
        if (soak) {   /* random compute, 2% spikes: a noisy rank is a different one each step */
            uint64_t u = mix64((uint64_t)rank * 1000003 + (uint64_t)s);
            ms *= (double)(u % 1000) / 1000.0;
            if ((u >> 20) % 50 == 0) ms = 10 * compute_ms;
            if (s % 53 == 17) MPI_CHECK(MPI_Pcontrol(2));   /* program points every rank shares */
            if (s % 71 == 30) MPI_CHECK(MPI_Pcontrol(0));
            if (s % 71 == 40) MPI_CHECK(MPI_Pcontrol(1));
        }
        sleep_ms(ms);
        if (s == stop_at && me_slow()) {
            if (freeze) freeze_self(stop_s);
            else sleep_ms(stop_s * 1e3);
        }
        if (s == part_at && r->nst == 2) {   /* --part-at: the half's last step, a flush; then it parts */
            MPI_CHECK(MPI_Pcontrol(2));
            one_step(&r->st[1], s, 1, &r->loss_ok);
            check_stream(&r->st[1]);
            part_half(&r->st[1]);
            r->nst = 1;
        }
        for (int c = 0; c < r->nst; c++) one_step(&r->st[c], s, 0, &r->loss_ok);
        if (eval_every > 0 && (s + 1) % eval_every == 0)
            for (int c = 0; c < r->nst; c++) eval_pass(&r->st[c], s);
        if (end_call && call_every > 0 && (s + 1) % call_every == 0) r->end_ok &= make_end_call(end_call);
        if (soak && s % 53 == 17) {
            r->flushes++;
            for (int c = 0; c < r->nst; c++) r->flushes_bad += !flushed_sums_agree(&r->st[c], s);
        }
    }
    double t_end = MPI_Wtime();
    r->per_step = (t_end - (warmup < steps ? t_warm : t_start)) / (warmup < steps ? steps - warmup : steps) * 1e3;
    if (end_call) r->end_ok &= make_end_call(end_call);
    MPI_CHECK(MPI_Pcontrol(1));
    MPI_CHECK(MPI_Pcontrol(2));   /* flush: the next call on every tensor delivers everything pending */
    /* with --alternate, one cycle of zero steps: every tensor gets its call */
    for (int z = 0; z <= alternate; z++)
        for (int c = 0; c < r->nst; c++) one_step(&r->st[c], steps + z, 1, &r->loss_ok);
    return NULL;
}

/* --end-call spawn's helper: takes the number, answers, parts. */
static int spawned_helper(MPI_Comm parent)
{
    int got = -1;
    int ok = MPI_CHECK(MPI_Bcast(&got, 1, MPI_INT, 0, parent)) == MPI_SUCCESS;
    got += 1;
    if (ok && rank == 0) ok = MPI_CHECK(MPI_Send(&got, 1, MPI_INT, 0, 12, parent)) == MPI_SUCCESS;
    ok &= MPI_CHECK(MPI_Comm_disconnect(&parent)) == MPI_SUCCESS;
    ok &= MPI_CHECK(MPI_Finalize()) == MPI_SUCCESS;
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int comm_thread = 0, provided = MPI_THREAD_SINGLE;
    for (int a = 1; a < argc; a++) comm_thread |= !strcmp(argv[a], "--comm-thread");
    int rc = comm_thread ? MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) : MPI_Init(&argc, &argv);
    if (rc != MPI_SUCCESS) return 1;
    if (comm_thread && provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "starcoll_loops: --comm-thread needs MPI_THREAD_MULTIPLE, the MPI library gave %d\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));   /* errors come back as codes */
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    nb[0] = (rank + size - 1) % size, nb[1] = (rank + 1) % size;
    self_path = argv[0];
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) return spawned_helper(parent);
    if (machine_pause_start() != 0) fprintf(stderr, "rank %d: no machine-pause watcher thread; pauses count as waits\n", rank);
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "--loss")) loss = 1;
        else if (v && !strcmp(o, "--metric")) metric = atol(argv[++a]);
        else if (!strcmp(o, "--metric-pcontrol")) metric_pcontrol = 1;
        else if (!strcmp(o, "--in-place")) in_place = 1;
        else if (v && !strcmp(o, "--loop")) loop = argv[++a];
        else if (v && !strcmp(o, "--counts")) {
            if ((ntensors = parse_counts(argv[++a])) < 1) ntensors = -1;
        } else if (v && !strcmp(o, "--model")) model = argv[++a];
        else if (v && !strcmp(o, "--scale")) scale = atol(argv[++a]);
        else if (v && !strcmp(o, "--steps")) steps = atoi(argv[++a]);
        else if (v && !strcmp(o, "--warmup")) warmup = atoi(argv[++a]);
        else if (v && !strcmp(o, "--compute-ms")) compute_ms = atof(argv[++a]);
        else if (v && !strcmp(o, "--slow-rank")) slow_rank = atoi(argv[++a]);
        else if (v && !strcmp(o, "--slow-factor")) slow_factor = atof(argv[++a]);
        else if (v && !strcmp(o, "--extra-call")) extra_call = atoi(argv[++a]);
        else if (!strcmp(o, "--vary-last")) vary_last = 1;
        else if (v && !strcmp(o, "--eval-every")) eval_every = atoi(argv[++a]);
        else if (v && !strcmp(o, "--eval-batches")) eval_batches = atoi(argv[++a]);
        else if (v && !strcmp(o, "--skip-at")) skip_at = atoi(argv[++a]);
        else if (v && !strcmp(o, "--stop-at")) stop_at = atoi(argv[++a]);
        else if (v && !strcmp(o, "--stop-s")) stop_s = atof(argv[++a]);
        else if (!strcmp(o, "--freeze")) freeze = 1;
        else if (!strcmp(o, "--two-comms")) two_comms = 1;
        else if (!strcmp(o, "--halves-in-order")) halves_in_order = 1;
        else if (!strcmp(o, "--disconnect")) disconnect = 1;
        else if (v && !strcmp(o, "--part-at")) part_at = atoi(argv[++a]);
        else if (!strcmp(o, "--soak")) soak = 1;
        else if (!strcmp(o, "--same-results")) same_results = 1;
        else if (v && !strcmp(o, "--end-call")) end_call = argv[++a];
        else if (v && !strcmp(o, "--call-every")) call_every = atoi(argv[++a]);
        else if (v && !strcmp(o, "--alternate")) alternate = atoi(argv[++a]);
        else if (!strcmp(o, "--alternate-comm")) alternate_comm = 1;
        else if (v && !strcmp(o, "--bound-s")) bound_s = atof(argv[++a]);
        else if (!strcmp(o, "--comm-thread")) continue;   /* seen above */
        else ntensors = -1;
    }
    if (model) ntensors = tensor_list_read(model, scale, counts, MAX_TENSORS);
    int known = !strcmp(loop, "fresh") || !strcmp(loop, "moving") || !strcmp(loop, "own") || !strcmp(loop, "staging");
    if (ntensors < 1 || !known || alternate < 0 || (alternate > 0 && ntensors < 2)) {
        if (rank == 0) fprintf(stderr, "starcoll_loops: bad arguments (see the comment at the top of starcoll_loops.c)\n");
        MPI_CHECK(MPI_Finalize());
        return 2;
    }
    /* the streams: the world, and with --two-comms each half of it */
    state st[2] = {{.comm = MPI_COMM_WORLD, .second = MPI_COMM_NULL, .name = "world", .tags_ok = 1},
                   {.second = MPI_COMM_NULL, .name = "half", .tags_ok = 1}};
    int nst = 1;
    int color = halves_in_order ? rank >= size / 2 : rank % 2;
    if (two_comms && MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &st[1].comm)) == MPI_SUCCESS) nst = 2;
    for (int c = 0; c < nst && alternate_comm; c++) MPI_CHECK(MPI_Comm_dup(st[c].comm, &st[c].second));
    long maxc = 0;
    for (int i = 0; i < ntensors; i++)
        if (counts[i] > maxc) maxc = counts[i];
    for (int c = 0; c < nst; c++) {
        for (int i = 0; i < ntensors; i++) {
            st[c].grad[i] = alloc_floats(counts[i]);
            st[c].out[i] = alloc_floats(counts[i]);
            st[c].sent[i] = calloc((size_t)counts[i], sizeof(double));
            st[c].got[i] = calloc((size_t)counts[i], sizeof(double));
        }
        st[c].stage = alloc_floats(maxc);
        if (same_results && !(st[c].result_sum = calloc((size_t)(steps + 1 + alternate) * (size_t)ntensors, sizeof(double))))
            MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (end_call && (!strcmp(end_call, "file") || !strcmp(end_call, "ifile") || !strcmp(end_call, "split-file"))) {
        long id = (long)getpid();   /* rank 0's pid names the file for all */
        MPI_CHECK(MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD));
        const char *dir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
        snprintf(end_file, sizeof end_file, "%.200s/starcoll_loops.%ld", dir, id);
        if (!strcmp(end_call, "split-file"))
            MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, end_file, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                    MPI_INFO_NULL, &split_file));
    }
    if (end_call && (!strcmp(end_call, "pscw") || !strcmp(end_call, "lock"))) {   /* the two neighbours' window */
        MPI_Group world_group;
        int nbuf = 2 + (rank == 0 ? size : 0);
        if (!(halo_buf = calloc((size_t)nbuf, sizeof(int)))) MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_CHECK(MPI_Win_create(halo_buf, (MPI_Aint)(sizeof(int) * (size_t)nbuf), (int)sizeof(int), MPI_INFO_NULL,
                                 MPI_COMM_WORLD, &halo_win));
        MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
        MPI_CHECK(MPI_Group_incl(world_group, nb[0] == nb[1] ? 1 : 2, nb, &halo_group));
        MPI_CHECK(MPI_Group_free(&world_group));
    }
    if (end_call && !strcmp(end_call, "neighbor")) {
        int weights[2] = {1, 1};
        MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, weights, 2, nb, weights, MPI_INFO_NULL, 0,
                                                 &ring));
    }
    if (end_call && !strcmp(end_call, "connect")) {
        if (rank == 0) MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port_name));
        MPI_CHECK(MPI_Bcast(port_name, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &port_half));
    }
    loop_run run = {.st = st, .nst = nst, .loss_ok = 1, .end_ok = 1};
    if (comm_thread) {
        pthread_t t;
        if (pthread_create(&t, NULL, run_loop, &run) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
        pthread_join(t, NULL);
    } else {
        run_loop(&run);
    }
    int loss_ok = run.loss_ok;
    double per_step = run.per_step;
    char what[200];
    snprintf(what, sizeof what, "%s: every MPI call returned MPI_SUCCESS%s", loop,
             extra_call >= 0 ? " (but the extra call)" : "");
    check(bad_returns + sc_mpi_failures == 0, what);
    int tags_ok = st[0].tags_ok && (nst < 2 || st[1].tags_ok);
    snprintf(what, sizeof what, "%s: every result of a tensor is made of that tensor's buffers (tags)", loop);
    check(tags_ok, what);
    if (loss) {
        snprintf(what, sizeof what, "%s: the per-step loss is exact at every step", loop);
        check(loss_ok, what);
    }
    if (metric > 0) {
        int wrong = 0;
        MPI_CHECK(MPI_Allreduce(&metric_wrong, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "%s: the per-step metric of %ld floats is exact at every step (%d steps not, on some rank)",
                 loop, metric, wrong);
        check(wrong == 0, what);
    }
    if (eval_every > 0) {
        int wrong = 0;
        MPI_CHECK(MPI_Allreduce(&eval_wrong, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "%s: every validation loss and count is exact (%d were not, on some rank)", loop, wrong);
        check(wrong == 0, what);
    }
    if (end_call) {
        snprintf(what, sizeof what, "%s: --end-call %s after the steps%s gave the right result every time", loop, end_call,
                 call_every > 0 ? " and after every few" : "");
        check(run.end_ok, what);
    }
    if (soak) {
        snprintf(what, sizeof what, "%s: after each of %d mid-run flushes every rank holds every contribution so far", loop,
                 run.flushes);
        check(run.flushes > 0 && run.flushes_bad == 0, what);
    }
    /* conservation and replicas, per stream (a parted half was checked when it parted) */
    for (int c = 0; c < run.nst; c++) check_stream(&st[c]);
    double longest = 0, pause_mine = machine_pause_longest(), pause = 0;
    MPI_CHECK(MPI_Reduce(&longest_s, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Bcast(&longest, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(&pause_mine, &pause, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    if (bound_s > 0) {
        snprintf(what, sizeof what, "%s: no single MPI_Allreduce took over %.1f s (the longest took %.3f s)", loop, bound_s,
                 longest);
        check(longest <= bound_s, what);
        if (longest_s > bound_s)   /* each rank over the bound says where, for the watchdog's lines beside it */
            fprintf(stderr, "rank %d: its longest MPI_Allreduce took %.3f s, at step %d, tensor %d (%s)\n", rank, longest_s,
                    longest_step, longest_tensor, longest_stream);
    }
    for (int c = 0; c < nst; c++)
        if (st[c].second != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&st[c].second));
    if (run.nst == 2) part_half(&st[1]);
    if (ring != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&ring));
    if (port_half != MPI_COMM_NULL) {
        MPI_CHECK(MPI_Comm_free(&port_half));
        if (rank == 0) MPI_CHECK(MPI_Close_port(port_name));
    }
    if (split_file != MPI_FILE_NULL) MPI_CHECK(MPI_File_close(&split_file));
    if (halo_win != MPI_WIN_NULL) {
        MPI_CHECK(MPI_Win_free(&halo_win));
        MPI_CHECK(MPI_Group_free(&halo_group));
        free(halo_buf);
    }
    /* figures: mean step time of the ranks never slow, and of the slow one */
    double mine[2] = {me_slow() ? 0 : per_step, me_slow() ? per_step : 0}, sum[2] = {0, 0};
    rc = MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && rc == MPI_SUCCESS) {
        printf("loops: loop=%s%s ranks=%d tensors=%d steps=%d fast_step_ms=%.3f slow_step_ms=%.3f longest_call_s=%.3f "
               "machine_pause_s=%.3f\n", loop, comm_thread ? "-thread" : "", size, ntensors, steps,
               size > 1 ? sum[0] / (size - 1) : sum[0], sum[1], longest, pause);
        printf("%d passed, %d failed\n", passed, failed);
    }
    MPI_CHECK(MPI_Finalize());
    return failed ? 1 : 0;
}
