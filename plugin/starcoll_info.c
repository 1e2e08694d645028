/* starcoll-info: what this build holds and the policy the current
 * environment would produce, in the manner of ompi_info and papi_avail.
 * Needs no MPI job: it only parses. */
#include "config.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "policy.h"

/* Whether this host can run device buffers: the CUDA driver loaded here
 * (the library itself never loads it: it looks for the application's). */
static void cuda_driver(char *buf, size_t len)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(buf, len, "not found (%s): no device usable here", e ? e : "?");
        return;
    }
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
    int n = 0, rc = init ? init(0) : -1;
    if (rc == 0 && count && count(&n) == 0 && n > 0)
        snprintf(buf, len, "found, %d device(s) usable: device buffers work in every mode", n);
    else
        snprintf(buf, len, "found, but no device usable (cuInit %s %d)", init ? "returned" : "missing:", rc);
    dlclose(h);
}

/* Whether NCCL can be loaded here, as the library would at run time. */
static void nccl_library(char *buf, size_t len)
{
#ifdef SC_NCCL_DISABLED
    snprintf(buf, len, "not used: configured --without-nccl");
    return;
#endif
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(buf, len, "libnccl.so.2 not found: device buffers stage through host memory in every mode");
        return;
    }
    int (*version)(int *) = (int (*)(int *))dlsym(h, "ncclGetVersion");
    int v = 0;
    if (version && version(&v) == 0)
        snprintf(buf, len, "libnccl.so.2 version %d: sync and hier use it on device buffers when every rank has a "
                           "GPU of its own", v);
    else snprintf(buf, len, "libnccl.so.2 found (no version): sync and hier use it on device buffers");
    dlclose(h);
}

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
    char drv[256];
    cuda_driver(drv, sizeof drv);
    printf("             CUDA toolkit: %s (%s; not needed to run)\n", SC_HAVE_CUDA_STR, SC_CUDA_DIR);
    printf("              CUDA driver: %s\n", drv);
    char nccl[256];
    nccl_library(nccl, sizeof nccl);
    printf("    NCCL headers at build: %s (not needed to run)\n", SC_HAVE_NCCL_STR);
    printf("                     NCCL: %s\n", nccl);
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
