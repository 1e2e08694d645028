/* starcoll-info: what this build holds and the policy the current
 * environment would produce, in the manner of ompi_info and papi_avail.
 * Needs no MPI job: it only parses. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "policy.h"

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: starcoll-info\n  Prints the build configuration and the policy that the current\n"
               "  STARCOLL_* environment would produce (with any complaints about it).\n");
        return 0;
    }
    sc_policy p;
    char msgs[4096], desc[512];
    int bad = sc_policy_parse(&p, NULL, msgs, sizeof msgs);
    sc_policy_describe(&p, desc, sizeof desc);
    printf("                 starcoll: %s\n", PACKAGE_VERSION);
    printf("           built with MPI: %s\n", SC_MPI_IMPL);
    printf("                     PAPI: %s\n", SC_HAVE_PAPI_STR);
    printf("                     CUDA: %s (%s; detected only, device buffers pass through)\n", SC_HAVE_CUDA_STR, SC_CUDA_DIR);
    printf("                     NCCL: %s (detected only)\n", SC_HAVE_NCCL_STR);
    printf("                  library: %s/libstarcoll.so\n", SC_LIBDIR);
    printf("     policy from this env: %s\n", desc);
    printf("               PAPI events: %s\n", p.papi_events);
    printf("                      NIC: %s\n", p.nic);
    printf("                   report: %s\n", p.report == SC_REPORT_NONE ? "none" : p.report == SC_REPORT_FILE ? p.report_path : "stderr");
    printf("                    trace: %s\n", p.trace[0] ? p.trace : "off");
    printf("                  verbose: %d\n", p.verbose);
    if (bad) printf("\n%d bad value(s) in the environment:\n%s", bad, msgs);
    return 0;
}
