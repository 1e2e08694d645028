/* Small counter files under /proc and /sys: see sysfile.h. */
#define _GNU_SOURCE
#include "sysfile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int vpath(char *path, const char *root, const char *fmt, va_list ap)
{
    int n = snprintf(path, SC_SYSFILE_PATH_MAX, "%s/", root ? root : "");
    if (n < 0 || n >= SC_SYSFILE_PATH_MAX)
        return -1;
    int m = vsnprintf(path + n, SC_SYSFILE_PATH_MAX - (size_t)n, fmt, ap);
    if (m < 0 || m >= SC_SYSFILE_PATH_MAX - n)
        return -1;
    return 0;
}

int sc_sysfile_path(char *path, const char *root, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vpath(path, root, fmt, ap);
    va_end(ap);
    return rc;
}

int sc_sysfile_open(const char *root, const char *fmt, ...)
{
    char path[SC_SYSFILE_PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int rc = vpath(path, root, fmt, ap);
    va_end(ap);
    if (rc != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd;
}

long sc_sysfile_reread(int fd, char *buf, size_t cap)
{
    if (fd < 0 || cap < 2)
        return -1;
    size_t len = 0;
    for (;;) {
        ssize_t n = pread(fd, buf + len, cap - 1 - len, (off_t)len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len == cap - 1) {
            /* Full buffer: only acceptable if the file ends exactly here. */
            char probe;
            ssize_t more = pread(fd, &probe, 1, (off_t)len);
            if (more != 0)
                return -1;
            break;
        }
    }
    buf[len] = '\0';
    return (long)len;
}

/* Accepts only what strtoull/strtoll consumed being the whole token. */
static int whole_token(const char *s, const char *end)
{
    if (end == s)
        return 0;
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    return *end == '\0';
}

int sc_parse_u64(const char *s, uint64_t *out)
{
    if (!s)
        return -1;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || !whole_token(s, end))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int sc_parse_i64(const char *s, int64_t *out)
{
    if (!s)
        return -1;
    while (*s == ' ' || *s == '\t')
        s++;
    const char *digits = (*s == '-' || *s == '+') ? s + 1 : s;
    if (!isdigit((unsigned char)*digits))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || !whole_token(s, end))
        return -1;
    *out = (int64_t)v;
    return 0;
}

int sc_parse_u64_fields(const char *s, uint64_t *v, int n)
{
    int got = 0;
    while (got < n) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!isdigit((unsigned char)*s))
            break;
        errno = 0;
        char *end;
        unsigned long long x = strtoull(s, &end, 10);
        if (errno == ERANGE || (*end != '\0' && !isspace((unsigned char)*end)))
            break;
        v[got++] = (uint64_t)x;
        s = end;
    }
    return got;
}

int sc_sysfile_read_u64(int fd, uint64_t *out)
{
    char buf[64];
    if (sc_sysfile_reread(fd, buf, sizeof buf) <= 0)
        return -1;
    return sc_parse_u64(buf, out);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int sc_sysfile_list(const char *root, const char *rel, char (*names)[SC_SYSFILE_NAME_MAX],
                    int max, int *more)
{
    char path[SC_SYSFILE_PATH_MAX];
    if (more)
        *more = 0;
    if (sc_sysfile_path(path, root, "%s", rel) != 0)
        return -1;
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (strlen(e->d_name) >= SC_SYSFILE_NAME_MAX)
            continue;
        if (n >= max) {
            if (more)
                (*more)++;
            continue;
        }
        strcpy(names[n++], e->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    return n;
}

int sc_sysfile_read_once(char *buf, size_t cap, const char *root, const char *fmt, ...)
{
    char path[SC_SYSFILE_PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int rc = vpath(path, root, fmt, ap);
    va_end(ap);
    if (rc != 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long n = sc_sysfile_reread(fd, buf, cap);
    close(fd);
    if (n < 0)
        return -1;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return 0;
}

void sc_sysfile_close(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}
