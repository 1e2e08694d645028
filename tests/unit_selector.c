/* Unit tests of the selector (selector/): decisions on synthetic telemetry,
 * the noise scale, traces, the model file, the trainer and the straggler
 * table. */
#include "cunit_main.h"

void register_decide_suite(void);
void register_noise_suite(void);
void register_files_suite(void);
void register_schedule_suite(void);
void register_stragglers_suite(void);

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    register_decide_suite();
    register_noise_suite();
    register_files_suite();
    register_schedule_suite();
    register_stragglers_suite();
    return sc_cunit_run();
}
