/* Memory the process itself maps as host memory, told apart without asking
 * the CUDA driver.
 *
 * Once CUDA is loaded, every call asks the driver whether its buffers are
 * device memory (device.c), and the driver's answer is not free: 250 to
 * 500 ns a pointer (UCX's measurement, openucx/ucx#2362), against a 4 us
 * all-reduce of 4 KiB.  A pointer into the brk heap (glibc's main arena,
 * where small and mid-sized mallocs of the main thread land), into the
 * calling thread's stack, or into the main program's own segments (static
 * and common-block arrays) lies in a mapping the process made for host
 * memory: the driver cannot have put device memory there while that
 * mapping lives, and a live buffer keeps it alive.  Anything else (mmap'ed
 * memory, other threads' arenas, shared libraries, which can be unloaded)
 * is still asked of the driver. */
#ifndef STARCOLL_HOST_MEMORY_H
#define STARCOLL_HOST_MEMORY_H

/* 1 when p lies in the brk heap, the calling thread's stack above the
 * caller, or the main program's segments; 0 when that is not known. */
int sc_host_memory_known(const void *p);
#endif
