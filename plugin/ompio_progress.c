/* Open MPI's ompio keeps every pending file request on one list that its
 * progress callback, mca_common_ompio_progress, walks with no lock; it
 * completes POSIX aio requests from there (common_ompio_request.c,
 * fbtl_posix).  A tolerant engine's thread drives MPI's progress while the
 * application's thread starts, tests or frees a file request, and the two
 * walks corrupt the list: mpi4py's own test_io after a few training steps
 * (Iwrite(...).Wait(), Read_at_all, Read_ordered) died in
 * mca_fbtl_posix_progress, called from an engine's MPI_Iprobe.  A
 * single-threaded code never meets this without starcoll.
 *
 * So this library defines the callback: ompio registers it by its global
 * name (through the GOT), which finds the preloaded definition first.  On
 * starcoll's threads it does nothing; on the application's it calls
 * ompio's own, so file requests are progressed as in a single-threaded
 * code, by the threads that wait for them.  Where ompio is not loaded,
 * nothing calls it. */
#define _GNU_SOURCE
#include "ompio_progress.h"
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include "runtime.h"

static __thread int library_thread;

void sc_ompio_progress_not_here(void)
{
    library_thread = 1;
}

int mca_common_ompio_progress(void);
typedef int (*progress_fn)(void);

/* ompio's own callback in a loaded object named like its library. */
static int find_in(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "mca_common_ompio")) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    void *f = dlsym(h, "mca_common_ompio_progress");
    dlclose(h);
    if (!f || f == (void *)mca_common_ompio_progress) return 0;
    *(void **)out = f;
    return 1;
}

static progress_fn ompio_own(void)
{
    static progress_fn own;
    progress_fn f = __atomic_load_n(&own, __ATOMIC_ACQUIRE);
    if (f) return f;
    void *p = dlsym(RTLD_NEXT, "mca_common_ompio_progress");
    if (!p || p == (void *)mca_common_ompio_progress) {
        p = NULL;
        dl_iterate_phdr(find_in, &p);
    }
    f = (progress_fn)p;
    if (f) __atomic_store_n(&own, f, __ATOMIC_RELEASE);
    return f;
}

int mca_common_ompio_progress(void)
{
    if (library_thread) return 0;
    progress_fn f = ompio_own();
    if (!f) {   /* not seen: ompio registers the callback it defines */
        sc_say(SC_SAY_OMPIO, 1, "starcoll: Open MPI's ompio progress callback was not found; its file requests "
               "cannot complete; run this job under STARCOLL_MODE=sync");
        return 0;
    }
    return f();
}
