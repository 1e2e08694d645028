/* Unit tests of the training benchmark's pieces (benchmarks/train_*.c):
 * backpropagation against finite differences, the SGD/momentum update,
 * evaluation, that training actually learns the digits, the data loader
 * (real file, synthetic stand-in, malformed files), the held-out split,
 * the shards, and the option parser. */
#define _POSIX_C_SOURCE 200809L
#include "../benchmarks/train_data.h"
#include "../benchmarks/train_mlp.h"
#include "../benchmarks/train_opts.h"
#include "cunit_main.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- model ------------------------------------------------------------------- */

/* Analytic gradient of a small ReLU network against central differences of
 * the loss, for every parameter of every layer. */
static void test_gradient_matches_finite_differences(void)
{
    const int sizes[] = {5, 7, 6, 3};
    enum { BATCH = 4 };
    train_mlp m;
    CU_ASSERT_FATAL(train_mlp_init(&m, sizes, 4, BATCH, 7) == 0);
    float x[BATCH * 5];
    int y[BATCH] = {0, 2, 1, 2};
    for (int i = 0; i < BATCH * 5; i++)
        x[i] = (float)(0.1 + 0.9 * sin(1.7 * i + 0.3) * sin(1.7 * i + 0.3));
    /* Non-zero biases so ReLU units are not all on the same side. */
    for (int l = 0; l < m.nlayers; l++)
        for (int o = 0; o < sizes[l + 1]; o++)
            m.param[l][(size_t)sizes[l + 1] * sizes[l] + o] = 0.05f * (float)(o % 3) - 0.02f;
    float *grad[3];
    for (int l = 0; l < 3; l++)
        grad[l] = calloc(m.nparam[l], sizeof(float));
    double loss = train_mlp_gradient(&m, x, y, NULL, BATCH, grad);
    CU_ASSERT(loss > 0 && isfinite(loss));
    CU_ASSERT_DOUBLE_EQUAL(loss, train_mlp_loss(&m, x, y, NULL, BATCH), 1e-6);
    int bad = 0, checked = 0;
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; i < m.nparam[l]; i++) {
            float keep = m.param[l][i];
            const float h = 1e-3f;  /* small: stays clear of ReLU kinks */
            m.param[l][i] = keep + h;
            double up = train_mlp_loss(&m, x, y, NULL, BATCH);
            m.param[l][i] = keep - h;
            double down = train_mlp_loss(&m, x, y, NULL, BATCH);
            m.param[l][i] = keep;
            double numeric = (up - down) / (2.0 * h);
            double err = fabs(numeric - grad[l][i]);
            if (err > 2e-3 + 2e-2 * fabs(numeric)) {
                if (bad++ < 5)
                    printf("\n  layer %d param %zu: backprop %g, finite difference %g", l, i,
                           grad[l][i], numeric);
            }
            checked++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(checked, 5 * 7 + 7 + 7 * 6 + 6 + 6 * 3 + 3);
    for (int l = 0; l < 3; l++)
        free(grad[l]);
    train_mlp_free(&m);
}

/* Batch rows picked through idx give the gradient of those rows. */
static void test_gradient_uses_index(void)
{
    const int sizes[] = {3, 4, 2};
    train_mlp m;
    CU_ASSERT_FATAL(train_mlp_init(&m, sizes, 3, 4, 3) == 0);
    float x[] = {0.1f, 0.2f, 0.3f, 0.9f, 0.8f, 0.7f, 0.5f, 0.1f, 0.4f};
    int y[] = {0, 1, 1};
    int idx[] = {2, 0};
    float sub_x[] = {0.5f, 0.1f, 0.4f, 0.1f, 0.2f, 0.3f};
    int sub_y[] = {1, 0};
    float *g1[2], *g2[2];
    for (int l = 0; l < 2; l++) {
        g1[l] = calloc(m.nparam[l], sizeof(float));
        g2[l] = calloc(m.nparam[l], sizeof(float));
    }
    double l1 = train_mlp_gradient(&m, x, y, idx, 2, g1);
    double l2 = train_mlp_gradient(&m, sub_x, sub_y, NULL, 2, g2);
    CU_ASSERT_DOUBLE_EQUAL(l1, l2, 1e-9);
    for (int l = 0; l < 2; l++) {
        CU_ASSERT(memcmp(g1[l], g2[l], m.nparam[l] * sizeof(float)) == 0);
        free(g1[l]);
        free(g2[l]);
    }
    train_mlp_free(&m);
}

static void test_apply_momentum(void)
{
    const int sizes[] = {1, 1};
    train_mlp m;
    CU_ASSERT_FATAL(train_mlp_init(&m, sizes, 2, 1, 1) == 0);
    m.param[0][0] = 1.0f;
    m.param[0][1] = 0.0f;
    float g[2] = {4.0f, -2.0f};
    float *grad[1] = {g};
    /* v = 0.5 * g = (2, -1); w = (1, 0) - 0.1 * v */
    train_mlp_apply(&m, grad, 0.5f, 0.1f, 0.9f);
    CU_ASSERT_DOUBLE_EQUAL(m.param[0][0], 0.8, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(m.param[0][1], 0.1, 1e-6);
    /* v = 0.9 * (2, -1) + (2, -1) = (3.8, -1.9) */
    train_mlp_apply(&m, grad, 0.5f, 0.1f, 0.9f);
    CU_ASSERT_DOUBLE_EQUAL(m.velocity[0][0], 3.8, 1e-5);
    CU_ASSERT_DOUBLE_EQUAL(m.param[0][0], 0.8 - 0.38, 1e-5);
    CU_ASSERT_DOUBLE_EQUAL(m.param[0][1], 0.1 + 0.19, 1e-5);
    train_mlp_free(&m);
}

/* A hand-set linear model that predicts the larger input: accuracy counts
 * exactly the rows whose label is that input. */
static void test_evaluate_counts(void)
{
    const int sizes[] = {2, 2};
    train_mlp m;
    CU_ASSERT_FATAL(train_mlp_init(&m, sizes, 2, 3, 1) == 0);  /* chunks of 3 rows */
    float w[] = {1, 0, 0, 1, 0, 0};
    memcpy(m.param[0], w, sizeof w);
    float x[] = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0};
    int y[] = {0, 1, 0, 1, 1, 0, 0};  /* rows 4 and 5 wrong */
    double acc, loss;
    train_mlp_evaluate(&m, x, y, 7, &acc, &loss);
    CU_ASSERT_DOUBLE_EQUAL(acc, 5.0 / 7, 1e-12);
    /* Right rows: -log(e/(e+1)); wrong rows: -log(1/(e+1)) */
    double right = log(1 + exp(-1.0)), wrong = log(1 + exp(1.0));
    CU_ASSERT_DOUBLE_EQUAL(loss, (5 * right + 2 * wrong) / 7, 1e-5);
    train_mlp_free(&m);
}

static void test_parse_layers(void)
{
    int s[8];
    CU_ASSERT_EQUAL(train_mlp_parse_layers("64,128,10", s, 8), 3);
    CU_ASSERT(s[0] == 64 && s[1] == 128 && s[2] == 10);
    CU_ASSERT_EQUAL(train_mlp_parse_layers("64", s, 8), -1);
    CU_ASSERT_EQUAL(train_mlp_parse_layers("64,,10", s, 8), -1);
    CU_ASSERT_EQUAL(train_mlp_parse_layers("64,0,10", s, 8), -1);
    CU_ASSERT_EQUAL(train_mlp_parse_layers("64,-3,10", s, 8), -1);
    CU_ASSERT_EQUAL(train_mlp_parse_layers("64,12x", s, 8), -1);
    CU_ASSERT_EQUAL(train_mlp_parse_layers("1,2,3,4", s, 3), -1);
    CU_ASSERT_EQUAL(train_mlp_parse_layers("", s, 8), -1);
}

/* ---- data -------------------------------------------------------------------- */

/* The real digits when the package is installed, else the stand-in; the
 * test says which it used. */
static int load_any(train_data *d)
{
    char path[1024];
    char err[512];
    if (train_data_find_digits(path, sizeof path)) {
        CU_ASSERT_FATAL(train_data_load_csv(path, d, err, sizeof err) == 0);
        return 1;
    }
    printf("\n  (digits.csv.gz not installed: using the synthetic set)");
    CU_ASSERT_FATAL(train_data_synthetic(d, 1797, 12345) == 0);
    return 0;
}

static void test_digits_shape(void)
{
    train_data d;
    int real = load_any(&d);
    CU_ASSERT_EQUAL(d.n, 1797);
    CU_ASSERT_EQUAL(d.nfeat, 64);
    CU_ASSERT_EQUAL(d.nclass, 10);
    int per_class[10] = {0};
    float lo = 1, hi = 0;
    for (int i = 0; i < d.n; i++) {
        CU_ASSERT_FATAL(d.y[i] >= 0 && d.y[i] < 10);
        per_class[d.y[i]]++;
    }
    for (size_t i = 0; i < (size_t)d.n * d.nfeat; i++) {
        lo = d.x[i] < lo ? d.x[i] : lo;
        hi = d.x[i] > hi ? d.x[i] : hi;
    }
    CU_ASSERT(lo >= 0.0f && hi <= 1.0f);
    if (real) {
        CU_ASSERT_EQUAL(hi, 1.0f);            /* 16 / 16 */
        CU_ASSERT_EQUAL(per_class[0], 178);   /* the digits' known class sizes */
        CU_ASSERT_EQUAL(per_class[9], 180);
    }
    train_data_free(&d);
}

static void test_split_deterministic_and_complete(void)
{
    train_data d, tr1, te1, tr2, te2;
    load_any(&d);
    CU_ASSERT_FATAL(train_data_split(&d, 0.2, &tr1, &te1) == 0);
    CU_ASSERT_FATAL(train_data_split(&d, 0.2, &tr2, &te2) == 0);
    CU_ASSERT_EQUAL(te1.n, 359);
    CU_ASSERT_EQUAL(tr1.n + te1.n, d.n);
    CU_ASSERT(memcmp(te1.x, te2.x, (size_t)te1.n * d.nfeat * sizeof(float)) == 0);
    CU_ASSERT(memcmp(tr1.y, tr2.y, (size_t)tr1.n * sizeof(int)) == 0);
    /* Together the parts hold exactly the original samples: compare the
     * per-class sums of all features. */
    double all[10] = {0}, parts[10] = {0};
    for (int i = 0; i < d.n; i++)
        for (int j = 0; j < d.nfeat; j++)
            all[d.y[i]] += d.x[(size_t)i * d.nfeat + j];
    const train_data *p[2] = {&tr1, &te1};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < p[k]->n; i++)
            for (int j = 0; j < d.nfeat; j++)
                parts[p[k]->y[i]] += p[k]->x[(size_t)i * d.nfeat + j];
    for (int c = 0; c < 10; c++)
        CU_ASSERT_DOUBLE_EQUAL(all[c], parts[c], 1e-6 * (1 + all[c]));
    /* Shuffled: the held-out part is not just the file's first rows. */
    CU_ASSERT(memcmp(te1.x, d.x, (size_t)d.nfeat * sizeof(float)) != 0
              || memcmp(te1.x + d.nfeat, d.x + d.nfeat, (size_t)d.nfeat * sizeof(float)) != 0);
    train_data_free(&tr1); train_data_free(&te1);
    train_data_free(&tr2); train_data_free(&te2);
    train_data_free(&d);
}

static void test_synthetic_deterministic(void)
{
    train_data a, b, c;
    CU_ASSERT_FATAL(train_data_synthetic(&a, 500, 9) == 0);
    CU_ASSERT_FATAL(train_data_synthetic(&b, 500, 9) == 0);
    CU_ASSERT_FATAL(train_data_synthetic(&c, 500, 10) == 0);
    CU_ASSERT(memcmp(a.x, b.x, 500 * 64 * sizeof(float)) == 0);
    CU_ASSERT(memcmp(a.x, c.x, 500 * 64 * sizeof(float)) != 0);
    train_data_free(&c);
    CU_ASSERT_EQUAL(train_data_synthetic(&c, 5, 1), -1);  /* fewer rows than classes */
    CU_ASSERT_PTR_NULL(c.x);
    train_data_free(&a);
    train_data_free(&b);
    train_data_free(&c);
}

/* Write text to a temporary file; returns its path (static buffer). */
static const char *temp_file(const char *text)
{
    static char path[64];
    strcpy(path, "/tmp/unit_train_XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void load_bad(const char *text, const char *needle)
{
    train_data d;
    char err[512] = "";
    const char *path = temp_file(text);
    CU_ASSERT_EQUAL(train_data_load_csv(path, &d, err, sizeof err), -1);
    CU_ASSERT_PTR_NULL(d.x);
    if (!strstr(err, needle))
        printf("\n  message lacks '%s': %s", needle, err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
    unlink(path);
}

static void test_load_plain_and_malformed(void)
{
    train_data d;
    char err[512] = "";
    const char *path = temp_file("0,8,1\n4,2,0\n\n2,2,2\n");
    CU_ASSERT_EQUAL_FATAL(train_data_load_csv(path, &d, err, sizeof err), 0);
    CU_ASSERT_EQUAL(d.n, 3);
    CU_ASSERT_EQUAL(d.nfeat, 2);
    CU_ASSERT_EQUAL(d.nclass, 3);
    CU_ASSERT_DOUBLE_EQUAL(d.x[1], 1.0, 1e-7);   /* 8 / 8 */
    CU_ASSERT_DOUBLE_EQUAL(d.x[2], 0.5, 1e-7);   /* 4 / 8 */
    CU_ASSERT_EQUAL(d.y[2], 2);
    train_data_free(&d);
    unlink(path);

    load_bad("1,2,0\n1,2\n", "line 2");
    load_bad("1,x,0\n", "not a comma-separated list");
    load_bad("1,2,0.5\n", "not an integer class");
    load_bad("1,2,-1\n", "not an integer class");
    load_bad("-1,2,1\n", "negative feature");
    load_bad("1,2,1\n3,4,1\n", "at least 2 classes");
    load_bad("\n\n", "no samples");
    CU_ASSERT_EQUAL(train_data_load_csv("/nonexistent/digits.csv.gz", &d, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/digits.csv.gz"));
}

/* Every training sample lands in exactly one shard, for even and uneven
 * shards and any world size; uneven shards really differ. */
static void test_shards_cover_once(void)
{
    const int n = 1438;
    for (int uneven = 0; uneven <= 1; uneven++) {
        for (int nranks = 1; nranks <= 9; nranks++) {
            int *seen = calloc(n, sizeof *seen);
            int smallest = n, largest = 0;
            for (int r = 0; r < nranks; r++) {
                int *idx, cnt;
                CU_ASSERT_FATAL(train_data_shard(n, r, nranks, uneven, &idx, &cnt) == 0);
                for (int i = 0; i < cnt; i++) {
                    CU_ASSERT_FATAL(idx[i] >= 0 && idx[i] < n);
                    seen[idx[i]]++;
                }
                smallest = cnt < smallest ? cnt : smallest;
                largest = cnt > largest ? cnt : largest;
                free(idx);
            }
            int once = 0;
            for (int i = 0; i < n; i++)
                once += seen[i] == 1;
            CU_ASSERT_EQUAL(once, n);
            if (!uneven)
                CU_ASSERT(largest - smallest <= 1);
            if (uneven && nranks >= 3)
                CU_ASSERT(largest >= 2 * smallest - 2);  /* weights 2..4 */
            free(seen);
        }
    }
    int *idx, cnt;
    CU_ASSERT_EQUAL(train_data_shard(3, 3, 4, 0, &idx, &cnt), -1);  /* no sample left */
    CU_ASSERT_EQUAL(train_data_shard(10, 4, 4, 0, &idx, &cnt), -1); /* no such rank */
}

/* The whole recipe learns: plain SGD with momentum on the training split
 * passes 90% held-out accuracy within a few hundred steps. */
static void test_training_learns(void)
{
    train_data d, tr, te;
    load_any(&d);
    CU_ASSERT_FATAL(train_data_split(&d, 0.2, &tr, &te) == 0);
    const int sizes[] = {64, 64, 10};
    enum { BATCH = 32 };
    train_mlp m;
    CU_ASSERT_FATAL(train_mlp_init(&m, sizes, 3, 256, 1) == 0);
    float *grad[2] = {calloc(m.nparam[0], sizeof(float)), calloc(m.nparam[1], sizeof(float))};
    double acc0, acc, loss0, loss;
    train_mlp_evaluate(&m, te.x, te.y, te.n, &acc0, &loss0);
    int idx[BATCH];
    for (int step = 0; step < 400; step++) {
        for (int b = 0; b < BATCH; b++)
            idx[b] = (step * BATCH + b * 37) % tr.n;
        train_mlp_gradient(&m, tr.x, tr.y, idx, BATCH, grad);
        train_mlp_apply(&m, grad, 1.0f, 0.05f, 0.9f);
    }
    train_mlp_evaluate(&m, te.x, te.y, te.n, &acc, &loss);
    printf("\n  held-out accuracy %.3f -> %.3f, loss %.3f -> %.3f", acc0, acc, loss0, loss);
    CU_ASSERT(acc0 < 0.5);
    CU_ASSERT(acc > 0.9);
    CU_ASSERT(loss < loss0 / 3);
    free(grad[0]);
    free(grad[1]);
    train_mlp_free(&m);
    train_data_free(&tr);
    train_data_free(&te);
    train_data_free(&d);
}

/* ---- options ------------------------------------------------------------------- */

static void test_parse_size(void)
{
    size_t v;
    CU_ASSERT(train_parse_size("4096", &v) == 0 && v == 4096);
    CU_ASSERT(train_parse_size("64K", &v) == 0 && v == 65536);
    CU_ASSERT(train_parse_size("25M", &v) == 0 && v == 25u << 20);
    CU_ASSERT(train_parse_size("25MiB", &v) == 0 && v == 25u << 20);
    CU_ASSERT(train_parse_size("1.5k", &v) == 0 && v == 1536);
    CU_ASSERT(train_parse_size("1G", &v) == 0 && v == 1u << 30);
    CU_ASSERT_EQUAL(train_parse_size("-1", &v), -1);
    CU_ASSERT_EQUAL(train_parse_size("12Q", &v), -1);
    CU_ASSERT_EQUAL(train_parse_size("M", &v), -1);
    CU_ASSERT_EQUAL(train_parse_size("", &v), -1);
    CU_ASSERT_EQUAL(train_parse_size("100G", &v), -1);
}

static int parse(train_opts *o, char *err, size_t len, int argc, ...)
{
    char *argv[24] = {"starcoll_train"};
    va_list ap;
    va_start(ap, argc);
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    return train_opts_parse(argc, argv, o, err, len);
}

static void test_options(void)
{
    train_opts o;
    char err[512];
    CU_ASSERT_FATAL(parse(&o, err, sizeof err, 1) == 0);
    CU_ASSERT_STRING_EQUAL(o.layers, "64,128,10");
    CU_ASSERT_EQUAL(o.stop_via, TRAIN_STOP_FLAG);
    CU_ASSERT_EQUAL(o.pad_bytes, 0);
    CU_ASSERT_FATAL(parse(&o, err, sizeof err, 11, "--lr=0.5", "--pad-bytes", "25M", "--straggler",
                          "persistent,factor=3", "--uneven", "--stop-via", "bcast",
                          "--mode-label", "quorum") == 0);
    CU_ASSERT_DOUBLE_EQUAL(o.lr, 0.5, 1e-12);
    CU_ASSERT_EQUAL(o.pad_bytes, 25u << 20);
    CU_ASSERT_STRING_EQUAL(o.straggler, "persistent,factor=3");
    CU_ASSERT(o.uneven);
    CU_ASSERT_EQUAL(o.stop_via, TRAIN_STOP_BCAST);
    CU_ASSERT_STRING_EQUAL(o.mode_label, "quorum");
    CU_ASSERT_EQUAL(o.shape_scale, 1);
    CU_ASSERT_FATAL(parse(&o, err, sizeof err, 5, "--shape", "resnet50.tensors", "--shape-scale", "16") == 0);
    CU_ASSERT_STRING_EQUAL(o.shape, "resnet50.tensors");
    CU_ASSERT_EQUAL(o.shape_scale, 16);

    struct { const char *a, *b, *needle; } bad[] = {
        {"--bogus", NULL, "unknown option '--bogus'"},
        {"--lr", NULL, "needs a value"},
        {"--lr", "0", "--lr 0"},
        {"--momentum", "1", "--momentum"},
        {"--target", "1.5", "--target"},
        {"--pad-bytes", "lots", "--pad-bytes lots"},
        {"--batch", "0", "--batch"},
        {"--shape-scale", "0", "--shape-scale 0"},
        {"--mode-label", "a b", "one word"},
        {"--scenario-label", "x=y", "one word"},
        {"--stop-via", "mail", "flag or bcast"},
        {"--uneven=1", NULL, "takes no value"},
        {"stray", NULL, "unexpected argument"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc = bad[i].b ? parse(&o, err, sizeof err, 3, bad[i].a, bad[i].b)
                          : parse(&o, err, sizeof err, 2, bad[i].a);
        CU_ASSERT_EQUAL(rc, -1);
        if (!strstr(err, bad[i].needle))
            printf("\n  %s: message lacks '%s': %s", bad[i].a, bad[i].needle, err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].needle));
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite model = CU_add_suite("train_mlp", NULL, NULL);
    CU_pSuite data = CU_add_suite("train_data", NULL, NULL);
    CU_pSuite opts = CU_add_suite("train_opts", NULL, NULL);
    if (!model || !data || !opts)
        return 1;
    CU_add_test(model, "backprop matches finite differences", test_gradient_matches_finite_differences);
    CU_add_test(model, "batch rows through an index", test_gradient_uses_index);
    CU_add_test(model, "SGD with momentum", test_apply_momentum);
    CU_add_test(model, "evaluation counts right rows", test_evaluate_counts);
    CU_add_test(model, "layer list parsing", test_parse_layers);
    CU_add_test(model, "training learns the digits", test_training_learns);
    CU_add_test(data, "digits shape and range", test_digits_shape);
    CU_add_test(data, "held-out split deterministic and complete", test_split_deterministic_and_complete);
    CU_add_test(data, "synthetic set deterministic", test_synthetic_deterministic);
    CU_add_test(data, "plain CSV and malformed files", test_load_plain_and_malformed);
    CU_add_test(data, "shards cover every sample once", test_shards_cover_once);
    CU_add_test(opts, "sizes", test_parse_size);
    CU_add_test(opts, "options and their errors", test_options);
    return sc_cunit_run();
}
