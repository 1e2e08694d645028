/* Notices for the caller: the monitor never prints; it appends one line per
 * event (a dropped PAPI event, a missing interface) to a buffer the plugin
 * prints once, from one rank, when and where it chooses. */
#ifndef STARCOLL_NOTICE_H
#define STARCOLL_NOTICE_H

#include <stddef.h>

/* Appends "starcoll monitor: <formatted>\n" to msg (capacity len, kept
 * NUL-terminated; a line that does not fit is cut short).  msg NULL or len
 * 0 discards the notice. */
void sc_notice(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends formatted text (no prefix, no newline) to buf the same way. */
void sc_append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
