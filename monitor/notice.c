/* Notices for the caller: see notice.h. */
#define _POSIX_C_SOURCE 200809L
#include "notice.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vappend(char *buf, size_t len, const char *fmt, va_list ap)
{
    if (!buf || len == 0)
        return;
    size_t used = strnlen(buf, len);
    if (used >= len - 1)
        return;
    vsnprintf(buf + used, len - used, fmt, ap);
}

void sc_append(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(buf, len, fmt, ap);
    va_end(ap);
}

void sc_notice(char *msg, size_t len, const char *fmt, ...)
{
    if (!msg || len == 0)
        return;
    va_list ap;
    sc_append(msg, len, "starcoll monitor: ");
    va_start(ap, fmt);
    vappend(msg, len, fmt, ap);
    va_end(ap);
    /* Always end on a newline, even when the line was cut short. */
    size_t used = strlen(msg);
    if (used + 1 < len)
        memcpy(msg + used, "\n", 2);
    else if (used > 0)
        msg[used - 1] = '\n';
}
