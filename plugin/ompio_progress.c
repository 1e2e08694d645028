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
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include "runtime.h"

static __thread int library_thread;

void sc_ompio_progress_not_here(void)
{
    library_thread = 1;
}

int mca_common_ompio_progress(void);
typedef int (*progress_fn)(void);

/* The path of a loaded object named like ompio's library (the loader's
 * lock is held here: it is opened after the walk). */
static int name_of(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "mca_common_ompio")) return 0;
    snprintf(out, PATH_MAX, "%s", info->dlpi_name);
    return 1;
}

/* ompio's own callback: the next definition after this library's, or the
 * one in ompio's library where that is not in the global scope (a
 * component opened with local scope brought it in).  Looked for once. */
static progress_fn ompio_own(void)
{
    static progress_fn own;
    static int looked;
    if (__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) return __atomic_load_n(&own, __ATOMIC_RELAXED);
    void *p = dlsym(RTLD_NEXT, "mca_common_ompio_progress");
    char path[PATH_MAX] = "";
    if ((!p || p == (void *)mca_common_ompio_progress) && dl_iterate_phdr(name_of, path) == 1) {
        void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        p = h ? dlsym(h, "mca_common_ompio_progress") : NULL;
        if (h) dlclose(h);
    }
    if (p == (void *)mca_common_ompio_progress) p = NULL;
    progress_fn f = (progress_fn)p;   /* the same on every thread that gets here */
    __atomic_store_n(&own, f, __ATOMIC_RELAXED);
    __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
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
