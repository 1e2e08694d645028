/* Unit tests of the monitor (monitor/): each unit_monitor_*.c file registers
 * one suite; fixtures come from tests/fixtures (see fixtures/README). */
#define _GNU_SOURCE
#include "cunit_main.h"
#include "unit_monitor.h"

#include <time.h>

void burn_cpu(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile double x = 0.0;
    do {
        for (int i = 0; i < 100000; i++)
            x += i * 0.5;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < seconds);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "unit_monitor: CUnit registry: %s\n", CU_get_error_msg());
        printf("0 passed, 1 failed\n");
        return 1;
    }
    printf("fixtures: %s\n", fixture_dir());
    unit_monitor_proc_suite();
    unit_monitor_net_suite();
    unit_monitor_papi_suite();
    unit_monitor_aggregate_suite();
    unit_monitor_cgroup_suite();
    return sc_cunit_run();
}
