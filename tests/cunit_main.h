/* Shared main() tail for the CUnit unit tests: run every registered suite
 * verbosely, then print the suite runner's closing line "N passed, N failed"
 * and exit non-zero on any failure.  Include once, in the test's .c file. */
#ifndef STARCOLL_CUNIT_MAIN_H
#define STARCOLL_CUNIT_MAIN_H
#include <CUnit/Basic.h>
#include <stdio.h>

static int sc_cunit_run(void)
{
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned run = CU_get_number_of_tests_run();
    unsigned failed = CU_get_number_of_tests_failed();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    printf("%u passed, %u failed\n", run - failed, failed);
    return (failed || fails) ? 1 : 0;
}
#endif
