/* Reading small counter files under /proc and /sys (or a fixture tree that
 * mirrors them): open once relative to a configurable root, then re-read
 * with pread at offset 0 on every sample, which makes procfs and sysfs
 * produce fresh contents without a new open. */
#ifndef STARCOLL_SYSFILE_H
#define STARCOLL_SYSFILE_H

#include <stddef.h>
#include <stdint.h>

/* Largest path the monitor builds under a root. */
#define SC_SYSFILE_PATH_MAX 512

/* Joins root and a printf-style relative path into path[SC_SYSFILE_PATH_MAX].
 * Returns 0, or -1 when the result would not fit. */
int sc_sysfile_path(char *path, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Opens root/relative read-only and close-on-exec; returns the descriptor
 * or -1 (errno set). */
int sc_sysfile_open(const char *root, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Re-reads a whole file from offset 0 into buf (NUL-terminated).  Returns
 * the number of bytes read, or -1 on error or when the file does not fit
 * in buf (a truncated read would parse as a wrong value). */
long sc_sysfile_reread(int fd, char *buf, size_t cap);

/* Parses an unsigned decimal integer that is the whole of s apart from
 * surrounding blanks and newlines.  Returns 0, or -1 on anything else. */
int sc_parse_u64(const char *s, uint64_t *out);

/* Parses an optionally signed decimal integer that is the whole of s apart
 * from surrounding blanks.  Returns 0, or -1. */
int sc_parse_i64(const char *s, int64_t *out);

/* Parses up to n blank-separated unsigned integers from the start of s
 * into v; returns how many were parsed before the first thing that is not
 * one. */
int sc_parse_u64_fields(const char *s, uint64_t *v, int n);

/* Re-reads fd and parses it as one unsigned integer.  Returns 0 or -1. */
int sc_sysfile_read_u64(int fd, uint64_t *out);

/* Longest directory entry name sc_sysfile_list keeps (longer ones are skipped). */
#define SC_SYSFILE_NAME_MAX 64

/* Lists the entries of directory root/rel other than "." and "..", sorted
 * by name, into names[0..max).  Returns how many were stored, or -1 when
 * the directory cannot be opened; *more (if not NULL) gets the number of
 * entries left out because max was reached. */
int sc_sysfile_list(const char *root, const char *rel, char (*names)[SC_SYSFILE_NAME_MAX],
                    int max, int *more);

/* Reads root/relative once (open, read, close) into buf, NUL-terminated,
 * with trailing newlines removed.  Returns 0, or -1. */
int sc_sysfile_read_once(char *buf, size_t cap, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Closes fd when it is open and marks it closed (-1). */
void sc_sysfile_close(int *fd);

#endif
