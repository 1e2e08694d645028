/* mpirun test of the tolerant modes (quorum, groups, auto): a training-shaped
 * loop of integer-valued gradient buffers under straggler patterns, then a
 * flush (MPI_Pcontrol(2)); checks, exactly:
 *   conservation  every rank's summed results == the sum of every buffer
 *                 every rank deposited (elementwise, bitwise);
 *   consistency   all ranks' summed results are bitwise equal;
 *   shape         results have the right count (no cross-slot mixing).
 * Ragged runs (ranks stop at different steps) write their sums to files
 * that mpi_tolerant.sh checks after the job, since no collective can be
 * made once ranks have left.
 *
 * usage: mpi_tolerant [--pattern none|persistent|jitter|burst|onset|sleep3]
 *          [--steps N] [--compute-ms MS] [--spin-ms MS] [--onset-end STEP] [--slow-rank R]
 *          [--swap] [--ragged DIR] [--two-comms] [--in-place] [--stray] [--double]
 *          [--nonblocking waitall|wait|waitany|test] [--threads comm|two|crossed|clash] [--device [--host-rank R]]
 * --nonblocking starts each step's calls with MPI_Iallreduce into fresh
 * receive buffers and completes them the named way (test: polling with
 * MPI_Test between bits of compute, as overlapping codes do); a receive
 * buffer is poisoned once its request completed and must stay so: nothing
 * may write into it afterwards.  --threads (MPI_THREAD_MULTIPLE): comm, the
 * loop's calls made by a communication thread, not MPI_Init's (as
 * Horovod's background thread makes them); two, with --two-comms, each
 * communicator's loop on a thread of its own, both at once; crossed, as two
 * on a duplicate of the world, which even ranks call on first and odd ranks
 * second (each rank's order of first use differs); clash, two
 * threads calling on one communicator at once (erroneous MPI: starcoll
 * must say so and pass them through).
 * --spin-ms adds MS of CPU work per step (measured on the thread's CPU clock,
 * so a rank starved of CPU takes longer to do it, as real compute would);
 * --onset-end ends the onset pattern's slowdown at STEP; --slow-rank names
 * the persistent pattern's straggler (default: the last rank).
 * --device: the blocking calls reduce device buffers (tests/fakecuda's
 * stand-in driver: pages the CPU cannot touch; or cudaMalloc's on a GPU),
 * filled and read with copies, as a GPU code's gradients are; every check
 * above applies to them (--host-rank R: R's gradients stay on the host, as a
 * CUDA-aware MPI allows).  Each step also reduces a loss, a flag and an
 * argmax on device buffers (device_extras), checked exactly at once. */
#include <math.h>
#include <mpi.h>
#include "mpi_check.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <dlfcn.h>
#include "device_memory.h"

#define NSLOTS 3
static const int slot_count[NSLOTS] = {65536, 32768, 65536};   /* 256 KiB, 128 KiB, 256 KiB as floats */

static int rank, size, steps = 40, use_double = 0, in_place = 0, swap = 0, two_comms = 0, stray = 0;
static double compute_ms = 8, spin_ms = 0;
static int onset_end = -1;
static int slow_rank = -1;   /* persistent pattern: the straggler; -1: the last rank */   /* onset pattern: first step back at normal speed; -1 never */
static const char *pattern = "none", *ragged_dir = NULL, *nonblocking = NULL, *threads = NULL;
static int late_writes;   /* receive buffers written after their request completed */
static int device;        /* --device */
static int host_rank = -1;   /* --host-rank: with --device, this rank's gradients stay in host memory */
static unsigned long long (*driver_queries)(void);   /* --device: the stand-in's fake_cuda_queries, or NULL */
static unsigned long long host_call_queries;         /* ... counted on host_counts's calls */

/* Device memory for --device (benchmarks/device_memory.h): the stand-in
 * driver's (tests/fake_cuda.c), or, on a machine with a GPU, cudaMalloc's. */
static void device_init(void)
{
    char why[256];
    if (devmem_open(why, sizeof why) != 0) {
        fprintf(stderr, "mpi_tolerant: --device: %s\n", why);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) *(void **)&driver_queries = dlsym(h, "fake_cuda_queries");
}

static void sleep_ms(double ms)
{
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    while (nanosleep(&ts, &ts) != 0) {}
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Compute time of this rank at this step under the pattern. */
static double step_ms(int step)
{
    double base = compute_ms;
    if (strcmp(pattern, "persistent") == 0) return rank == (slow_rank >= 0 ? slow_rank : size - 1) ? 2 * base : base;
    if (strcmp(pattern, "jitter") == 0) {
        double u1 = ((double)(mix((uint64_t)rank * 7919 + (uint64_t)step) >> 11) + 0.5) / 9007199254740992.0;
        double u2 = ((double)(mix((uint64_t)rank * 104729 + (uint64_t)step + 17) >> 11) + 0.5) / 9007199254740992.0;
        double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        return base * exp(0.5 * z);
    }
    if (strcmp(pattern, "burst") == 0) return (step / 5) % size == rank ? 4 * base : base;
    if (strcmp(pattern, "onset") == 0)
        return (rank == 1 && step >= steps / 2 && (onset_end < 0 || step < onset_end)) ? 2 * base : base;
    if (strcmp(pattern, "sleep3") == 0) return (rank == 2 && step == steps / 3) ? 3000 : base;
    return base;
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Burns ms of this thread's CPU time; the wall time it takes grows with
 * contention or a CPU quota. */
static void spin_cpu_ms(double ms)
{
    double start = thread_cpu_ms();
    if (ms <= 0 || start < 0) return;
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; thread_cpu_ms() - start < ms; i++) sink += mix(i);
    (void)sink;
}

enum { NFLAGS = 100, NPAIRS = 10 };   /* device_extras */

typedef struct {
    MPI_Comm comm;
    int crank, csize;
    void *in[NSLOTS], *out[NSLOTS];
    void *dev_in[NSLOTS], *dev_out[NSLOTS];   /* --device */
    void *dev_loss_in, *dev_loss_out, *dev_flags, *dev_pairs;   /* --device: device_extras */
    double *deposited[NSLOTS], *received[NSLOTS];   /* per element sums, exact for integers < 2^53 */
} stream;

static void stream_init(stream *st, MPI_Comm comm)
{
    memset(st, 0, sizeof *st);
    st->comm = comm;
    MPI_CHECK(MPI_Comm_rank(comm, &st->crank));
    MPI_CHECK(MPI_Comm_size(comm, &st->csize));
    size_t es = use_double ? sizeof(double) : sizeof(float);
    for (int s = 0; s < NSLOTS; s++) {
        st->in[s] = malloc(es * (size_t)slot_count[s]);
        st->out[s] = malloc(es * (size_t)slot_count[s]);
        st->deposited[s] = calloc((size_t)slot_count[s], sizeof(double));
        st->received[s] = calloc((size_t)slot_count[s], sizeof(double));
        if (device) {
            st->dev_in[s] = devmem_alloc(es * (size_t)slot_count[s]);
            st->dev_out[s] = devmem_alloc(es * (size_t)slot_count[s]);
            if (!st->dev_in[s] || !st->dev_out[s]) MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (device) {   /* on the thread that calls MPI_Init, as the model's memory is: a communication thread has no CUDA context */
        st->dev_loss_in = devmem_alloc(sizeof(float));
        st->dev_loss_out = devmem_alloc(sizeof(float));
        st->dev_flags = devmem_alloc(NFLAGS * sizeof(int));
        st->dev_pairs = devmem_alloc(NPAIRS * 2 * sizeof(int));
        if (!st->dev_loss_in || !st->dev_loss_out || !st->dev_flags || !st->dev_pairs) MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Slot s's send buffer for this step: integer values depending on rank,
 * step and element (zeros for a flush), counted as deposited. */
static void fill(stream *st, int s, int step, int zero)
{
    for (int i = 0; i < slot_count[s]; i++) {
        double v = zero ? 0 : (double)((st->crank * 7 + step * 3 + s + i) % 11);
        st->deposited[s][i] += v;
        if (use_double) ((double *)st->in[s])[i] = v;
        else ((float *)st->in[s])[i] = (float)v;
    }
}

/* One eligible call on slot s. */
static void one_call(stream *st, int s, int step, int zero)
{
    int n = slot_count[s];
    fill(st, s, step, zero);
    MPI_Datatype dt = use_double ? MPI_DOUBLE : MPI_FLOAT;
    size_t bytes = (use_double ? 8 : 4) * (size_t)n;
    if (device && rank != host_rank) {   /* the gradients are on the device; the result is read back after the call */
        if (devmem_write(in_place ? st->dev_out[s] : st->dev_in[s], st->in[s], bytes) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_CHECK(MPI_Allreduce(in_place ? MPI_IN_PLACE : st->dev_in[s], st->dev_out[s], n, dt, MPI_SUM, st->comm));
        if (devmem_read(st->out[s], st->dev_out[s], bytes) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    } else if (in_place) {
        memcpy(st->out[s], st->in[s], bytes);
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, st->out[s], n, dt, MPI_SUM, st->comm));
    } else
        MPI_CHECK(MPI_Allreduce(st->in[s], st->out[s], n, dt, MPI_SUM, st->comm));
    for (int i = 0; i < n; i++) st->received[s][i] += use_double ? ((double *)st->out[s])[i] : ((float *)st->out[s])[i];
}

/* A step the way overlapping codes make it: every call started with
 * MPI_Iallreduce into a receive buffer of its own (freshly allocated),
 * then completed together.  Completed buffers are poisoned and kept a
 * while: a write after completion shows as a changed poison. */
#define POISON (-7.0)
static void **kept[NSLOTS];
static int nkept;
static void check_kept(int s, int n)
{
    for (int k = 0; k < nkept; k++) {
        for (int i = 0; i < n; i++) {
            double v = use_double ? ((double *)kept[s][k])[i] : ((float *)kept[s][k])[i];
            if (v != POISON) {
                if (late_writes++ < 3) fprintf(stderr, "rank %d: slot %d receive buffer written after completion\n", rank, s);
                break;
            }
        }
    }
}

static void one_step_nonblocking(stream *st, int step, int zero)
{
    enum { KEEP = 3 };
    MPI_Request req[NSLOTS];
    MPI_Datatype dt = use_double ? MPI_DOUBLE : MPI_FLOAT;
    size_t es = use_double ? sizeof(double) : sizeof(float);
    void *out[NSLOTS];
    for (int s = 0; s < NSLOTS; s++) {
        int n = slot_count[s];
        fill(st, s, step, zero);
        out[s] = malloc(es * (size_t)n);
        if (in_place) memcpy(out[s], st->in[s], es * (size_t)n);
        MPI_CHECK(MPI_Iallreduce(in_place ? MPI_IN_PLACE : st->in[s], out[s], n, dt, MPI_SUM, st->comm, &req[s]));
    }
    /* statuses asked for: MPICH's access hints make MPI_STATUSES_IGNORE a
     * -Wstringop-overflow warning */
    MPI_Status sts[NSLOTS];
    if (!strcmp(nonblocking, "waitall")) {
        MPI_CHECK(MPI_Waitall(NSLOTS, req, sts));
    } else if (!strcmp(nonblocking, "wait")) {
        for (int s = NSLOTS - 1; s >= 0; s--) MPI_CHECK(MPI_Wait(&req[s], MPI_STATUS_IGNORE));
    } else if (!strcmp(nonblocking, "waitany")) {
        for (int left = NSLOTS; left > 0; left--) {
            int idx = -1;
            MPI_CHECK(MPI_Waitany(NSLOTS, req, &idx, MPI_STATUS_IGNORE));
            if (idx < 0 || idx >= NSLOTS) {
                fprintf(stderr, "rank %d: MPI_Waitany gave index %d\n", rank, idx);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
    } else {   /* test: poll while computing */
        int done = 0;
        while (!done) {
            MPI_CHECK(MPI_Testall(NSLOTS, req, &done, sts));
            if (!done) sleep_ms(0.2);
        }
    }
    for (int s = 0; s < NSLOTS; s++) {
        int n = slot_count[s];
        if (req[s] != MPI_REQUEST_NULL) {
            fprintf(stderr, "rank %d: a completed request was not set to MPI_REQUEST_NULL\n", rank);
            late_writes++;
        }
        for (int i = 0; i < n; i++) {
            st->received[s][i] += use_double ? ((double *)out[s])[i] : ((float *)out[s])[i];
            if (use_double) ((double *)out[s])[i] = POISON;
            else ((float *)out[s])[i] = (float)POISON;
        }
        check_kept(s, n);
        if (!kept[s]) kept[s] = calloc(KEEP, sizeof(void *));
        if (nkept == KEEP) {
            free(kept[s][0]);
            memmove(kept[s], kept[s] + 1, sizeof(void *) * (KEEP - 1));
        }
        kept[s][nkept == KEEP ? KEEP - 1 : nkept] = out[s];
    }
    if (nkept < KEEP) nkept++;
}

/* --device: what a GPU code keeps on the CPU, reduced beside its device
 * buffers: a correct/seen pair on the stack and a histogram in memory
 * malloc'ed fresh each step.  starcoll tells these for host memory without
 * asking the driver (plugin/host_memory.h); the stand-in counts the pointer
 * queries it is asked, and with one thread calling MPI none may come from
 * these calls.  Under AddressSanitizer malloc maps its memory: the heap's
 * queries are not counted then. */
static unsigned long long queries_now(void) { return driver_queries ? driver_queries() : 0; }

static void host_counts(stream *st, int step)
{
    int n = st->csize, me = st->crank;
    double mine[2] = {me + 1, 10 + step}, sums[2] = {-1, -1};
    int *hist = malloc(16 * sizeof *hist), *hist_sum = malloc(16 * sizeof *hist_sum);
    if (!hist || !hist_sum) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < 16; i++) hist[i] = (me + i + step) % 3, hist_sum[i] = -1;
    unsigned long long q = queries_now();
    MPI_CHECK(MPI_Allreduce(mine, sums, 2, MPI_DOUBLE, MPI_SUM, st->comm));
    host_call_queries += queries_now() - q;   /* the stack pair */
    q = queries_now();
    MPI_CHECK(MPI_Allreduce(hist, hist_sum, 16, MPI_INT, MPI_SUM, st->comm));
#ifndef __SANITIZE_ADDRESS__
    host_call_queries += queries_now() - q;   /* the heap pair */
#endif
    int bad = sums[0] != n * (n + 1) / 2.0 || sums[1] != n * (10.0 + step);
    for (int i = 0; i < 16; i++) {
        int want = 0;
        for (int r = 0; r < n; r++) want += (r + i + step) % 3;
        bad |= hist_sum[i] != want;
    }
    free(hist);
    free(hist_sum);
    if (bad) {
        fprintf(stderr, "rank %d: step %d: a host call beside the device ones is wrong\n", rank, step);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* --device: the calls a GPU code makes beside its gradients, each on
 * device buffers and none eligible, so they run exact on host copies: a
 * 1-float loss, an int MPI_MAX in place (a flag), and an MPI_2INT
 * MPI_MAXLOC (an argmax); every result is checked at once. */
static void device_extras(stream *st, int step)
{
    void *dev_loss_in = st->dev_loss_in, *dev_loss_out = st->dev_loss_out, *dev_flags = st->dev_flags,
         *dev_pairs = st->dev_pairs;
    int n = st->csize, me = st->crank;
    float loss = (float)(me + 1 + step % 5), got_loss = -1;
    if (devmem_write(dev_loss_in, &loss, sizeof loss) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_CHECK(MPI_Allreduce(dev_loss_in, dev_loss_out, 1, MPI_FLOAT, MPI_SUM, st->comm));
    if (devmem_read(&got_loss, dev_loss_out, sizeof got_loss) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    float want_loss = (float)(n * (n + 1) / 2 + n * (step % 5));
    int flags[NFLAGS], pairs[NPAIRS * 2], bad = got_loss != want_loss;
    for (int i = 0; i < NFLAGS; i++) flags[i] = (me * 13 + step + i) % 17;
    for (int i = 0; i < NPAIRS; i++) pairs[2 * i] = (me * 5 + step + i) % 7, pairs[2 * i + 1] = me;
    if (devmem_write(dev_flags, flags, sizeof flags) != 0 || devmem_write(dev_pairs, pairs, sizeof pairs) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, dev_flags, NFLAGS, MPI_INT, MPI_MAX, st->comm));
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, dev_pairs, NPAIRS, MPI_2INT, MPI_MAXLOC, st->comm));
    if (devmem_read(flags, dev_flags, sizeof flags) != 0 || devmem_read(pairs, dev_pairs, sizeof pairs) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < NFLAGS; i++) {
        int want = -1;
        for (int r = 0; r < n; r++) want = (r * 13 + step + i) % 17 > want ? (r * 13 + step + i) % 17 : want;
        bad |= flags[i] != want;
    }
    for (int i = 0; i < NPAIRS; i++) {
        int v = -1, at = -1;
        for (int r = 0; r < n; r++)
            if ((r * 5 + step + i) % 7 > v) v = (r * 5 + step + i) % 7, at = r;   /* ties: the lowest rank */
        bad |= pairs[2 * i] != v || pairs[2 * i + 1] != at;
    }
    if (bad) {
        fprintf(stderr, "rank %d: step %d: a device call beside the gradients is wrong (loss %g, want %g)\n", rank, step,
                (double)got_loss, (double)want_loss);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    host_counts(st, step);
}

static void one_step(stream *st, int step)
{
    if (nonblocking) {
        one_step_nonblocking(st, step, 0);
        return;
    }
    if (device) device_extras(st, step);
    for (int s = 0; s < NSLOTS; s++) {
        one_call(st, s, step, 0);
        /* A call off the pattern in the middle of some steps: an eligible
         * shape no slot has; it runs exact and the step goes on. */
        if (stray && s == 0 && step % 7 == 3) {
            float x[20000], y[20000];
            for (int i = 0; i < 20000; i++) x[i] = (float)(st->crank + 1);
            MPI_CHECK(MPI_Allreduce(x, y, 20000, MPI_FLOAT, MPI_SUM, st->comm));
            float want = (float)(st->csize * (st->csize + 1) / 2);
            if (y[0] != want || y[19999] != want) {
                fprintf(stderr, "rank %d: stray call got %g, want %g\n", rank, y[0], want);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
    }
}

static void flush(stream *st, int step)
{
    MPI_CHECK(MPI_Pcontrol(2));
    if (nonblocking) one_step_nonblocking(st, step, 1);
    else
        for (int s = 0; s < NSLOTS; s++) one_call(st, s, step, 1);
}

static int passed, failed;
static void check(int ok, const char *what)
{
    if (rank == 0) printf("%s%s\n", ok ? "ok   - " : "FAIL - ", what);
    if (ok) passed++;
    else failed++;
}

/* Conservation and consistency over all ranks of st->comm. */
static void verify(stream *st, const char *name)
{
    int cons = 1, same = 1;
    for (int s = 0; s < NSLOTS; s++) {
        int n = slot_count[s];
        double *total = malloc(sizeof(double) * (size_t)n), *lo = malloc(sizeof(double) * (size_t)n),
               *hi = malloc(sizeof(double) * (size_t)n);
        MPI_CHECK(PMPI_Allreduce(st->deposited[s], total, n, MPI_DOUBLE, MPI_SUM, st->comm));
        MPI_CHECK(PMPI_Allreduce(st->received[s], lo, n, MPI_DOUBLE, MPI_MIN, st->comm));
        MPI_CHECK(PMPI_Allreduce(st->received[s], hi, n, MPI_DOUBLE, MPI_MAX, st->comm));
        /* On a mismatch, each slot's first element and its totals: a whole
         * buffer lost shows on every element of its slot (a fused group's
         * on every member), a part of one on some. */
        int differ = 0, first = -1;
        double got = 0, want = 0;
        for (int i = 0; i < n; i++) {
            if (lo[i] != hi[i]) same = 0;
            got += st->received[s][i];
            want += total[i];
            if (st->received[s][i] != total[i]) {
                if (first < 0) first = i;
                differ++;
                cons = 0;
            }
        }
        if (differ && st->crank == 0)
            fprintf(stderr, "%s slot %d element %d: received %.0f, deposited %.0f; %d of %d elements differ, the slot's "
                    "sum received %.0f, deposited %.0f\n", name, s, first, st->received[s][first], total[first], differ,
                    n, got, want);
        free(total);
        free(lo);
        free(hi);
    }
    int c = 0, d = 0;
    MPI_CHECK(PMPI_Allreduce(&cons, &c, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    MPI_CHECK(PMPI_Allreduce(&same, &d, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    char line[256];
    snprintf(line, sizeof line, "%s: nothing lost, nothing doubled (pattern %s)", name, pattern);
    check(c, line);
    snprintf(line, sizeof line, "%s: replicas bitwise equal after flush (pattern %s)", name, pattern);
    check(d, line);
}

static void write_ragged(stream *st, int my_steps)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rank%d.txt", ragged_dir, rank);
    FILE *f = fopen(path, "w");
    if (!f) return;
    double dep = 0, rec = 0;
    for (int s = 0; s < NSLOTS; s++)
        for (int i = 0; i < slot_count[s]; i++) {
            dep += st->deposited[s][i];
            rec += st->received[s][i];
        }
    fprintf(f, "%d %d %.0f %.0f\n", rank, my_steps, dep, rec);
    fclose(f);
}

typedef struct {
    stream *st;
    int steps, with_delay, first_ms;   /* first_ms: a pause before the first call */
} loop_args;

/* The training loop over one stream (with each step's compute when
 * with_delay): on the main thread, or on a thread of its own. */
static void *run_loop(void *arg)
{
    loop_args *a = arg;
    if (a->first_ms) sleep_ms(a->first_ms);
    for (int step = 0; step < a->steps; step++) {
        if (a->with_delay) {
            if (swap && step == steps / 3) MPI_CHECK(MPI_Pcontrol(0));        /* exact from here ... */
            if (swap && step == 2 * steps / 3) MPI_CHECK(MPI_Pcontrol(1));    /* ... and tolerant again */
            sleep_ms(step_ms(step));
            spin_cpu_ms(spin_ms);
        }
        one_step(a->st, step);
    }
    return NULL;
}

/* Two threads on one communicator at once: rank 1 comes late, so the
 * others' first thread is still inside its call when their second one
 * calls.  Erroneous MPI: the sums may be garbage even without starcoll
 * (the library may pair pieces of the two), so only return codes are
 * checked here; mpi_tolerant.sh checks that starcoll said so. */
static void *clash_call(void *arg)
{
    MPI_Comm comm = *(MPI_Comm *)arg;
    enum { N = 65536 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) x[i] = 1;
    MPI_CHECK(MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_SUM, comm));
    free(x);
    free(y);
    return NULL;
}

static int run_clash(void)
{
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    for (int round = 0; round < 3; round++) {
        pthread_t a, b;
        if (rank == 1) sleep_ms(300);
        pthread_create(&a, NULL, clash_call, &comm);
        if (rank != 1) sleep_ms(100);
        else pthread_join(a, NULL);   /* the late rank calls one after the other */
        pthread_create(&b, NULL, clash_call, &comm);
        if (rank != 1) pthread_join(a, NULL);
        pthread_join(b, NULL);
    }
    MPI_CHECK(MPI_Comm_free(&comm));
    int failures = 0;
    MPI_CHECK(PMPI_Allreduce(&sc_mpi_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    check(failures == 0, "clash: every MPI call returned MPI_SUCCESS");
    if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
    MPI_CHECK(MPI_Finalize());
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    int want_threads = 0;
    for (int i = 1; i < argc; i++) want_threads |= !strcmp(argv[i], "--threads");
    int provided = MPI_THREAD_SINGLE;
    if ((want_threads ? MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) : MPI_Init(&argc, &argv)) !=
        MPI_SUCCESS)
        return 1;
    if (want_threads && provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "mpi_tolerant: --threads needs MPI_THREAD_MULTIPLE, the MPI library gave %d\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pattern") && i + 1 < argc) pattern = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--device")) device = 1;
        else if (!strcmp(argv[i], "--host-rank") && i + 1 < argc) host_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--compute-ms") && i + 1 < argc) compute_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--spin-ms") && i + 1 < argc) spin_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--onset-end") && i + 1 < argc) onset_end = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--slow-rank") && i + 1 < argc) slow_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ragged") && i + 1 < argc) ragged_dir = argv[++i];
        else if (!strcmp(argv[i], "--swap")) swap = 1;
        else if (!strcmp(argv[i], "--two-comms")) two_comms = 1;
        else if (!strcmp(argv[i], "--in-place")) in_place = 1;
        else if (!strcmp(argv[i], "--stray")) stray = 1;
        else if (!strcmp(argv[i], "--double")) use_double = 1;
        else if (!strcmp(argv[i], "--nonblocking") && i + 1 < argc) nonblocking = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = argv[++i];
        else {
            if (rank == 0) fprintf(stderr, "mpi_tolerant: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (threads && !strcmp(threads, "clash")) return run_clash();
    if (device) device_init();
    stream world, half;
    int crossed = threads && !strcmp(threads, "crossed");
    MPI_Comm world_comm = MPI_COMM_WORLD;   /* crossed: a duplicate of it */
    if (crossed) MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &world_comm));
    stream_init(&world, world_comm);
    MPI_Comm split = MPI_COMM_NULL;
    if (two_comms) {
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split));
        stream_init(&half, split);
    }
    /* Ragged: rank r stops 3r steps early and leaves. */
    int my_steps = ragged_dir ? steps - 3 * rank : steps;
    if (my_steps < 1) my_steps = 1;
    if (threads && (!strcmp(threads, "two") || crossed) && two_comms) {
        /* crossed: even ranks call on the duplicate first, odd ranks on their half */
        int late = 300;
        loop_args a = {&world, my_steps, 1, crossed && rank % 2 ? late : 0},
                  b = {&half, my_steps, 0, crossed && rank % 2 == 0 ? late : 0};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, run_loop, &a);
        pthread_create(&tb, NULL, run_loop, &b);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
    } else if (threads && !strcmp(threads, "comm") && !two_comms) {
        loop_args a = {&world, my_steps, 1, 0};
        pthread_t ta;
        pthread_create(&ta, NULL, run_loop, &a);
        pthread_join(ta, NULL);
    } else if (threads) {
        if (rank == 0) fprintf(stderr, "mpi_tolerant: --threads %s: comm (without --two-comms), two or crossed (with it) or clash\n", threads);
        MPI_Abort(MPI_COMM_WORLD, 2);
    } else {
        for (int step = 0; step < my_steps; step++) {
            if (swap && step == steps / 3) MPI_CHECK(MPI_Pcontrol(0));        /* exact from here ... */
            if (swap && step == 2 * steps / 3) MPI_CHECK(MPI_Pcontrol(1));    /* ... and tolerant again */
            sleep_ms(step_ms(step));
            spin_cpu_ms(spin_ms);
            one_step(&world, step);
            if (two_comms) one_step(&half, step);
        }
    }
    flush(&world, my_steps);
    if (two_comms) flush(&half, my_steps);
    if (ragged_dir) {
        write_ragged(&world, my_steps);
        MPI_CHECK(MPI_Finalize());   /* no collective after ranks start leaving */
        return sc_mpi_failures ? 1 : 0;   /* every MPI call returned MPI_SUCCESS */
    }
    verify(&world, "world");
    if (two_comms) verify(&half, "split");
    int my_failures = sc_mpi_failures, mpi_failures = 0;
    MPI_CHECK(PMPI_Allreduce(&my_failures, &mpi_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    check(mpi_failures == 0, "every MPI call returned MPI_SUCCESS");
    if (nonblocking) {
        int late = 0;
        MPI_CHECK(PMPI_Allreduce(&late_writes, &late, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        check(late == 0, "no receive buffer written after its request completed");
    }
    if (device) {   /* the stand-in driver counts what starcoll asked of it; rank 0's figures, for mpi_device.sh */
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        unsigned long long (*count)(void);
        const char *what[] = {"fake_cuda_async_copies", "fake_cuda_pinned_allocs", "fake_cuda_pushes"};
        for (int k = 0; h && k < 3 && rank == 0; k++)
            if ((*(void **)&count = dlsym(h, what[k]))) printf("device: %s %llu\n", what[k] + 10, count());
        if (driver_queries && !threads) {
            unsigned long long all = 0;
            MPI_CHECK(PMPI_Allreduce(&host_call_queries, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
            if (rank == 0) printf("device: host_call_queries %llu\n", all);
            check(all == 0, "host buffers beside device ones: the driver was not asked about them");
        }
        void *nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
        if (rank == 0 && nccl && (*(void **)&count = dlsym(nccl, "fake_nccl_allreduces")))
            printf("device: nccl_allreduces %llu\n", count());
    }
    if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
    if (split != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&split));
    if (world_comm != MPI_COMM_WORLD) MPI_CHECK(MPI_Comm_free(&world_comm));
    MPI_CHECK(MPI_Finalize());
    return failed ? 1 : 0;
}
