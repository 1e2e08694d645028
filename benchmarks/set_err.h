/* One-line error messages of the benchmarks' parsers, into a caller's
 * buffer (NULL or empty: dropped). */
#ifndef STARCOLL_BENCH_SET_ERR_H
#define STARCOLL_BENCH_SET_ERR_H
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
#endif
