/* One parser for every STARCOLL_* variable.  A bad value never stops the
 * job: it is named in one line and the safe default stays. */
#include "policy.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libgen.h>

static const char *const mode_names[SC_NMODES] = {"sync", "hier", "quorum", "groups", "auto"};

const char *sc_mode_name(sc_mode m)
{
    return (m >= 0 && m < SC_NMODES) ? mode_names[m] : "?";
}

int sc_mode_from_name(const char *s, sc_mode *out)
{
    for (int i = 0; i < SC_NMODES; i++)
        if (strcmp(s, mode_names[i]) == 0) {
            *out = (sc_mode)i;
            return 0;
        }
    return -1;
}

static const char *skip_space(const char *s)
{
    while (isspace((unsigned char)*s)) s++;
    return s;
}

static int only_space(const char *s)
{
    return *skip_space(s) == '\0';
}

int sc_parse_size(const char *s, size_t *out)
{
    if (!s) return -1;
    s = skip_space(s);
    if (!isdigit((unsigned char)*s)) return -1;   /* rejects '-', '+', '' */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    unsigned long long mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 1ULL << 10; end++; break;
    case 'M': mul = 1ULL << 20; end++; break;
    case 'G': mul = 1ULL << 30; end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'B') end++;
    if (!only_space(end)) return -1;
    if (v > (unsigned long long)SIZE_MAX / mul) return -1;
    *out = (size_t)(v * mul);
    return 0;
}

int sc_parse_duration(const char *s, double *out_s)
{
    if (!s) return -1;
    s = skip_space(s);
    if (!isdigit((unsigned char)*s) && *s != '.') return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0) return -1;
    double scale = 1e-3;                       /* plain number: milliseconds */
    if (strncmp(end, "us", 2) == 0) { scale = 1e-6; end += 2; }
    else if (strncmp(end, "ms", 2) == 0) { scale = 1e-3; end += 2; }
    else if (*end == 's') { scale = 1.0; end += 1; }
    if (!only_space(end)) return -1;
    *out_s = v * scale;
    return 0;
}

int sc_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s) return -1;
    s = skip_space(s);
    if (!isdigit((unsigned char)*s) && *s != '-') return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || !only_space(end) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

void sc_policy_defaults(sc_policy *p)
{
    memset(p, 0, sizeof *p);
    p->mode = SC_MODE_AUTO;
    p->selector = SC_SELECTOR_HEURISTIC;
    p->min_bytes = SC_MIN_BYTES_DEFAULT;
    p->fuse_bytes = SC_FUSE_BYTES_DEFAULT;
    p->fuse_share = SC_FUSE_SHARE_DEFAULT;
    p->quorum = 0;
    p->staleness = 4;
    p->scale_fresh = 0;
    p->group_size = 0;
    p->epoch = 20;
    snprintf(p->papi_events, sizeof p->papi_events, "auto");
    snprintf(p->nic, sizeof p->nic, "auto");
    p->report = SC_REPORT_STDERR;
    p->stall_s = 30;
    p->verbose = 0;
}

static void say(char *msgs, size_t len, const char *fmt, ...)
{
    size_t used = strlen(msgs);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msgs + used, len - used, fmt, ap);
    va_end(ap);
    used = strlen(msgs);
    if (used + 1 < len) { msgs[used] = '\n'; msgs[used + 1] = '\0'; }
}

static int copy_string(char *dst, size_t len, const char *src)
{
    if (strlen(src) >= len) return -1;
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

static const char *std_getenv(const char *name) { return getenv(name); }

/* The folder a path (or a path prefix) would be written in exists and is writable. */
static int dir_writable(const char *path)
{
    char copy[SC_PATH_LEN];
    snprintf(copy, sizeof copy, "%s", path);
    return access(dirname(copy), W_OK) == 0;
}

/* A value as it may be shown in one line: control characters escaped,
 * cut to a readable length. */
static const char *shown(const char *v, char *buf, size_t len)
{
    size_t o = 0, i = 0;
    const size_t keep = 60;
    for (; v[i] && i < keep && o + 5 < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == '\n') o += (size_t)snprintf(buf + o, len - o, "\\n");
        else if (c == '\t') o += (size_t)snprintf(buf + o, len - o, "\\t");
        else if (c < 0x20 || c == 0x7f) o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
        else buf[o++] = (char)c;
    }
    buf[o] = '\0';
    if (v[i] && o + 32 < len) snprintf(buf + o, len - o, "...(%zu characters)", strlen(v));
    return buf;
}

#define BAD(var, val, accepted, fallback)                                                                        \
    do {                                                                                                          \
        char shown_[128];                                                                                         \
        bad++;                                                                                                    \
        say(msgs, msglen, "starcoll: %s='%s' is not valid (accepted: %s); using %s", var,                        \
            shown(val, shown_, sizeof shown_), accepted, fallback);                                               \
    } while (0)

/* A whole value that is a plain decimal number (digits with at most one
 * point: no sign, exponent, hex, inf or nan, which strtod would take),
 * then `unit` if it is not '\0' and the value has one, into *out: 0, else -1. */
static int parse_decimal(const char *v, char unit, double *out)
{
    const char *s = skip_space(v), *p = s;
    int digits = 0, points = 0;
    for (; isdigit((unsigned char)*p) || (*p == '.' && !points); p++) {
        if (*p == '.') points++;
        else digits++;
    }
    const char *rest = unit && *p == unit ? p + 1 : p;
    if (!digits || !only_space(rest)) return -1;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end != p || !isfinite(d)) return -1;
    *out = d;
    return 0;
}

/* STARCOLL_EXACT: "COUNT[:float|:double],...", or "none" / "" for no
 * shape.  0, or -1 on anything else (the list is then left empty). */
static int parse_exact(const char *v, sc_exact_list *out)
{
    out->n = 0;
    const char *p = skip_space(v);
    if (only_space(p) || !strcmp(p, "none")) return 0;
    for (;;) {
        if (!isdigit((unsigned char)*p) || out->n == SC_EXACT_MAX) break;
        char *end;
        errno = 0;
        long c = strtol(p, &end, 10);
        if (errno || c < 1 || c > 2147483647L) break;
        sc_dkind k = SC_DK_OTHER;
        if (!strncmp(end, ":float", 6)) k = SC_DK_FLOAT, end += 6;
        else if (!strncmp(end, ":double", 7)) k = SC_DK_DOUBLE, end += 7;
        out->count[out->n] = c;
        out->dkind[out->n++] = k;
        end = (char *)skip_space(end);
        if (!*end) return 0;
        if (*end != ',') break;
        p = skip_space(end + 1);
    }
    out->n = 0;
    return -1;
}

/* STARCOLL_EXACT_COMMS: "N,N,...", the report's communicator numbers
 * (0 to SC_COMM_NUMBERS - 1), or "none".  0, or -1 on anything else (the
 * set is then left empty). */
static int parse_exact_comms(const char *v, unsigned *out)
{
    *out = 0;
    const char *p = skip_space(v);
    if (only_space(p) || (!strncmp(p, "none", 4) && only_space(p + 4))) return 0;
    for (;;) {
        if (!isdigit((unsigned char)*p)) break;
        char *end;
        errno = 0;
        long c = strtol(p, &end, 10);
        if (errno || c < 0 || c >= SC_COMM_NUMBERS) break;
        *out |= 1u << c;
        end = (char *)skip_space(end);
        if (!*end) return 0;
        if (*end != ',') break;
        p = skip_space(end + 1);
    }
    *out = 0;
    return -1;
}

int sc_policy_parse(sc_policy *p, sc_getenv_fn get, char *msgs, size_t msglen)
{
    int bad = 0;
    const char *v;
    long n;
    if (!get) get = std_getenv;
    if (msglen) msgs[0] = '\0';
    sc_policy_defaults(p);

    if ((v = get("STARCOLL_MODE")) && sc_mode_from_name(skip_space(v), &p->mode) != 0) {
        p->mode = SC_MODE_SYNC;   /* unknown intent: the exact mode is the only safe one */
        BAD("STARCOLL_MODE", v, "auto, sync, hier, quorum, groups", "sync");
    }
    if ((v = get("STARCOLL_SELECTOR"))) {
        if (strcmp(v, "heuristic") == 0) p->selector = SC_SELECTOR_HEURISTIC;
        else if (strcmp(v, "learned") == 0) p->selector = SC_SELECTOR_LEARNED;
        else BAD("STARCOLL_SELECTOR", v, "heuristic, learned", "heuristic");
    }
    if ((v = get("STARCOLL_MODEL")) && *v) {
        if (copy_string(p->model, sizeof p->model, v) != 0 || access(v, R_OK) != 0) {
            p->model[0] = '\0';
            BAD("STARCOLL_MODEL", v, "a readable model file written by starcoll-train", "no model");
        }
    }
    if ((v = get("STARCOLL_MIN_BYTES")) && sc_parse_size(v, &p->min_bytes) != 0) {
        p->min_bytes = SC_MIN_BYTES_DEFAULT;
        BAD("STARCOLL_MIN_BYTES", v, "a size in bytes with optional K, M or G suffix, e.g. 256 or 64K", "256");
    }
    if ((v = get("STARCOLL_EXACT")) && parse_exact(v, &p->exact) != 0) {
        /* the user meant to keep some calls exact, and which is unknown */
        p->mode = SC_MODE_SYNC;
        BAD("STARCOLL_EXACT", v,
            "element counts of calls to keep exact, each optionally :float or :double, comma-separated, at most 16 "
            "(e.g. 100,441:float)", "sync (every call exact)");
    }
    if ((v = get("STARCOLL_EXACT_COMMS")) && !only_space(skip_space(v))) {   /* empty: as if unset */
        if (parse_exact_comms(v, &p->exact_comms) == 0) p->exact_comms_set = 1;
        else {
            p->mode = SC_MODE_SYNC;   /* as STARCOLL_EXACT: which communicators are meant is unknown */
            BAD("STARCOLL_EXACT_COMMS", v,
                "communicator numbers as the report writes them, 0 to 15 (15: the 16th and later), comma-separated "
                "(e.g. 1 or 1,3), or none", "sync (every call exact)");
        }
    }
    if ((v = get("STARCOLL_FUSE_BYTES")) && sc_parse_size(v, &p->fuse_bytes) != 0) {
        p->fuse_bytes = SC_FUSE_BYTES_DEFAULT;
        BAD("STARCOLL_FUSE_BYTES", v, "a size in bytes with optional K, M or G suffix, e.g. 1M, or 0 for no fusion", "1M");
    }
    if ((v = get("STARCOLL_FUSE_SHARE"))) {
        double f;
        if (parse_decimal(v, '\0', &f) == 0 && f > 0 && f <= 1)
            p->fuse_share = f;
        else
            BAD("STARCOLL_FUSE_SHARE", v, "a fraction in (0,1] of a step's bytes, such as 0.125 (1: every small tensor)",
                "0.125");
    }
    if ((v = get("STARCOLL_QUORUM"))) {
        double q;
        int ok = parse_decimal(v, '\0', &q) == 0 && q > 0 && (q < 1 || (q == floor(q) && q <= 1e6));
        if (ok) p->quorum = q;
        else BAD("STARCOLL_QUORUM", v, "a count of ranks >= 1 or a fraction in (0,1) such as 0.75", "the selector's choice");
    }
    if ((v = get("STARCOLL_STALENESS"))) {
        if (sc_parse_int(v, 0, 1000000, &n) == 0) p->staleness = (int)n;
        else BAD("STARCOLL_STALENESS", v, "a whole number of rounds >= 0", "4");
    }
    if ((v = get("STARCOLL_SCALE"))) {
        if (strcmp(v, "none") == 0) p->scale_fresh = 0;
        else if (strcmp(v, "fresh") == 0) p->scale_fresh = 1;
        else BAD("STARCOLL_SCALE", v, "none, fresh", "none");
    }
    if ((v = get("STARCOLL_GROUP"))) {
        if (strcmp(v, "node") == 0) p->group_size = 0;
        else if (sc_parse_int(v, 1, 1 << 30, &n) == 0) p->group_size = (int)n;
        else BAD("STARCOLL_GROUP", v, "node, or a group size >= 1", "node");
    }
    if ((v = get("STARCOLL_EPOCH"))) {
        if (sc_parse_int(v, 1, 1000000, &n) == 0) p->epoch = (int)n;
        else BAD("STARCOLL_EPOCH", v, "a whole number of steps >= 1", "20");
    }
    if ((v = get("STARCOLL_PAPI_EVENTS")) && (!*v || copy_string(p->papi_events, sizeof p->papi_events, v) != 0))
        BAD("STARCOLL_PAPI_EVENTS", v, "auto, none, or a comma list of PAPI event names", "auto");
    if ((v = get("STARCOLL_NIC")) && (!*v || copy_string(p->nic, sizeof p->nic, v) != 0))
        BAD("STARCOLL_NIC", v, "auto, none, or a comma list of interface names", "auto");
    if ((v = get("STARCOLL_TRACE")) && *v) {
        if (copy_string(p->trace, sizeof p->trace, v) != 0 || !dir_writable(v)) {
            p->trace[0] = '\0';
            BAD("STARCOLL_TRACE", v, "a path prefix in a writable folder", "no trace");
        }
    }
    if ((v = get("STARCOLL_REPORT"))) {
        if (strcmp(v, "stderr") == 0) p->report = SC_REPORT_STDERR;
        else if (strcmp(v, "none") == 0) p->report = SC_REPORT_NONE;
        else if (*v && copy_string(p->report_path, sizeof p->report_path, v) == 0 && dir_writable(v)) p->report = SC_REPORT_FILE;
        else BAD("STARCOLL_REPORT", v, "stderr, none, or a file path in a writable folder", "stderr");
    }
    if ((v = get("STARCOLL_INJECT")) && *v) {
        char err[160];
        if (sc_inject_parse(v, &p->inject, err, sizeof err) != 0) {
            memset(&p->inject, 0, sizeof p->inject);
            char shown_v[128];
            bad++;
            say(msgs, msglen, "starcoll: STARCOLL_INJECT='%s' is not valid (%s; e.g. rank=3,delay=40ms,prob=1); no injection",
                shown(v, shown_v, sizeof shown_v), err);
        }
    }
    /* Checked against the communicator's size where it is used (engine_decide.c). */
    if ((v = get("STARCOLL_SCHEDULE")) && (!*v || copy_string(p->schedule, sizeof p->schedule, v) != 0))
        BAD("STARCOLL_SCHEDULE", v, "STEP:MODE[:ARG] entries separated by commas, under 4096 characters", "the selector's decisions");
    if ((v = get("STARCOLL_STALL"))) {
        /* a plain number is seconds here: stalls are long */
        double t;
        if (parse_decimal(v, 's', &t) == 0 && t <= 1e6) p->stall_s = t;
        else BAD("STARCOLL_STALL", v, "seconds >= 0 (0 turns the stall watchdog and sentinel off)", "30");
    }
    if ((v = get("STARCOLL_CUDA"))) {
        if (strcmp(v, "auto") == 0) p->cuda_off = 0;
        else if (strcmp(v, "off") == 0) p->cuda_off = 1;
        else BAD("STARCOLL_CUDA", v, "auto, off (never look for device buffers)", "auto");
    }
    if ((v = get("STARCOLL_COLL_WAIT"))) {
        if (strcmp(v, "auto") == 0) p->coll_wait = SC_WAIT_AUTO;
        else if (strcmp(v, "blocking") == 0) p->coll_wait = SC_WAIT_BLOCKING;
        else if (strcmp(v, "polled") == 0) p->coll_wait = SC_WAIT_POLLED;
        else BAD("STARCOLL_COLL_WAIT", v,
                 "auto (polled while a rank runs two communicators' engines), blocking, polled (starcoll's own "
                 "collectives tested, with naps)", "auto");
    }
    if ((v = get("STARCOLL_VERBOSE"))) {
        if (sc_parse_int(v, 0, 3, &n) == 0) p->verbose = (int)n;
        else BAD("STARCOLL_VERBOSE", v, "0, 1, 2 or 3", "0");
    }
    return bad;
}

uint64_t sc_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) { h ^= b[i]; h *= 1099511628211ULL; }
    return h;
}

/* FNV-1a over the fields that change behaviour.  Paths are hashed too:
 * ranks reading different model files would decide differently. */
uint64_t sc_policy_hash(const sc_policy *p)
{
    uint64_t h = SC_HASH_SEED;
    long long ints[] = {p->mode, p->selector, (long long)p->min_bytes, p->staleness, p->scale_fresh,
                        p->group_size, p->epoch, p->inject.enabled, (long long)p->fuse_bytes, p->cuda_off, p->coll_wait,
                        p->exact_comms, p->exact_comms_set};
    h = sc_hash_bytes(h, ints, sizeof ints);
    h = sc_hash_bytes(h, &p->quorum, sizeof p->quorum);
    h = sc_hash_bytes(h, &p->fuse_share, sizeof p->fuse_share);
    for (int i = 0; i < p->exact.n; i++) {
        long long e[2] = {p->exact.count[i], p->exact.dkind[i]};
        h = sc_hash_bytes(h, e, sizeof e);
    }
    h = sc_hash_bytes(h, p->model, strlen(p->model));
    h = sc_hash_bytes(h, "|", 1);
    char inj[256];
    sc_inject_describe(&p->inject, inj, sizeof inj);
    h = sc_hash_bytes(h, inj, strlen(inj));
    return h;
}

void sc_policy_describe(const sc_policy *p, char *buf, size_t len)
{
    char q[32], g[32], inj[200];
    if (p->quorum == 0) snprintf(q, sizeof q, "selector");
    else snprintf(q, sizeof q, "%g", p->quorum);
    if (p->group_size == 0) snprintf(g, sizeof g, "node");
    else snprintf(g, sizeof g, "%d", p->group_size);
    sc_inject_describe(&p->inject, inj, sizeof inj);
    snprintf(buf, len,
             "mode=%s selector=%s min_bytes=%zu quorum=%s staleness=%d scale=%s group=%s epoch=%d inject=%s",
             sc_mode_name(p->mode), p->selector == SC_SELECTOR_LEARNED ? "learned" : "heuristic",
             p->min_bytes, q, p->staleness, p->scale_fresh ? "fresh" : "none", g, p->epoch, inj);
    if (p->stall_s != 30 && strlen(buf) + 32 < len) snprintf(buf + strlen(buf), len - strlen(buf), " stall=%gs", p->stall_s);
    if (p->fuse_bytes != SC_FUSE_BYTES_DEFAULT && strlen(buf) + 32 < len)
        snprintf(buf + strlen(buf), len - strlen(buf), " fuse_bytes=%zu", p->fuse_bytes);
    if (p->fuse_share != SC_FUSE_SHARE_DEFAULT && strlen(buf) + 32 < len)
        snprintf(buf + strlen(buf), len - strlen(buf), " fuse_share=%g", p->fuse_share);
    for (int i = 0; i < p->exact.n && strlen(buf) + 32 < len; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%ld%s", i ? "," : " exact=", p->exact.count[i],
                 p->exact.dkind[i] == SC_DK_FLOAT ? ":float" : p->exact.dkind[i] == SC_DK_DOUBLE ? ":double" : "");
    for (int c = 0, first = 1; c < SC_COMM_NUMBERS && strlen(buf) + 24 < len; c++)
        if (p->exact_comms >> c & 1u) {
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", first ? " exact_comms=" : ",", c);
            first = 0;
        }
    if (p->exact_comms_set && !p->exact_comms && strlen(buf) + 24 < len) strcat(buf, " exact_comms=none");
    if (p->schedule[0] && strlen(buf) + 16 < len) strcat(buf, " schedule=fixed");
    if (p->cuda_off && strlen(buf) + 16 < len) strcat(buf, " cuda=off");
    if (p->coll_wait == SC_WAIT_POLLED && strlen(buf) + 24 < len) strcat(buf, " coll_wait=polled");
    if (p->coll_wait == SC_WAIT_BLOCKING && strlen(buf) + 24 < len) strcat(buf, " coll_wait=blocking");
}
