/* Traces, the model file, the trainer, and the learned selector using what
 * the trainer built. */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learned.h"
#include "model_file.h"
#include "names.h"
#include "selector.h"
#include "trace.h"
#include "train.h"
#include "unit_selector_synth.h"

static char tmpdir[64];
static driver df;

static int make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/unit_selector.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", tmpdir, name); }

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void test_trace_round_trip(void)
{
    char path[128];
    path_in(path, sizeof path, "rt.trace");
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_EQUAL(sc_trace_write_header(f, 1, 2, 20, "perf::TASK-CLOCK,perf::CONTEXT-SWITCHES"), 0);
    double rows[3][SC_NFEAT];
    for (int t = 0; t < 3; t++) {
        for (int j = 0; j < SC_NFEAT; j++)
            rows[t][j] = (t + 1) * 0.123456789 * (j + 1) * pow(10.0, j % 7);
        rows[2][SC_F_IB_WAIT_PS] = NAN; /* written as 0 */
        CU_ASSERT_EQUAL(sc_trace_write_step(f, 1, 100 + t, (sc_mode)t, t == 1 ? 0 : -1, rows[t]), 0);
    }
    fclose(f);

    char msg[300];
    sc_trace_reader *r = sc_trace_open(path, msg, sizeof msg);
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_EQUAL(sc_trace_rank(r), 1);
    CU_ASSERT_EQUAL(sc_trace_nranks(r), 2);
    CU_ASSERT_EQUAL(sc_trace_epoch(r), 20);
    CU_ASSERT_STRING_EQUAL(sc_trace_papi(r), "perf::TASK-CLOCK,perf::CONTEXT-SWITCHES");
    sc_trace_row row;
    for (int t = 0; t < 3; t++) {
        CU_ASSERT_EQUAL_FATAL(sc_trace_next(r, &row, msg, sizeof msg), 1);
        CU_ASSERT_EQUAL(row.rank, 1);
        CU_ASSERT_EQUAL(row.step, 100 + t);
        CU_ASSERT_EQUAL(row.mode, (sc_mode)t);
        CU_ASSERT_EQUAL(row.parent, t == 1 ? 0 : -1);
        for (int j = 0; j < SC_NFEAT; j++) {
            double want = t == 2 && j == SC_F_IB_WAIT_PS ? 0.0 : rows[t][j];
            CU_ASSERT(fabs(row.feat[j] - want) <= 1e-8 * fabs(want));
        }
    }
    CU_ASSERT_EQUAL(sc_trace_next(r, &row, msg, sizeof msg), 0);
    CU_ASSERT_FALSE(sc_trace_truncated(r));
    sc_trace_close(r);
}

static void expect_trace_error(const char *name, const char *text, int at_open, const char *needle)
{
    char path[128], msg[300] = "";
    path_in(path, sizeof path, name);
    write_text(path, text);
    sc_trace_reader *r = sc_trace_open(path, msg, sizeof msg);
    if (at_open) {
        CU_ASSERT_PTR_NULL(r);
    } else {
        CU_ASSERT_FATAL(r != NULL);
        sc_trace_row row;
        int got;
        while ((got = sc_trace_next(r, &row, msg, sizeof msg)) == 1)
            ;
        CU_ASSERT_EQUAL(got, -1);
        sc_trace_close(r);
    }
    printf("\n    %s -> %s", name, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, path));
    CU_ASSERT_PTR_NULL(strchr(msg, '\n'));
}

static void test_trace_errors(void)
{
    const char *head = "# starcoll-trace 1\n# nranks 2\nrank step mode step_s\n";
    char text[512];
    expect_trace_error("magic", "rank step mode\n0 1 sync\n", 1, "not a starcoll trace");
    expect_trace_error("nocols", "# starcoll-trace 1\n# nranks 2\n", 1, "no column line");
    expect_trace_error("needcols", "# starcoll-trace 1\nstep_s compute_s\n", 1, "rank, step and mode");
    snprintf(text, sizeof text, "%s0 1 sync 0.1\n0 2 sync\n", head);
    expect_trace_error("short", text, 0, "line 5: fewer fields");
    snprintf(text, sizeof text, "%s0 1 sync 0.1 7\n", head);
    expect_trace_error("long", text, 0, "more fields");
    snprintf(text, sizeof text, "%s0 1 sync abc\n", head);
    expect_trace_error("number", text, 0, "not a finite number");
    snprintf(text, sizeof text, "%s0 1 fast 0.1\n", head);
    expect_trace_error("mode", text, 0, "mode is not one of");
    snprintf(text, sizeof text, "%s-1 1 sync 0.1\n", head);
    expect_trace_error("rank", text, 0, "rank is not");
    printf("\n");

    /* Unknown columns are skipped, absent features read as 0, and a last
     * line cut short by a killed job is dropped, not an error. */
    char path[128], msg[300];
    path_in(path, sizeof path, "lenient");
    write_text(path, "# starcoll-trace 1\n# nranks 1\n# future 3\nrank step mode newcol step_s\n"
                     "0 1 quorum 9 0.25\n0 2 quo");
    sc_trace_reader *r = sc_trace_open(path, msg, sizeof msg);
    CU_ASSERT_FATAL(r != NULL);
    sc_trace_row row;
    CU_ASSERT_EQUAL(sc_trace_next(r, &row, msg, sizeof msg), 1);
    CU_ASSERT_EQUAL(row.mode, SC_MODE_QUORUM);
    CU_ASSERT_DOUBLE_EQUAL(row.feat[SC_F_STEP_S], 0.25, 0);
    CU_ASSERT_DOUBLE_EQUAL(row.feat[SC_F_COMPUTE_S], 0.0, 0);
    CU_ASSERT_EQUAL(sc_trace_next(r, &row, msg, sizeof msg), 0);
    CU_ASSERT_TRUE(sc_trace_truncated(r));
    sc_trace_close(r);
    CU_ASSERT_PTR_NULL(sc_trace_open("/nonexistent/trace", msg, sizeof msg));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "cannot open"));
}

static void test_model_round_trip(void)
{
    sc_learned *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    CU_ASSERT_FATAL(a && b);
    sc_learned_init(a);
    sc_learned_init(b);
    sc_learned_add(a, 5, SC_MODE_HIER, 1.25);
    sc_learned_add(a, 5, SC_MODE_HIER, 1.35);
    sc_learned_add(a, 95, SC_MODE_GROUPS, 2.0);
    sc_learned_add(a, 7, SC_MODE_SYNC, -1.0); /* ignored */
    char path[128], msg[300];
    path_in(path, sizeof path, "rt.model");
    CU_ASSERT_EQUAL(sc_model_save(a, path, "test", msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(sc_model_load(b, path, msg, sizeof msg), 0);
    CU_ASSERT_DOUBLE_EQUAL(b->cell[5][SC_MODE_HIER].count, 2.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(b->cell[5][SC_MODE_HIER].mean, 1.3, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b->cell[95][SC_MODE_GROUPS].mean, 2.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b->cell[7][SC_MODE_SYNC].count, 0.0, 0);
    CU_ASSERT_NOT_EQUAL(sc_model_save(a, "/nonexistent/dir/m", NULL, msg, sizeof msg), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "cannot write"));
    free(a);
    free(b);
}

/* The same synthetic steps through two selectors: same decisions? */
static int same_decisions(sc_selector *x, sc_selector *y, uint64_t seed)
{
    synth syn;
    synth_init(&syn, 8, 0.1, 0.02, seed);
    syn.jitter = 0.3;
    syn.rank[2].slow = 2.0;
    syn.rank[2].runq_share = 0.5;
    double feat[8 * SC_NFEAT];
    int px[8], py[8], same = 1;
    sc_decision dx = {.parent = px, .mode = SC_MODE_SYNC, .quorum_k = 8};
    sc_decision dy = {.parent = py};
    for (long t = 0; t < 100; t++) {
        synth_step(&syn, dx.mode, dx.quorum_k, dx.mode == SC_MODE_GROUPS ? px : NULL, feat);
        sc_selector_observe(x, t, dx.mode, feat);
        sc_selector_observe(y, t, dx.mode, feat);
        if ((t + 1) % 20 == 0) {
            sc_selector_decide(x, t, &dx);
            sc_selector_decide(y, t, &dy);
            same &= dx.mode == dy.mode && dx.quorum_k == dy.quorum_k && !memcmp(px, py, sizeof px) &&
                    !strcmp(dx.reason, dy.reason);
        }
    }
    return same;
}

static void expect_bad_model(const char *name, const char *text, const char *needle)
{
    char path[128], msg[600];
    path_in(path, sizeof path, name);
    if (text)
        write_text(path, text);
    sc_selector_config cfg = {.kind = SC_KIND_LEARNED, .nranks = 8, .epoch_steps = 20, .staleness = 4,
                              .model_path = path};
    sc_selector *s = sc_selector_new(&cfg, msg, sizeof msg);
    CU_ASSERT_FATAL(s != NULL);
    printf("\n    %s -> %s", name, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "STARCOLL_MODEL="));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "using the heuristic"));
    CU_ASSERT_PTR_NULL(strchr(msg, '\n')); /* one line */
    CU_ASSERT_FALSE(sc_selector_is_learned(s));
    /* It decides exactly as the heuristic does. */
    sc_selector_config hc = cfg;
    hc.kind = SC_KIND_HEURISTIC;
    hc.model_path = NULL;
    sc_selector *h = sc_selector_new(&hc, msg, sizeof msg);
    CU_ASSERT_FATAL(h != NULL);
    CU_ASSERT_TRUE(same_decisions(s, h, 31));
    sc_selector_free(s);
    sc_selector_free(h);
}

static void test_bad_model_falls_back(void)
{
    expect_bad_model("missing.model", NULL, "cannot open");
    expect_bad_model("garbage.model", "\x7f" "ELF binary junk\n", "not a starcoll model");
    expect_bad_model("empty.model", "", "empty file");
    expect_bad_model("version.model", "starcoll-model 9\nend\n", "unsupported model version");
    expect_bad_model("class.model", "starcoll-model 1\ncell 96 sync 1 1.0\nend\n", "line 2: class");
    expect_bad_model("mode.model", "starcoll-model 1\ncell 3 auto 1 1.0\nend\n", "mode is not");
    expect_bad_model("mean.model", "starcoll-model 1\n# c\ncell 3 sync 2 -1\nend\n", "line 3: mean");
    expect_bad_model("nan.model", "starcoll-model 1\ncell 3 sync 2 nan\nend\n", "mean");
    expect_bad_model("fields.model", "starcoll-model 1\ncell 3 sync 2\nend\n", "too few fields");
    expect_bad_model("truncated.model", "starcoll-model 1\ncell 3 sync 2 1.5\n", "no closing 'end'");
    expect_bad_model("after.model", "starcoll-model 1\nend\ncell 3 sync 2 1.5\n", "after the closing");
    printf("\n");
    /* A heuristic selector given a model says it ignores it. */
    char msg[300];
    sc_selector_config cfg = {.kind = SC_KIND_HEURISTIC, .nranks = 4, .epoch_steps = 20, .model_path = "x.model"};
    sc_selector *s = sc_selector_new(&cfg, msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "ignored"));
    sc_selector_free(s);
}

/* Records traces of an 8-rank job (one file per rank) whose epochs
 * alternate between sync and hier, where hier is much faster although the
 * links are not near their speed (so the heuristic keeps sync). */
static int record_traces(char paths[8][128], int epochs)
{
    synth syn;
    synth_init(&syn, 8, 0.1, 0.06, 41);
    syn.jitter = 0.01;
    syn.hier_factor = 0.3;
    for (int i = 0; i < 8; i++)
        syn.rank[i].link_util = 0.5;
    FILE *f[8];
    for (int r = 0; r < 8; r++) {
        char name[32];
        snprintf(name, sizeof name, "job.%d", r);
        path_in(paths[r], 128, name);
        f[r] = fopen(paths[r], "w");
        if (!f[r] || sc_trace_write_header(f[r], r, 8, 10, NULL) != 0)
            return -1;
    }
    double feat[8 * SC_NFEAT];
    for (long t = 0; t < 10L * epochs; t++) {
        sc_mode mode = (t / 10) % 2 ? SC_MODE_HIER : SC_MODE_SYNC;
        synth_step(&syn, mode, 8, NULL, feat);
        for (int r = 0; r < 8; r++)
            sc_trace_write_step(f[r], r, t, mode, -1, feat + (size_t)r * SC_NFEAT);
    }
    for (int r = 0; r < 8; r++)
        fclose(f[r]);
    return 0;
}

static void test_trainer_model_used_by_learned(void)
{
    char paths[8][128], model[128], msg[600];
    const char *argv[8];
    CU_ASSERT_EQUAL_FATAL(record_traces(paths, 20), 0);
    for (int r = 0; r < 8; r++)
        argv[r] = paths[r];
    path_in(model, sizeof model, "job.model");
    sc_train_summary sum;
    int rc = sc_train_from_traces(argv, 8, 0, model, &sum, msg, sizeof msg);
    if (rc != 0)
        printf("\n    trainer: %s", msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    printf("\n    trained: %d files, %d ranks, %ld steps, %ld epochs, %d cells", sum.files, sum.nranks, sum.steps,
           sum.epochs, sum.cells);
    CU_ASSERT_EQUAL(sum.nranks, 8);
    CU_ASSERT_EQUAL(sum.steps, 200);
    CU_ASSERT_EQUAL(sum.epochs, 20);
    CU_ASSERT_EQUAL(sum.skipped_steps, 0);
    CU_ASSERT_TRUE(sum.cells >= 2);

    /* The heuristic sees no reason for hier; the learned selector with the
     * model picks it from its first decision. */
    for (int kind = 0; kind < 2; kind++) {
        CU_ASSERT_FATAL(driver_init(&df, kind, 8, 10, kind ? model : NULL, 43) == 0);
        df.syn.jitter = 0.01;
        df.syn.comm_s = 0.06;
        df.syn.hier_factor = 0.3;
        for (int i = 0; i < 8; i++)
            df.syn.rank[i].link_util = 0.5;
        driver_run(&df, 10, 1);
        printf("\n    %s: %s | %s", kind ? "learned+model" : "heuristic", sc_sel_mode_name(df.d.mode), df.d.reason);
        if (kind) {
            CU_ASSERT_TRUE(sc_selector_is_learned(df.sel));
            CU_ASSERT_EQUAL(df.d.mode, SC_MODE_HIER);
            CU_ASSERT_PTR_NOT_NULL(strstr(df.d.reason, "learned"));
        } else {
            CU_ASSERT_EQUAL(df.d.mode, SC_MODE_SYNC);
        }
        driver_free(&df);
    }
    printf("\n");
}

static void test_trainer_errors(void)
{
    char a[128], b[128], c[128], model[128], msg[600];
    path_in(model, sizeof model, "err.model");
    path_in(a, sizeof a, "a.trace");
    path_in(b, sizeof b, "b.trace");
    path_in(c, sizeof c, "c.trace");
    const char *hdr2 = "# starcoll-trace 1\n# nranks 2\nrank step mode step_s compute_s\n";
    char text[512];
    snprintf(text, sizeof text, "%s0 0 sync 0.1 0.1\n0 1 sync 0.1 0.1\n", hdr2);
    write_text(a, text);
    write_text(b, "# starcoll-trace 1\n# nranks 3\nrank step mode step_s\n1 0 sync 0.1\n");
    const char *ab[2] = {a, b};
    CU_ASSERT_EQUAL(sc_train_from_traces(ab, 2, 0, model, NULL, msg, sizeof msg), -1);
    printf("\n    %s", msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "different jobs"));

    snprintf(text, sizeof text, "%s1 1 sync 0.1 0.1\n1 0 sync 0.1 0.1\n", hdr2);
    write_text(c, text);
    const char *ac[2] = {a, c};
    CU_ASSERT_EQUAL(sc_train_from_traces(ac, 2, 0, model, NULL, msg, sizeof msg), -1);
    printf("\n    %s", msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "backwards"));

    const char *aa[2] = {a, a};
    CU_ASSERT_EQUAL(sc_train_from_traces(aa, 2, 0, model, NULL, msg, sizeof msg), -1);
    printf("\n    %s", msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "appears twice"));

    const char *only_a[1] = {a};
    CU_ASSERT_EQUAL(sc_train_from_traces(only_a, 1, 0, model, NULL, msg, sizeof msg), -1);
    printf("\n    %s", msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "no step has a row from all 2 ranks"));

    /* A step missing one rank is skipped, the rest trains. */
    snprintf(text, sizeof text, "%s1 0 sync 0.1 0.1\n", hdr2);
    write_text(c, text);
    sc_train_summary sum;
    CU_ASSERT_EQUAL(sc_train_from_traces(ac, 2, 5, model, &sum, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(sum.steps, 1);
    CU_ASSERT_EQUAL(sum.skipped_steps, 1);
    CU_ASSERT_EQUAL(sc_train_from_traces(ac, 0, 5, model, &sum, msg, sizeof msg), -1);
    printf("\n");
}

static void test_learned_online_explores_boundedly(void)
{
    /* No model: hier is faster here but nothing in the signals says so; the
     * learned selector finds it by exploring, and explores rarely. */
    CU_ASSERT_FATAL(driver_init(&df, SC_KIND_LEARNED, 8, 10, NULL, 51) == 0);
    df.syn.jitter = 0.01;
    df.syn.comm_s = 0.06;
    df.syn.hier_factor = 0.3;
    for (int i = 0; i < 8; i++)
        df.syn.rank[i].link_util = 0.5;
    driver_run(&df, 10 * 200, 1);
    int explores = 0;
    for (int i = 0; i < df.changes && i < SYNTH_MAX_CHANGES; i++)
        explores += strncmp(df.change_reason[i], "explore", 7) == 0;
    printf("\n    200 epochs: %d decisions, %d changes, %d explorations; final %s | %s\n", df.decides, df.changes,
           explores, sc_sel_mode_name(df.d.mode), df.d.reason);
    CU_ASSERT_TRUE(explores >= 1);
    CU_ASSERT_TRUE(explores <= 0.1 * df.decides);
    CU_ASSERT_TRUE(df.changes <= 2 * explores + 2); /* each exploration: out and back, at most */
    CU_ASSERT_EQUAL(df.d.mode, SC_MODE_HIER);
    driver_free(&df);
}

void register_files_suite(void)
{
    CU_pSuite s = CU_add_suite("traces, model file, trainer", make_tmpdir, remove_tmpdir);
    CU_add_test(s, "trace write/read round trip", test_trace_round_trip);
    CU_add_test(s, "malformed traces give one clear line", test_trace_errors);
    CU_add_test(s, "model file round trip", test_model_round_trip);
    CU_add_test(s, "bad or missing model: one clear line, heuristic decisions", test_bad_model_falls_back);
    CU_add_test(s, "trainer builds a model from traces; learned selector uses it",
                test_trainer_model_used_by_learned);
    CU_add_test(s, "trainer rejects inconsistent traces", test_trainer_errors);
    CU_add_test(s, "learned online: bounded exploration finds the faster mode",
                test_learned_online_explores_boundedly);
}
