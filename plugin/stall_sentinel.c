#define _GNU_SOURCE   /* pthread_setname_np */
#include "stall_sentinel.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "comm_state.h"
#include "monitor.h"
#include "runtime.h"

enum { MAX_ENGINES = 16 };   /* engines of one process in a line; more are left out */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int started, quit;

/* One line per engine whose thread is silent: its sentence, then every
 * engine's application thread in this process (the one a job is held in
 * may be another communicator's call). */
static void look(void)
{
    static sc_engine_view views[MAX_ENGINES];   /* this thread's alone */
    int n = sc_comm_look_engines(sc_now(), views, MAX_ENGINES);
    for (int i = 0; i < n; i++) {
        if (!views[i].speak) continue;
        char line[2048];
        size_t at = (size_t)snprintf(line, sizeof line, "%s. In this process:", views[i].engine);
        for (int j = 0; j < n && at < sizeof line; j++)
            at += (size_t)snprintf(line + at, sizeof line - at, "%s %s", j ? ";" : "", views[j].app);
        if (at < sizeof line)
            snprintf(line + at, sizeof line - at, " (next at %.0f s of silence; STARCOLL_STALL=%g)", views[i].next_s,
                     sc_rt.policy.stall_s);
        fprintf(stderr, "%s\n", line);
    }
}

static void *sentinel_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "starcoll-watch");
    sc_monitor_library_thread();   /* its (tiny) CPU time is not the application's */
    /* a quarter of the threshold, so a line comes at most a quarter late */
    double period = sc_rt.policy.stall_s / 4;
    if (period < 0.05) period = 0.05;
    if (period > 1) period = 1;
    pthread_mutex_lock(&mu);
    while (!quit) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_nsec * 1e-9 + period;
        ts.tv_sec += (time_t)t;
        ts.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
        pthread_cond_timedwait(&cv, &mu, &ts);
        if (quit) break;
        pthread_mutex_unlock(&mu);
        look();
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

void sc_sentinel_start(void)
{
    if (sc_rt.policy.stall_s <= 0) return;
    pthread_mutex_lock(&mu);
    if (!started) {
        quit = 0;
        started = pthread_create(&thread, NULL, sentinel_main, NULL) == 0;
        if (!started)
            fprintf(stderr, "starcoll: world rank %d: the stall sentinel's thread did not start; a stall that holds an "
                    "engine thread goes unreported\n", sc_rt.world_rank);
        started = started ? 1 : -1;   /* tried: not again */
    }
    pthread_mutex_unlock(&mu);
}

void sc_sentinel_stop(void)
{
    pthread_mutex_lock(&mu);
    int running = started == 1;
    quit = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    if (running) pthread_join(thread, NULL);
    pthread_mutex_lock(&mu);
    started = 0;
    pthread_mutex_unlock(&mu);
}
