/* Fixture-tree helpers for the monitor's unit tests: see unit_monitor.h. */
#define _GNU_SOURCE
#include "unit_monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SC_TEST_SRCDIR
#define SC_TEST_SRCDIR "."
#endif

const char *fixture_dir(void)
{
    static char dir[1024];
    const char *src = getenv("srcdir");
    snprintf(dir, sizeof dir, "%s/fixtures", src && *src ? src : SC_TEST_SRCDIR);
    return dir;
}

void fixture_path(char *out, size_t cap, const char *dir, const char *rel)
{
    snprintf(out, cap, "%s/%s", dir, rel);
}

static char copy_from[2048];
static char copy_to[1024];

static int copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY);
    if (in < 0)
        return -1;
    /* Fixtures may be read-only in a distcheck tree; the copy must not be. */
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, (mode & 0777) | 0600);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[8192];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            rc = -1;
            break;
        }
    if (n < 0)
        rc = -1;
    close(in);
    close(out);
    return rc;
}

static int copy_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    char to[2048];
    snprintf(to, sizeof to, "%s%s", copy_to, path + strlen(copy_from));
    if (type == FTW_D)
        return (mkdir(to, 0700) == 0 || errno == EEXIST) ? 0 : -1;
    if (type == FTW_F)
        return copy_file(path, to, st->st_mode);
    return -1;
}

/* Copies not yet removed: a failed CUnit _FATAL assertion leaves its test
 * early, skipping fixture_remove, so whatever is left goes at exit. */
#define MAX_LIVE_COPIES 64
static char live[MAX_LIVE_COPIES][1024];

static void remove_live_copies(void)
{
    for (int i = 0; i < MAX_LIVE_COPIES; i++)
        if (live[i][0])
            fixture_remove(live[i]);
}

static void track(const char *dir, int add)
{
    static int registered;
    if (!registered && atexit(remove_live_copies) == 0)
        registered = 1;
    for (int i = 0; i < MAX_LIVE_COPIES; i++) {
        if (add && !live[i][0]) {
            snprintf(live[i], sizeof live[i], "%s", dir);
            return;
        }
        if (!add && strcmp(live[i], dir) == 0) {
            live[i][0] = '\0';
            return;
        }
    }
}

const char *fixture_copy(const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(copy_to, sizeof copy_to, "%s/sc_monitor_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(copy_to))
        return NULL;
    track(copy_to, 1);
    snprintf(copy_from, sizeof copy_from, "%s/%s", fixture_dir(), name);
    if (nftw(copy_from, copy_entry, 16, FTW_PHYS) != 0) {
        fprintf(stderr, "fixture_copy: cannot copy %s to %s\n", copy_from, copy_to);
        fixture_remove(copy_to);
        return NULL;
    }
    return copy_to;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

void fixture_remove(const char *dir)
{
    if (!dir || !*dir)
        return;
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", dir);   /* dir may be a tracked slot */
    nftw(copy, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    track(copy, 0);
}

void fixture_unlink(const char *dir, const char *rel)
{
    char path[2048];
    fixture_path(path, sizeof path, dir, rel);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
        fixture_remove(path);
    else
        unlink(path);
}

/* mkdir -p of the directories above path. */
static void make_parents(char *path)
{
    for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0700);
        *slash = '/';
    }
}

int fixture_write(const char *dir, const char *rel, const char *text)
{
    char path[2048];
    fixture_path(path, sizeof path, dir, rel);
    make_parents(path);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}
