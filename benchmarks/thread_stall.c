/* thread_stall: starcoll's two-communicator stall without starcoll.
 *
 * A job with two communicators' engines runs, in each process, one
 * communicator's all-reduces on one thread while the application thread
 * makes the other's, and an engine thread per communicator polls
 * MPI_Iprobe for small notices.  This program does the same with plain MPI
 * (nothing of starcoll; run it without the preload): per process,
 *   - a reducer thread: each step's 4 all-reduces on a duplicate of the
 *     world (65536, 32768, 16384 and 49152 floats, fresh buffers);
 *   - the main thread, meanwhile: the same 4 on its half of the world (even
 *     or odd ranks), then it waits for the reducer's step;
 *   - two polling threads (--poll 2, the default): MPI_Iprobe and MPI_Recv
 *     of small notes on a control duplicate of the world and of the half,
 *     napping 20 us to 2 ms when there is none; the main thread sends one
 *     note to rank 0 of each per step.
 * --serial: the main thread waits for the reducer before its half's step
 * (no two collectives at once).  --poll 0 or 1: fewer polling threads.
 * --wait polled: both threads' all-reduces are MPI_Iallreduce, tested
 * to completion with naps between the tests (20 us of tests back to
 * back, then one every 50 us: what starcoll's own collectives do,
 * plugin/polled_coll.h); --wait spin: tested back to back, no nap.
 * Prints "thread_stall: ... longest_call_s=S" (the longest single
 * all-reduce or wait for the reducer, over ranks) and, per rank, the
 * longest call when it passed 2 s.  A measurement, not a test: its figures
 * are in README, "Limits". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mpi_check.h"

enum { NTENSORS = 4, TAG_NOTE = 7101 };
static const int counts[NTENSORS] = {65536, 32768, 16384, 49152};

typedef enum { WAIT_BLOCKING, WAIT_POLLED, WAIT_SPIN } wait_kind;
static wait_kind waiting = WAIT_BLOCKING;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int posted, done = -1, quit;   /* steps posted to the reducer, the last it finished */
static int rank;

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* One all-reduce, as --wait says. */
static void allreduce(const float *a, float *b, int count, MPI_Comm comm)
{
    if (waiting == WAIT_BLOCKING) {
        MPI_CHECK(MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, comm));
        return;
    }
    MPI_Request req;
    MPI_CHECK(MPI_Iallreduce(a, b, count, MPI_FLOAT, MPI_SUM, comm, &req));
    double spin_until = MPI_Wtime() + 20e-6;
    for (;;) {
        int done = 0;
        if (MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return;
        if (done) return;
        if (waiting == WAIT_POLLED && MPI_Wtime() >= spin_until) nap(50e-6);
    }
}

/* The step's all-reduces on comm; returns the longest. */
static double reduce_step(MPI_Comm comm)
{
    double longest = 0;
    for (int i = 0; i < NTENSORS; i++) {
        float *a = malloc(sizeof(float) * (size_t)counts[i]), *b = malloc(sizeof(float) * (size_t)counts[i]);
        if (!a || !b) {
            fprintf(stderr, "thread_stall: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int k = 0; k < counts[i]; k++) a[k] = (float)(rank + i);
        double t0 = MPI_Wtime();
        allreduce(a, b, counts[i], comm);
        double took = MPI_Wtime() - t0;
        if (took > longest) longest = took;
        free(a);
        free(b);
    }
    return longest;
}

static MPI_Comm world_data;
static double reducer_longest;

static void *reducer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (posted <= done + 1 && !quit) pthread_cond_wait(&cv, &mu);
        if (posted <= done + 1) {   /* quit, nothing posted */
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        pthread_mutex_unlock(&mu);
        double took = reduce_step(world_data);
        if (took > reducer_longest) reducer_longest = took;
        pthread_mutex_lock(&mu);
        done++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

static void *poller(void *arg)
{
    MPI_Comm ctrl = *(MPI_Comm *)arg;
    double wait = 20e-6;
    for (;;) {
        pthread_mutex_lock(&mu);
        int stop = quit;
        pthread_mutex_unlock(&mu);
        if (stop) return NULL;
        int flag = 0;
        MPI_Status st;
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_NOTE, ctrl, &flag, &st));
        if (flag) {
            long note[7];
            MPI_CHECK(MPI_Recv(note, 7, MPI_LONG, st.MPI_SOURCE, TAG_NOTE, ctrl, MPI_STATUS_IGNORE));
            wait = 20e-6;
            continue;
        }
        nap(wait);
        wait = wait * 2 > 2e-3 ? 2e-3 : wait * 2;
    }
}

int main(int argc, char **argv)
{
    int provided, steps = 1500, serial = 0, npoll = 2;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--steps") && a + 1 < argc) steps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--serial")) serial = 1;
        else if (!strcmp(argv[a], "--poll") && a + 1 < argc) npoll = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--wait") && a + 1 < argc && !strcmp(argv[a + 1], "blocking")) waiting = WAIT_BLOCKING, a++;
        else if (!strcmp(argv[a], "--wait") && a + 1 < argc && !strcmp(argv[a + 1], "polled")) waiting = WAIT_POLLED, a++;
        else if (!strcmp(argv[a], "--wait") && a + 1 < argc && !strcmp(argv[a + 1], "spin")) waiting = WAIT_SPIN, a++;
        else {
            fprintf(stderr, "usage: thread_stall [--steps N] [--serial] [--poll 0|1|2] [--wait blocking|polled|spin]\n");
            return 2;
        }
    }
    if (npoll < 0 || npoll > 2) npoll = 2;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) fprintf(stderr, "thread_stall: needs MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm half, half_data, ctrl[2];
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &world_data));
    MPI_CHECK(MPI_Comm_dup(half, &half_data));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &ctrl[0]));
    MPI_CHECK(MPI_Comm_dup(half, &ctrl[1]));
    pthread_t polling[2], reducing;
    for (int p = 0; p < npoll; p++) pthread_create(&polling[p], NULL, poller, &ctrl[p]);
    pthread_create(&reducing, NULL, reducer, NULL);

    double longest = 0;
    int longest_at = -1;
    srand((unsigned)rank + 1);
    for (int s = 0; s < steps; s++) {
        nap((rand() % 4000) * 1e-6);   /* compute: 0 to 4 ms */
        long note[7] = {1, s, 0, 0, -1, s, -1};
        for (int p = 0; p < npoll; p++) MPI_CHECK(MPI_Send(note, 7, MPI_LONG, 0, TAG_NOTE, ctrl[p]));
        pthread_mutex_lock(&mu);
        posted = s + 1;
        pthread_cond_broadcast(&cv);
        if (serial)
            while (done < s) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        double took = reduce_step(half_data);
        pthread_mutex_lock(&mu);
        double t0 = MPI_Wtime();
        while (done < s) pthread_cond_wait(&cv, &mu);
        double waited = MPI_Wtime() - t0;
        pthread_mutex_unlock(&mu);
        if (waited > took) took = waited;
        if (took > longest) {
            longest = took;
            longest_at = s;
        }
    }
    pthread_mutex_lock(&mu);
    quit = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(reducing, NULL);
    for (int p = 0; p < npoll; p++) pthread_join(polling[p], NULL);
    if (reducer_longest > longest) longest = reducer_longest;

    double all = 0;
    int size = 0, failed = 0;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Reduce(&longest, &all, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(&sc_mpi_failures, &failed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (longest > 2) fprintf(stderr, "thread_stall: rank %d: longest call %.3f s (step %d)\n", rank, longest, longest_at);
    if (rank == 0)
        printf("thread_stall: ranks=%d steps=%d mode=%s poll=%d wait=%s longest_call_s=%.3f failed_calls=%d\n", size,
               steps, serial ? "serial" : "concurrent", npoll,
               waiting == WAIT_BLOCKING ? "blocking" : waiting == WAIT_POLLED ? "polled" : "spin", all, failed);
    MPI_Comm_free(&ctrl[1]);
    MPI_Comm_free(&ctrl[0]);
    MPI_Comm_free(&half_data);
    MPI_Comm_free(&world_data);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return failed ? 1 : 0;
}
