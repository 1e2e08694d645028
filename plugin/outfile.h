/* Report and trace files, opened so that a job never follows a symbolic
 * link nor overwrites a file without saying so (DESIGN.md, "Policy").  A
 * path that names an existing regular file gets a new name beside it, as
 * mpiP does (PATH.1, PATH.2, ...); a symbolic link is refused; an existing
 * device or pipe (/dev/stderr, a fifo) is written as it is.  New files are
 * created exclusively, with mode 0666 less the umask.  Pure C (no MPI). */
#ifndef STARCOLL_OUTFILE_H
#define STARCOLL_OUTFILE_H
#include <stddef.h>
#include <stdio.h>

/* Open `path` for writing.  *used gets the path written (it may differ);
 * note gets one line for the user when there is something to say (a new
 * name, a refusal), else "".  NULL when it cannot be written (note says
 * why). */
FILE *sc_outfile_open(const char *path, char *used, size_t usedlen, char *note, size_t notelen);

/* Flush and close; 0, or the errno of a failed write or close. */
int sc_outfile_close(FILE *f);
#endif
