#include "machine_pause.h"
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

enum { TICK_NS = 20000000 };        /* the watcher's sleep: 20 ms */
static const double GAP_S = 0.5;    /* far above any wake-up delay of a sleeping thread here */

static _Atomic long long paused_us, longest_us, last_tick_us;

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* what a gap of `gap_us` since the last tick counts as paused */
static long long lost_us(long long gap_us)
{
    return gap_us >= (long long)(GAP_S * 1e6) ? gap_us - TICK_NS / 1000 : 0;
}

static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {0, TICK_NS};
        nanosleep(&ts, NULL);
        long long now = now_us(), lost = lost_us(now - atomic_load(&last_tick_us));
        if (lost > 0) {
            atomic_fetch_add(&paused_us, lost);
            if (lost > atomic_load(&longest_us)) atomic_store(&longest_us, lost);
        }
        atomic_store(&last_tick_us, now);
    }
    return NULL;
}

int machine_pause_start(void)
{
    atomic_store(&last_tick_us, now_us());
    pthread_t t;
    if (pthread_create(&t, NULL, watch, NULL) != 0) return -1;
    return pthread_detach(t);
}

double machine_pause_total(void)
{
    /* The sum before the tick: the watcher adds a gap, then moves the
     * tick.  Read the other way round, a gap it adds in between would
     * count twice (and loosen a bound); this way it can count not at all. */
    long long paused = atomic_load(&paused_us), tick = atomic_load(&last_tick_us);
    if (tick == 0) return 0;   /* not started */
    return (double)(paused + lost_us(now_us() - tick)) * 1e-6;
}

double machine_pause_longest(void)
{
    return (double)atomic_load(&longest_us) * 1e-6;
}
