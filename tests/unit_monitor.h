/* Shared by the monitor's unit tests (unit_monitor*.c): suite registration
 * and fixture-tree helpers. */
#ifndef STARCOLL_UNIT_MONITOR_H
#define STARCOLL_UNIT_MONITOR_H

#include <stddef.h>

/* Each file registers its own CUnit suite. */
void unit_monitor_proc_suite(void);
void unit_monitor_net_suite(void);
void unit_monitor_papi_suite(void);
void unit_monitor_aggregate_suite(void);
void unit_monitor_cgroup_suite(void);

/* Directory of the recorded fixture trees: $srcdir/fixtures (set by
 * run_suite.sh), else the source directory known at build time. */
const char *fixture_dir(void);

/* Copies fixtures/<name> into a fresh temporary directory and returns its
 * path (static storage, valid until the next call), or NULL on failure. */
const char *fixture_copy(const char *name);

/* Removes a tree made by fixture_copy. */
void fixture_remove(const char *dir);

/* Writes text into dir/rel (creating it and the directories above it, or
 * truncating it).  Returns 0 or -1. */
int fixture_write(const char *dir, const char *rel, const char *text);

/* Removes dir/rel (a file, or a directory tree). */
void fixture_unlink(const char *dir, const char *rel);

/* Builds dir/rel into out[cap]. */
void fixture_path(char *out, size_t cap, const char *dir, const char *rel);

/* Uses about seconds of CPU time on the calling thread. */
void burn_cpu(double seconds);

#endif
