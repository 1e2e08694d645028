/* Digits loading, synthetic stand-in, held-out split and shards: see
 * train_data.h. */
#define _XOPEN_SOURCE 700  /* glob, strtok_r, access */
#include "train_data.h"
#include "train_rng.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "set_err.h"

/* Fixed seed of the held-out split: the split must not move with --seed,
 * or accuracies of runs with different seeds would not be comparable. */
#define SPLIT_SEED 20240611ULL
#define MAX_COLUMNS 4096
#define MAX_CLASSES 1000


const char *train_data_find_digits(char *buf, size_t len)
{
    static const char *const patterns[] = {
        "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz",
        "/usr/lib/python3*/dist-packages/sklearn/datasets/data/digits.csv.gz",
        "/usr/lib/python3*/site-packages/sklearn/datasets/data/digits.csv.gz",
        "/usr/local/lib/python3*/dist-packages/sklearn/datasets/data/digits.csv.gz",
        "/usr/local/lib/python3*/site-packages/sklearn/datasets/data/digits.csv.gz",
        "/usr/lib64/python3*/site-packages/sklearn/datasets/data/digits.csv.gz",
    };
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        glob_t g;
        if (glob(patterns[p], 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            if (access(g.gl_pathv[i], R_OK) == 0 && strlen(g.gl_pathv[i]) < len) {
                strcpy(buf, g.gl_pathv[i]);
                globfree(&g);
                return buf;
            }
        }
        globfree(&g);
    }
    return NULL;
}

/* Whole (decompressed) file into a NUL-terminated malloc'ed string. */
static char *read_all(const char *path, char *err, size_t errlen)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        set_err(err, errlen, "cannot open %s: %s", path, strerror(errno ? errno : ENOENT));
        return NULL;
    }
    size_t cap = 1 << 18, used = 0;
    char *text = malloc(cap);
    for (;;) {
        if (!text) {
            set_err(err, errlen, "out of memory reading %s", path);
            gzclose(f);
            return NULL;
        }
        if (cap - used < 65536) {
            char *bigger = realloc(text, cap * 2);
            if (!bigger) {
                free(text);
                text = NULL;
                continue;
            }
            text = bigger;
            cap *= 2;
        }
        int got = gzread(f, text + used, (unsigned)(cap - used - 1));
        if (got < 0) {
            int zerr;
            set_err(err, errlen, "cannot read %s: %s", path, gzerror(f, &zerr));
            free(text);
            gzclose(f);
            return NULL;
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    gzclose(f);
    text[used] = '\0';
    return text;
}

/* Parse one CSV line of numbers into vals (at most max); returns the count,
 * or -1 on a field that is not a number. */
static int parse_line(char *line, double *vals, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(v) || n >= max)
            return -1;
        vals[n++] = v;
        while (*end == ' ' || *end == '\t' || *end == '\r')
            end++;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

int train_data_load_csv(const char *path, train_data *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    char *text = read_all(path, err, errlen);
    if (!text)
        return -1;
    size_t lines = 1;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    double *vals = malloc(MAX_COLUMNS * sizeof *vals);
    int ncol = 0, n = 0, lineno = 0, maxlabel = -1, distinct = 0;
    unsigned char seen[MAX_CLASSES] = {0};
    double maxfeat = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (!vals)
            break;
        if (strspn(line, " \t\r") == strlen(line))
            continue;
        int got = parse_line(line, vals, MAX_COLUMNS);
        if (got < 0) {
            set_err(err, errlen, "%s line %d: not a comma-separated list of numbers", path, lineno);
            goto fail;
        }
        if (ncol == 0) {
            if (got < 2) {
                set_err(err, errlen, "%s line %d: need features and a label, found %d column", path, lineno, got);
                goto fail;
            }
            ncol = got;
            d->nfeat = ncol - 1;
            d->x = malloc(lines * (size_t)d->nfeat * sizeof *d->x);
            d->y = malloc(lines * sizeof *d->y);
            if (!d->x || !d->y)
                break;
        } else if (got != ncol) {
            set_err(err, errlen, "%s line %d: %d columns where line 1 had %d", path, lineno, got, ncol);
            goto fail;
        }
        double label = vals[ncol - 1];
        if (label < 0 || label >= MAX_CLASSES || label != floor(label)) {
            set_err(err, errlen, "%s line %d: label %g is not an integer class 0..%d", path, lineno, label, MAX_CLASSES - 1);
            goto fail;
        }
        for (int j = 0; j < d->nfeat; j++) {
            if (vals[j] < 0) {
                set_err(err, errlen, "%s line %d: negative feature %g (expected pixel values >= 0)", path, lineno, vals[j]);
                goto fail;
            }
            d->x[(size_t)n * d->nfeat + j] = (float)vals[j];
            if (vals[j] > maxfeat)
                maxfeat = vals[j];
        }
        d->y[n] = (int)label;
        distinct += !seen[d->y[n]];
        seen[d->y[n]] = 1;
        if (d->y[n] > maxlabel)
            maxlabel = d->y[n];
        n++;
    }
    if (!vals || (ncol > 0 && (!d->x || !d->y))) {
        set_err(err, errlen, "out of memory parsing %s", path);
        goto fail;
    }
    if (n == 0) {
        set_err(err, errlen, "%s holds no samples", path);
        goto fail;
    }
    d->n = n;
    d->nclass = maxlabel + 1;
    if (distinct < 2) {
        set_err(err, errlen, "%s: all samples have label %d; need at least 2 classes", path, maxlabel);
        goto fail;
    }
    float scale = maxfeat > 0 ? (float)(1.0 / maxfeat) : 1.0f;
    for (size_t i = 0; i < (size_t)n * d->nfeat; i++)
        d->x[i] *= scale;
    free(vals);
    free(text);
    return 0;
fail:
    free(vals);
    free(text);
    train_data_free(d);
    return -1;
}

int train_data_synthetic(train_data *d, int n, unsigned long long seed)
{
    enum { NFEAT = 64, NCLASS = 10 };
    memset(d, 0, sizeof *d);
    if (n < NCLASS)
        return -1;
    float proto[NCLASS][NFEAT];
    train_rng r;
    train_rng_seed(&r, seed);
    /* Each class lights a random third of the pixels. */
    for (int c = 0; c < NCLASS; c++)
        for (int j = 0; j < NFEAT; j++)
            proto[c][j] = train_rng_uniform(&r) < 1.0 / 3 ? 0.8f : 0.1f;
    d->x = malloc((size_t)n * NFEAT * sizeof *d->x);
    d->y = malloc((size_t)n * sizeof *d->y);
    if (!d->x || !d->y) {
        train_data_free(d);
        return -1;
    }
    d->n = n;
    d->nfeat = NFEAT;
    d->nclass = NCLASS;
    for (int i = 0; i < n; i++) {
        int c = i % NCLASS;
        d->y[i] = c;
        for (int j = 0; j < NFEAT; j++) {
            /* Heavy uniform noise: classes overlap enough that learning
             * takes some steps, as with the real digits. */
            float v = proto[c][j] + 0.9f * (float)(train_rng_uniform(&r) - 0.5);
            d->x[(size_t)i * NFEAT + j] = v < 0 ? 0 : v > 1 ? 1 : v;
        }
    }
    return 0;
}

void train_data_free(train_data *d)
{
    if (!d)
        return;
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

/* Copy the samples idx[0..count) of src into a new set. */
static int subset(const train_data *src, const int *idx, int count, train_data *out)
{
    memset(out, 0, sizeof *out);
    out->x = malloc((size_t)count * src->nfeat * sizeof *out->x);
    out->y = malloc((size_t)count * sizeof *out->y);
    if (!out->x || !out->y) {
        train_data_free(out);
        return -1;
    }
    out->n = count;
    out->nfeat = src->nfeat;
    out->nclass = src->nclass;
    for (int i = 0; i < count; i++) {
        memcpy(out->x + (size_t)i * src->nfeat, src->x + (size_t)idx[i] * src->nfeat,
               (size_t)src->nfeat * sizeof *out->x);
        out->y[i] = src->y[idx[i]];
    }
    return 0;
}

int train_data_split(const train_data *all, double test_frac,
                     train_data *train, train_data *test)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (!all || all->n < 2 || !(test_frac > 0 && test_frac < 1))
        return -1;
    int ntest = (int)lround(all->n * test_frac);
    if (ntest < 1)
        ntest = 1;
    if (ntest >= all->n)
        ntest = all->n - 1;
    int *perm = malloc((size_t)all->n * sizeof *perm);
    if (!perm)
        return -1;
    for (int i = 0; i < all->n; i++)
        perm[i] = i;
    train_rng r;
    train_rng_seed(&r, SPLIT_SEED);
    train_rng_shuffle(&r, perm, all->n);
    int rc = subset(all, perm, ntest, test);
    if (rc == 0)
        rc = subset(all, perm + ntest, all->n - ntest, train);
    free(perm);
    if (rc != 0) {
        train_data_free(train);
        train_data_free(test);
    }
    return rc;
}

int train_data_shard(int n, int rank, int nranks, int uneven, int **idx, int *count)
{
    *idx = NULL;
    *count = 0;
    if (n < 1 || nranks < 1 || rank < 0 || rank >= nranks)
        return -1;
    int first, stride, cnt;
    if (uneven) {
        /* Contiguous blocks with weights 2, 3, 4, 2, 3, 4, ... */
        long total = 0, before = 0;
        for (int r = 0; r < nranks; r++) {
            total += 2 + r % 3;
            if (r < rank)
                before += 2 + r % 3;
        }
        long lo = (long)n * before / total;
        long hi = (long)n * (before + 2 + rank % 3) / total;
        first = (int)lo;
        stride = 1;
        cnt = (int)(hi - lo);
    } else {
        first = rank;
        stride = nranks;
        cnt = rank < n ? (n - rank + nranks - 1) / nranks : 0;
    }
    if (cnt < 1)
        return -1;
    int *out = malloc((size_t)cnt * sizeof *out);
    if (!out)
        return -1;
    for (int i = 0; i < cnt; i++)
        out[i] = first + i * stride;
    *idx = out;
    *count = cnt;
    return 0;
}
