/* Straggler emulation: spec parser and the deterministic delay function.
 * See straggle.h for the grammar. */
#include "straggle.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "set_err.h"

/* ---- keys ----------------------------------------------------------------- */

enum straggle_key {
    KEY_RANK = 0, KEY_MS, KEY_PROB, KEY_FACTOR, KEY_SIGMA,
    KEY_PERIOD, KEY_START, KEY_END, KEY_SEED, NKEYS
};

static const char *const key_names[NKEYS] = {
    "rank", "ms", "prob", "factor", "sigma", "period", "start", "end", "seed"
};

#define BIT(k) (1u << (k))

static const char *const pattern_names[] = {
    "none", "fixed", "persistent", "jitter", "burst", "onset"
};
#define NPATTERNS (sizeof pattern_names / sizeof pattern_names[0])

/* Keys each pattern accepts (seed everywhere). */
static const unsigned pattern_keys[NPATTERNS] = {
    [STRAGGLE_NONE] = BIT(KEY_SEED),
    [STRAGGLE_FIXED] = BIT(KEY_RANK) | BIT(KEY_MS) | BIT(KEY_PROB) | BIT(KEY_SEED),
    [STRAGGLE_PERSISTENT] = BIT(KEY_RANK) | BIT(KEY_FACTOR) | BIT(KEY_MS) | BIT(KEY_SEED),
    [STRAGGLE_JITTER] = BIT(KEY_SIGMA) | BIT(KEY_MS) | BIT(KEY_SEED),
    [STRAGGLE_BURST] = BIT(KEY_PERIOD) | BIT(KEY_FACTOR) | BIT(KEY_MS) | BIT(KEY_SEED),
    [STRAGGLE_ONSET] = BIT(KEY_RANK) | BIT(KEY_START) | BIT(KEY_END) | BIT(KEY_FACTOR)
                       | BIT(KEY_MS) | BIT(KEY_SEED),
};

const char *straggle_pattern_name(straggle_pattern p)
{
    return (unsigned)p < NPATTERNS ? pattern_names[p] : "?";
}


/* Comma list of the keys in mask, for messages. */
static void list_keys(unsigned mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < NKEYS; k++) {
        if (!(mask & BIT(k)))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", key_names[k]);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
}

/* ---- value parsers: 0 on success, -1 on garbage or out of range ------------ */

static int parse_nonneg_double(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !isfinite(d) || d < 0)
        return -1;
    *out = d;
    return 0;
}

/* A duration: plain number of milliseconds, or with suffix us, ms or s. */
static int parse_duration_s(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || errno == ERANGE || !isfinite(d) || d < 0)
        return -1;
    double scale;
    if (*end == '\0' || strcmp(end, "ms") == 0)
        scale = 1e-3;
    else if (strcmp(end, "us") == 0)
        scale = 1e-6;
    else if (strcmp(end, "s") == 0)
        scale = 1.0;
    else
        return -1;
    *out = d * scale;
    return 0;
}

static int parse_nonneg_long(const char *v, long max, long *out)
{
    char *end;
    errno = 0;
    if (*v == '-' || *v == '+')
        return -1;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || n < 0 || n > max)
        return -1;
    *out = n;
    return 0;
}

static int parse_seed(const char *v, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*v == '-' || *v == '+')
        return -1;
    unsigned long long n = strtoull(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE)
        return -1;
    *out = n;
    return 0;
}

/* Parse one key's value into s; on failure write what the key accepts. */
static int parse_value(enum straggle_key k, const char *v, straggle *s,
                       char *err, size_t errlen)
{
    long n;
    switch (k) {
    case KEY_RANK:
        if (strcmp(v, "last") == 0) {
            s->rank = STRAGGLE_LAST_RANK;
            return 0;
        }
        if (parse_nonneg_long(v, 1L << 30, &n) == 0) {
            s->rank = (int)n;
            return 0;
        }
        set_err(err, errlen, "rank=%s: expected a rank number >= 0 or 'last'", v);
        return -1;
    case KEY_MS:
        if (parse_duration_s(v, &s->delay_s) == 0)
            return 0;
        set_err(err, errlen, "ms=%s: expected a duration >= 0 in milliseconds, or with suffix us, ms or s (e.g. 5, 500us, 0.2s)", v);
        return -1;
    case KEY_PROB:
        if (parse_nonneg_double(v, &s->prob) == 0 && s->prob <= 1.0)
            return 0;
        set_err(err, errlen, "prob=%s: expected a probability between 0 and 1", v);
        return -1;
    case KEY_FACTOR:
        if (parse_nonneg_double(v, &s->factor) == 0 && s->factor >= 1.0)
            return 0;
        set_err(err, errlen, "factor=%s: expected a slowdown factor >= 1 (2 = twice as slow)", v);
        return -1;
    case KEY_SIGMA:
        if (parse_nonneg_double(v, &s->sigma) == 0 && s->sigma <= 10.0)
            return 0;
        set_err(err, errlen, "sigma=%s: expected a lognormal sigma between 0 and 10", v);
        return -1;
    case KEY_PERIOD:
        if (parse_nonneg_long(v, 1L << 40, &s->period) == 0 && s->period >= 1)
            return 0;
        set_err(err, errlen, "period=%s: expected a number of steps >= 1", v);
        return -1;
    case KEY_START:
        if (parse_nonneg_long(v, 1L << 40, &s->start) == 0)
            return 0;
        set_err(err, errlen, "start=%s: expected a step number >= 0", v);
        return -1;
    case KEY_END:
        if (strcmp(v, "never") == 0) {
            s->end = STRAGGLE_NEVER;
            return 0;
        }
        if (parse_nonneg_long(v, 1L << 40, &s->end) == 0)
            return 0;
        set_err(err, errlen, "end=%s: expected a step number >= 0 or 'never'", v);
        return -1;
    case KEY_SEED:
        if (parse_seed(v, &s->seed) == 0)
            return 0;
        set_err(err, errlen, "seed=%s: expected an integer >= 0", v);
        return -1;
    default:
        return -1;
    }
}

static void set_defaults(straggle *s, straggle_pattern p)
{
    memset(s, 0, sizeof *s);
    s->pattern = p;
    s->rank = STRAGGLE_LAST_RANK;
    s->delay_s = -1.0;
    s->prob = 1.0;
    s->factor = p == STRAGGLE_BURST ? 4.0 : 2.0;
    s->sigma = 0.5;
    s->period = 10;
    s->start = 50;
    s->end = STRAGGLE_NEVER;
    s->seed = 1;
}

#define SPEC_MAX 512

/* Split off the next comma-separated item of *rest (modified in place);
 * NULL when none is left. */
static char *next_item(char **rest)
{
    char *item = *rest;
    if (!item)
        return NULL;
    char *comma = strchr(item, ',');
    if (comma) {
        *comma = '\0';
        *rest = comma + 1;
    } else {
        *rest = NULL;
    }
    return item;
}

int straggle_parse(const char *spec, straggle *out, char *err, size_t errlen)
{
    straggle s;
    set_defaults(&s, STRAGGLE_NONE);
    if (err && errlen)
        err[0] = '\0';
    if (!out) {
        set_err(err, errlen, "straggler spec: no output given");
        return -1;
    }
    if (!spec || !*spec) {
        *out = s;
        return 0;
    }
    char copy[SPEC_MAX];
    if (strlen(spec) >= sizeof copy) {
        set_err(err, errlen, "straggler spec is longer than %d characters", SPEC_MAX - 1);
        return -1;
    }
    /* An empty item (",," or a stray comma) is a typo, not a default. */
    if (strstr(spec, ",,") || spec[0] == ',' || spec[strlen(spec) - 1] == ',') {
        set_err(err, errlen, "straggler spec '%s': empty item between commas", spec);
        return -1;
    }
    strcpy(copy, spec);

    /* The first item is a pattern name unless it is a key=value. */
    char *next = copy;
    char *item = next_item(&next);
    straggle_pattern p = STRAGGLE_FIXED;
    int first_is_pattern = item && !strchr(item, '=');
    if (first_is_pattern) {
        size_t i;
        for (i = 0; i < NPATTERNS; i++)
            if (strcmp(item, pattern_names[i]) == 0)
                break;
        if (i == NPATTERNS) {
            set_err(err, errlen, "straggler spec '%s': unknown pattern '%s' (accepted: none, fixed, persistent, jitter, burst, onset, or key=value,... for fixed)", spec, item);
            return -1;
        }
        p = (straggle_pattern)i;
        item = next_item(&next);
    }
    set_defaults(&s, p);

    unsigned given = 0;
    for (; item; item = next_item(&next)) {
        char *eq = strchr(item, '=');
        char accepted[128];
        list_keys(pattern_keys[p], accepted, sizeof accepted);
        if (!eq || eq == item) {
            set_err(err, errlen, "straggler spec '%s': '%s' is not key=value (pattern %s accepts: %s)", spec, item, pattern_names[p], accepted);
            return -1;
        }
        *eq = '\0';
        const char *key = item, *val = eq + 1;
        int k;
        for (k = 0; k < NKEYS; k++)
            if (strcmp(key, key_names[k]) == 0)
                break;
        if (k == NKEYS || !(pattern_keys[p] & BIT(k))) {
            set_err(err, errlen, "straggler spec '%s': %s key '%s' for pattern %s (accepted: %s)", spec, k == NKEYS ? "unknown" : "no", key, pattern_names[p], accepted);
            return -1;
        }
        if (given & BIT(k)) {
            set_err(err, errlen, "straggler spec '%s': key '%s' given twice", spec, key);
            return -1;
        }
        given |= BIT(k);
        char msg[200];
        if (parse_value((enum straggle_key)k, val, &s, msg, sizeof msg) != 0) {
            set_err(err, errlen, "straggler spec '%s': %s", spec, msg);
            return -1;
        }
    }
    /* Cross-key rules. */
    if (p == STRAGGLE_FIXED && !(given & BIT(KEY_MS))) {
        set_err(err, errlen, "straggler spec '%s': fixed needs ms=M (the delay per step), e.g. rank=3,ms=5", spec);
        return -1;
    }
    if ((given & BIT(KEY_MS)) && (given & BIT(KEY_FACTOR))) {
        set_err(err, errlen, "straggler spec '%s': give factor=F or ms=M, not both", spec);
        return -1;
    }
    if (p == STRAGGLE_ONSET && s.end != STRAGGLE_NEVER && s.end <= s.start) {
        set_err(err, errlen, "straggler spec '%s': end=%ld must come after start=%ld", spec, s.end, s.start);
        return -1;
    }
    *out = s;
    return 0;
}

int straggle_check(const straggle *s, int nranks, char *err, size_t errlen)
{
    if (nranks < 1) {
        set_err(err, errlen, "straggler: world size %d is not positive", nranks);
        return -1;
    }
    int named = s->pattern == STRAGGLE_FIXED || s->pattern == STRAGGLE_PERSISTENT
                || s->pattern == STRAGGLE_ONSET;
    if (named && s->rank != STRAGGLE_LAST_RANK && s->rank >= nranks) {
        set_err(err, errlen, "straggler: rank=%d does not exist with %d ranks (accepted: 0 to %d or 'last')", s->rank, nranks, nranks - 1);
        return -1;
    }
    return 0;
}

/* ---- counter-based RNG ---------------------------------------------------- */

/* SplitMix64 finaliser: a bijective mix with good avalanche, so hashing
 * (seed, rank, step, stream) gives independent-looking uniform draws. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in the open interval (0, 1). */
static double uniform(uint64_t seed, int rank, long step, unsigned stream)
{
    const uint64_t golden = 0x9e3779b97f4a7c15ULL;
    uint64_t h = mix64(seed + golden);
    h = mix64(h ^ ((uint64_t)(uint32_t)rank + golden));
    h = mix64(h ^ ((uint64_t)step + golden));
    h = mix64(h ^ ((uint64_t)stream + golden));
    return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Standard normal by Box-Muller from two independent streams. */
static double normal(uint64_t seed, int rank, long step)
{
    double u1 = uniform(seed, rank, step, 1);
    double u2 = uniform(seed, rank, step, 2);
    const double two_pi = 6.283185307179586476925;
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

/* ---- delays ---------------------------------------------------------------- */

static int resolve_rank(const straggle *s, int nranks)
{
    return s->rank == STRAGGLE_LAST_RANK ? nranks - 1 : s->rank;
}

/* Extra time of a slowed rank: ms when given, else (factor-1) * base. */
static double slowdown_s(const straggle *s, double base_s)
{
    if (s->delay_s >= 0)
        return s->delay_s;
    return (s->factor - 1.0) * base_s;
}

double straggle_delay_s(const straggle *s, int rank, int nranks, long step, double base_s)
{
    if (!s || step < 0 || rank < 0 || rank >= nranks || !(base_s >= 0))
        return 0.0;
    switch (s->pattern) {
    case STRAGGLE_FIXED:
        if (rank != resolve_rank(s, nranks))
            return 0.0;
        return uniform(s->seed, rank, step, 0) < s->prob ? s->delay_s : 0.0;
    case STRAGGLE_PERSISTENT:
        return rank == resolve_rank(s, nranks) ? slowdown_s(s, base_s) : 0.0;
    case STRAGGLE_JITTER: {
        double base = s->delay_s >= 0 ? s->delay_s : base_s;
        double extra = base * (exp(s->sigma * normal(s->seed, rank, step)) - 1.0);
        return extra > 0 ? extra : 0.0;
    }
    case STRAGGLE_BURST:
        return rank == (int)((step / s->period) % nranks) ? slowdown_s(s, base_s) : 0.0;
    case STRAGGLE_ONSET:
        if (rank != resolve_rank(s, nranks) || step < s->start
            || (s->end != STRAGGLE_NEVER && step >= s->end))
            return 0.0;
        return slowdown_s(s, base_s);
    case STRAGGLE_NONE:
    default:
        return 0.0;
    }
}

/* ---- description ---------------------------------------------------------- */

const char *straggle_describe(const straggle *s, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    char rank[24], slow[48];
    if (s->rank == STRAGGLE_LAST_RANK)
        snprintf(rank, sizeof rank, "last");
    else
        snprintf(rank, sizeof rank, "%d", s->rank);
    if (s->delay_s >= 0)
        snprintf(slow, sizeof slow, "ms=%g", s->delay_s * 1e3);
    else
        snprintf(slow, sizeof slow, "factor=%g", s->factor);
    unsigned long long seed = s->seed;
    switch (s->pattern) {
    case STRAGGLE_FIXED:
        snprintf(buf, len, "fixed,rank=%s,ms=%g,prob=%g,seed=%llu", rank, s->delay_s * 1e3, s->prob, seed);
        break;
    case STRAGGLE_PERSISTENT:
        snprintf(buf, len, "persistent,rank=%s,%s,seed=%llu", rank, slow, seed);
        break;
    case STRAGGLE_JITTER:
        if (s->delay_s >= 0)
            snprintf(buf, len, "jitter,sigma=%g,ms=%g,seed=%llu", s->sigma, s->delay_s * 1e3, seed);
        else
            snprintf(buf, len, "jitter,sigma=%g,seed=%llu", s->sigma, seed);
        break;
    case STRAGGLE_BURST:
        snprintf(buf, len, "burst,period=%ld,%s,seed=%llu", s->period, slow, seed);
        break;
    case STRAGGLE_ONSET:
        if (s->end == STRAGGLE_NEVER)
            snprintf(buf, len, "onset,rank=%s,start=%ld,end=never,%s,seed=%llu", rank, s->start, slow, seed);
        else
            snprintf(buf, len, "onset,rank=%s,start=%ld,end=%ld,%s,seed=%llu", rank, s->start, s->end, slow, seed);
        break;
    case STRAGGLE_NONE:
    default:
        snprintf(buf, len, "none");
        break;
    }
    return buf;
}
