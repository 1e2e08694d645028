/* starcoll_loop: a training-shaped loop for measuring straggler tolerance.
 * Each step every rank "computes" (sleeps --compute-ms, plus what the
 * straggler spec adds, then burns --spin-ms of CPU time on its thread's CPU
 * clock, which a rank short of CPU takes longer to do), then all-reduces its gradient buffers (--sizes, one
 * MPI_Allreduce of floats each).  A plain MPI program: starcoll, when
 * preloaded, reshapes its calls.  At the end a flush (MPI_Pcontrol(2)),
 * then one line of figures:
 *
 *   loop: ranks=N steps=S fast_step_ms=F slow_step_ms=L wall_s=W slowest_compute_s=C
 *
 * fast_step_ms: mean time per step of the ranks the spec never slows;
 * slow_step_ms: the same for the others (0 when none); --slow-rank R counts
 * rank R among the slow ones, for a rank slowed from outside (a CPU quota,
 * a CPU hog); wall_s: from the
 * common start to the last rank's end, flush included; slowest_compute_s:
 * the largest total compute (sleep) of any rank, the least a job can take.
 *
 * --device: the gradient buffers are GPU memory (device_memory.h), as a
 * GPU code's are, filled once.
 *
 * usage: starcoll_loop [--steps N] [--compute-ms MS] [--spin-ms MS] [--sizes 256K,128K,256K]
 *                      [--straggler SPEC] [--slow-rank R] [--warmup N] [--device] */
#include <mpi.h>
#include "mpi_check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include "straggle.h"
#include "device_memory.h"

#define MAX_BUFS 16

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burns s seconds of this thread's CPU time: real compute, which a CPU
 * quota or a CPU hog stretches in wall time, as a sleep is not. */
static void spin_cpu_s(double s)
{
    double start = thread_cpu_s();
    if (s <= 0 || start < 0) return;
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; thread_cpu_s() - start < s; i++) sink += i * 0x9e3779b97f4a7c15ULL;
    (void)sink;
}

static int parse_size(const char *s, long *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0) return -1;
    if (*end == 'K' || *end == 'k') v *= 1024, end++;
    else if (*end == 'M' || *end == 'm') v *= 1048576, end++;
    if (*end) return -1;
    *out = (long)v;
    return 0;
}

static int usage(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr, "starcoll_loop: %s\nusage: starcoll_loop [--steps N] [--compute-ms MS] [--spin-ms MS] "
                        "[--sizes 256K,128K,256K] [--straggler SPEC] [--slow-rank R] [--warmup N] [--device]\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));   /* errors come back as codes */
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    long steps = 200, warmup = 10, nbufs = 0, bytes[MAX_BUFS];
    double compute_ms = 20, spin_ms = 0;
    long slow_rank = -1;
    const char *sizes = "256K,128K,256K", *spec = "none";
    int bad = 0, device = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--steps") && next) steps = atol(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && next) warmup = atol(argv[++i]);
        else if (!strcmp(argv[i], "--compute-ms") && next) compute_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--spin-ms") && next) spin_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--slow-rank") && next) slow_rank = atol(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && next) sizes = argv[++i];
        else if (!strcmp(argv[i], "--straggler") && next) spec = argv[++i];
        else if (!strcmp(argv[i], "--device")) device = 1;
        else bad = usage(rank, "unknown or incomplete option");
    }
    char list[256];
    snprintf(list, sizeof list, "%s", sizes);
    for (char *t = strtok(list, ","); t && !bad; t = strtok(NULL, ","))
        if (nbufs == MAX_BUFS || parse_size(t, &bytes[nbufs++]) != 0) bad = usage(rank, "bad --sizes");
    straggle st;
    char err[200];
    if (!bad && straggle_parse(spec, &st, err, sizeof err) != 0) bad = usage(rank, err);
    if (!bad && (steps < 1 || warmup < 0 || compute_ms < 0 || spin_ms < 0))
        bad = usage(rank, "steps >= 1, warmup, compute and spin >= 0");
    if (!bad && (slow_rank < -1 || slow_rank >= size)) bad = usage(rank, "--slow-rank must name a rank");
    if (!bad && device && devmem_open(err, sizeof err) != 0) bad = usage(rank, err);
    if (bad) {
        MPI_CHECK(MPI_Finalize());
        return bad;
    }
    float *in[MAX_BUFS], *out[MAX_BUFS];
    for (int b = 0; b < nbufs; b++) {
        long n = bytes[b] / 4;
        in[b] = malloc(sizeof(float) * (size_t)n);
        out[b] = malloc(sizeof(float) * (size_t)n);
        for (long i = 0; i < n; i++) in[b][i] = (float)((rank + i) % 7);
        if (device) {   /* the gradients live on the GPU; the host copies go */
            float *d_in = devmem_alloc((size_t)bytes[b]), *d_out = devmem_alloc((size_t)bytes[b]);
            if (!d_in || !d_out || devmem_write(d_in, in[b], (size_t)bytes[b]) != 0) {
                fprintf(stderr, "starcoll_loop: rank %d: no device memory for a %ld-byte buffer\n", rank, bytes[b]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            free(in[b]);
            free(out[b]);
            in[b] = d_in, out[b] = d_out;
        }
    }
    double base = compute_ms / 1e3, my_compute = 0, t0 = 0;
    int slowed = rank == slow_rank;
    for (long step = -warmup; step < steps; step++) {
        if (step == 0) {   /* warm-up done (starcoll has learned the pattern): start the clock together */
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            t0 = MPI_Wtime();
        }
        double extra = step >= 0 ? straggle_delay_s(&st, rank, size, step, base) : 0;
        if (extra > 0) slowed = 1;
        sleep_s(base + extra);
        spin_cpu_s(spin_ms / 1e3);
        if (step >= 0) my_compute += base + extra + spin_ms / 1e3;
        for (int b = 0; b < nbufs; b++) MPI_CHECK(MPI_Allreduce(in[b], out[b], (int)(bytes[b] / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    }
    double t_loop = MPI_Wtime() - t0;
    MPI_CHECK(MPI_Pcontrol(2));
    for (int b = 0; b < nbufs; b++) MPI_CHECK(MPI_Allreduce(in[b], out[b], (int)(bytes[b] / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    double t_end = MPI_Wtime() - t0;
    /* per rank: [loop time if fast, 1 if fast, loop time if slowed, 1 if slowed]; end time; compute */
    double mine[4] = {slowed ? 0 : t_loop, slowed ? 0 : 1, slowed ? t_loop : 0, slowed ? 1 : 0}, sum[4];
    double wall, slowest;
    MPI_CHECK(MPI_Reduce(mine, sum, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(&t_end, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(&my_compute, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        double fast = sum[1] > 0 ? sum[0] / sum[1] / (double)steps * 1e3 : 0;
        double slow = sum[3] > 0 ? sum[2] / sum[3] / (double)steps * 1e3 : 0;
        printf("loop: ranks=%d steps=%ld fast_step_ms=%.3f slow_step_ms=%.3f wall_s=%.3f slowest_compute_s=%.3f\n",
               size, steps, fast, slow, wall, slowest);
    }
    for (int b = 0; b < nbufs; b++) {
        if (device) {
            devmem_free(in[b]);
            devmem_free(out[b]);
        } else {
            free(in[b]);
            free(out[b]);
        }
    }
    int failures = sc_mpi_failures;
    MPI_CHECK(MPI_Finalize());
    if (failures) fprintf(stderr, "loop: %d MPI calls returned an error\n", failures);
    return failures ? 1 : 0;
}
