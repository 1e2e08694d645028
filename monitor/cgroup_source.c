/* CPU throttling of the process's cgroup (see cgroup_source.h). */
#include "cgroup_source.h"

#include "notice.h"
#include "sysfile.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The counter named key in a cpu.stat text ("key value" lines). */
static int stat_value(const char *text, const char *key, uint64_t *out)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
            char num[32];
            size_t n = strcspn(line + klen + 1, "\n");
            if (n == 0 || n >= sizeof num) return -1;
            memcpy(num, line + klen + 1, n);
            num[n] = '\0';
            return sc_parse_u64(num, out);
        }
    }
    return -1;
}

/* The cpu controller's cgroup of this process from <proc>/self/cgroup:
 * *v2 = 0 for a v1 line naming cpu ("N:cpu,cpuacct:/path"), 1 for the v2
 * line ("0::/path") when no v1 line names cpu.  Returns 0, or -1. */
static int cpu_cgroup(const char *proc_root, char *path, size_t len, int *v2)
{
    char text[4096];
    int fd = sc_sysfile_open(proc_root, "self/cgroup");
    if (fd < 0) return -1;
    long got = sc_sysfile_reread(fd, text, sizeof text);
    close(fd);
    if (got < 0) return -1;
    int found_v2 = 0;
    char v2path[256] = "";
    for (char *line = text, *end; *line; line = end) {
        end = line + strcspn(line, "\n");
        if (*end) *end++ = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1, *p = c2 + 1;
        if (!*ctrls) {
            snprintf(v2path, sizeof v2path, "%s", p);
            found_v2 = 1;
            continue;
        }
        for (const char *t = ctrls; t && *t; t = strchr(t, ','), t = t ? t + 1 : NULL)
            if (strncmp(t, "cpu", 3) == 0 && (t[3] == ',' || t[3] == '\0')) {
                snprintf(path, len, "%s", p);
                *v2 = 0;
                return 0;
            }
    }
    if (!found_v2) return -1;
    snprintf(path, len, "%s", v2path);
    *v2 = 1;
    return 0;
}

/* Re-reads the throttling counter (v2 microseconds, v1 nanoseconds). */
static int read_counter(const sc_cgroup_source *s, uint64_t *out)
{
    char text[1024];
    return sc_sysfile_reread(s->fd, text, sizeof text) < 0 ? -1
           : stat_value(text, s->v2 ? "throttled_usec" : "throttled_time", out);
}

static double seconds(const sc_cgroup_source *s, uint64_t v) { return (double)v / (s->v2 ? 1e6 : 1e9); }

void sc_cgroup_open(sc_cgroup_source *s, const char *proc_root, const char *sys_root)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    if (!proc_root) proc_root = "/proc";
    if (!sys_root) sys_root = "/sys";
    if (cpu_cgroup(proc_root, s->path, sizeof s->path, &s->v2) != 0) {
        snprintf(s->why, sizeof s->why, "no cpu controller in %s/self/cgroup", proc_root);
        return;
    }
    const char *rel = strcmp(s->path, "/") == 0 ? "" : s->path;
    if (s->v2) s->fd = sc_sysfile_open(sys_root, "fs/cgroup%s/cpu.stat", rel);
    else {
        s->fd = sc_sysfile_open(sys_root, "fs/cgroup/cpu%s/cpu.stat", rel);
        if (s->fd < 0) s->fd = sc_sysfile_open(sys_root, "fs/cgroup/cpu,cpuacct%s/cpu.stat", rel);
    }
    uint64_t v;
    if (s->fd < 0 || read_counter(s, &v) != 0) {
        snprintf(s->why, sizeof s->why, "no readable throttling count for cgroup %.80s (%s)", s->path,
                 s->v2 ? "v2 cpu.stat throttled_usec" : "v1 cpu.stat throttled_time");
        if (s->fd >= 0) close(s->fd);
        s->fd = -1;
        return;
    }
    s->last = v;
    s->active = 1;
}

double sc_cgroup_sample(sc_cgroup_source *s)
{
    if (!s || !s->active) return 0.0;
    uint64_t v;
    if (read_counter(s, &v) != 0) return 0.0;
    uint64_t d = v >= s->last ? v - s->last : 0;
    s->last = v;
    return seconds(s, d);
}

void sc_cgroup_describe(const sc_cgroup_source *s, char *buf, size_t len)
{
    if (!s->active) sc_append(buf, len, "cgroup: inactive: %s\n", s->why);
    else sc_append(buf, len, "cgroup: active: CPU throttling of %s from %s\n", s->path,
                   s->v2 ? "cpu.stat throttled_usec (v2)" : "cpu.stat throttled_time (v1)");
}

void sc_cgroup_close(sc_cgroup_source *s)
{
    if (s && s->fd >= 0) close(s->fd);
    if (s) s->fd = -1, s->active = 0;
}

double sc_cgroup_throttled_total_s(void)
{
    sc_cgroup_source s;
    sc_cgroup_open(&s, NULL, NULL);
    double total = s.active ? seconds(&s, s.last) : -1.0;
    sc_cgroup_close(&s);
    return total;
}
