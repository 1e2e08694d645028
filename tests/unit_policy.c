/* Unit tests of the plugin's pure parts: the STARCOLL_* parser (every
 * variable, good and bad values), STARCOLL_INJECT, eligibility, kernels. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include "policy.h"
#include "eligibility.h"
#include "kernels.h"
#include "cunit_main.h"

/* A synthetic environment: NAME=value pairs. */
static const char *fake_env[32];
static const char *fake_get(const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; fake_env[i]; i++)
        if (strncmp(fake_env[i], name, n) == 0 && fake_env[i][n] == '=') return fake_env[i] + n + 1;
    return NULL;
}
static int parse1(const char *assignment, sc_policy *p, char *msgs, size_t len)
{
    fake_env[0] = assignment;
    fake_env[1] = NULL;
    return sc_policy_parse(p, fake_get, msgs, len);
}
static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_defaults(void)
{
    sc_policy p;
    char msgs[1024];
    fake_env[0] = NULL;
    CU_ASSERT_EQUAL(sc_policy_parse(&p, fake_get, msgs, sizeof msgs), 0);
    CU_ASSERT_EQUAL(p.mode, SC_MODE_AUTO);
    CU_ASSERT_EQUAL(p.selector, SC_SELECTOR_HEURISTIC);
    CU_ASSERT_EQUAL(p.min_bytes, SC_MIN_BYTES_DEFAULT);
    CU_ASSERT_EQUAL(p.fuse_bytes, 1024 * 1024);
    CU_ASSERT_EQUAL(p.quorum, 0);
    CU_ASSERT_EQUAL(p.staleness, 4);
    CU_ASSERT_EQUAL(p.scale_fresh, 0);
    CU_ASSERT_EQUAL(p.group_size, 0);
    CU_ASSERT_EQUAL(p.epoch, 20);
    CU_ASSERT_STRING_EQUAL(p.papi_events, "auto");
    CU_ASSERT_STRING_EQUAL(p.nic, "auto");
    CU_ASSERT_EQUAL(p.report, SC_REPORT_STDERR);
    CU_ASSERT_FALSE(p.inject.enabled);
    CU_ASSERT_EQUAL(p.verbose, 0);
    CU_ASSERT_EQUAL(p.cuda_off, 0);   /* device buffers looked for where CUDA is loaded */
    CU_ASSERT_STRING_EQUAL(msgs, "");
}

/* STARCOLL_COLL_WAIT=value: the setting it gives, and what the policy
 * line says of it (said NULL: nothing, as for the default). */
static void check_coll_wait(const char *value, sc_coll_wait want, const char *said)
{
    sc_policy p;
    char m[1024], d[512], assignment[64];
    snprintf(assignment, sizeof assignment, "STARCOLL_COLL_WAIT=%s", value);
    CU_ASSERT_EQUAL(parse1(assignment, &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.coll_wait, want);
    sc_policy_describe(&p, d, sizeof d);
    if (said) {
        CU_ASSERT_PTR_NOT_NULL(strstr(d, said));
    } else {
        CU_ASSERT_PTR_NULL(strstr(d, "coll_wait"));
    }
}

static void test_good_values(void)
{
    sc_policy p;
    char m[1024];
    const char *modes[] = {"sync", "hier", "quorum", "groups", "auto"};
    for (int i = 0; i < 5; i++) {
        char a[64];
        snprintf(a, sizeof a, "STARCOLL_MODE=%s", modes[i]);
        CU_ASSERT_EQUAL(parse1(a, &p, m, sizeof m), 0);
        CU_ASSERT_EQUAL(p.mode, (sc_mode)i);
    }
    CU_ASSERT_EQUAL(parse1("STARCOLL_SELECTOR=learned", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.selector, SC_SELECTOR_LEARNED);
    char model[] = "/tmp/starcoll-unit-model-XXXXXX", assign[64];
    int fd = mkstemp(model);
    CU_ASSERT_TRUE_FATAL(fd >= 0);
    close(fd);
    snprintf(assign, sizeof assign, "STARCOLL_MODEL=%s", model);
    CU_ASSERT_EQUAL(parse1(assign, &p, m, sizeof m), 0);
    CU_ASSERT_STRING_EQUAL(p.model, model);
    unlink(model);
    CU_ASSERT_EQUAL(parse1("STARCOLL_MIN_BYTES=0", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.min_bytes, 0);
    CU_ASSERT_EQUAL(parse1("STARCOLL_MIN_BYTES=1M", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.min_bytes, 1 << 20);
    CU_ASSERT_EQUAL(parse1("STARCOLL_MIN_BYTES=2g", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.min_bytes, 2UL << 30);
    CU_ASSERT_EQUAL(parse1("STARCOLL_MIN_BYTES=512KB", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.min_bytes, 512 << 10);
    CU_ASSERT_EQUAL(parse1("STARCOLL_FUSE_BYTES=0", &p, m, sizeof m), 0);   /* no fusion */
    CU_ASSERT_EQUAL(p.fuse_bytes, 0);
    CU_ASSERT_EQUAL(parse1("STARCOLL_FUSE_BYTES=1M", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.fuse_bytes, 1 << 20);
    CU_ASSERT_DOUBLE_EQUAL(p.fuse_share, 0.125, 1e-12);   /* the default */
    CU_ASSERT_EQUAL(parse1("STARCOLL_FUSE_SHARE=1", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.fuse_share, 1);
    CU_ASSERT_EQUAL(parse1("STARCOLL_FUSE_SHARE=0.05", &p, m, sizeof m), 0);
    CU_ASSERT_DOUBLE_EQUAL(p.fuse_share, 0.05, 1e-12);
    CU_ASSERT_EQUAL(parse1("STARCOLL_QUORUM=6", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.quorum, 6);
    CU_ASSERT_EQUAL(parse1("STARCOLL_QUORUM=0.75", &p, m, sizeof m), 0);
    CU_ASSERT_DOUBLE_EQUAL(p.quorum, 0.75, 1e-12);
    CU_ASSERT_EQUAL(parse1("STARCOLL_STALENESS=0", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.staleness, 0);
    CU_ASSERT_EQUAL(parse1("STARCOLL_SCALE=fresh", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.scale_fresh, 1);
    CU_ASSERT_EQUAL(parse1("STARCOLL_GROUP=4", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.group_size, 4);
    CU_ASSERT_EQUAL(parse1("STARCOLL_GROUP=node", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.group_size, 0);
    CU_ASSERT_EQUAL(parse1("STARCOLL_EPOCH=5", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.epoch, 5);
    CU_ASSERT_EQUAL(parse1("STARCOLL_PAPI_EVENTS=perf::TASK-CLOCK,PAPI_TOT_INS", &p, m, sizeof m), 0);
    CU_ASSERT_STRING_EQUAL(p.papi_events, "perf::TASK-CLOCK,PAPI_TOT_INS");
    CU_ASSERT_EQUAL(parse1("STARCOLL_NIC=eth0,ib0", &p, m, sizeof m), 0);
    CU_ASSERT_STRING_EQUAL(p.nic, "eth0,ib0");
    CU_ASSERT_EQUAL(parse1("STARCOLL_TRACE=/tmp/tr", &p, m, sizeof m), 0);
    CU_ASSERT_STRING_EQUAL(p.trace, "/tmp/tr");
    CU_ASSERT_EQUAL(parse1("STARCOLL_REPORT=none", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.report, SC_REPORT_NONE);
    CU_ASSERT_EQUAL(parse1("STARCOLL_REPORT=/tmp/r.txt", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.report, SC_REPORT_FILE);
    CU_ASSERT_STRING_EQUAL(p.report_path, "/tmp/r.txt");
    CU_ASSERT_EQUAL(parse1("STARCOLL_VERBOSE=3", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.verbose, 3);
    CU_ASSERT_EQUAL(parse1("STARCOLL_CUDA=off", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.cuda_off, 1);
    char d[512];
    sc_policy_describe(&p, d, sizeof d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, " cuda=off"));
    CU_ASSERT_EQUAL(parse1("STARCOLL_CUDA=auto", &p, m, sizeof m), 0);
    CU_ASSERT_EQUAL(p.cuda_off, 0);
    /* auto by default: polled only while a rank runs two engines (engine_crowd.c) */
    CU_ASSERT_EQUAL(p.coll_wait, SC_WAIT_AUTO);
    sc_policy_describe(&p, d, sizeof d);
    CU_ASSERT_PTR_NULL(strstr(d, "coll_wait"));
    check_coll_wait("polled", SC_WAIT_POLLED, " coll_wait=polled");
    check_coll_wait("blocking", SC_WAIT_BLOCKING, " coll_wait=blocking");
    check_coll_wait("auto", SC_WAIT_AUTO, NULL);
    sc_policy_describe(&p, d, sizeof d);
    CU_ASSERT_PTR_NULL(strstr(d, "cuda="));
    CU_ASSERT_EQUAL(parse1("STARCOLL_INJECT=rank=3,delay=40ms,prob=1", &p, m, sizeof m), 0);
    CU_ASSERT_TRUE(p.inject.enabled);
    CU_ASSERT_DOUBLE_EQUAL(p.inject.delay_s, 0.040, 1e-12);
}

/* Each bad value: exactly one line naming variable and value; safe default kept. */
static void check_bad(const char *assignment, const char *var)
{
    sc_policy p;
    char m[1024];
    int bad = parse1(assignment, &p, m, sizeof m);
    CU_ASSERT_EQUAL(bad, 1);
    CU_ASSERT_EQUAL(count_lines(m), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(m, var));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, strchr(assignment, '=') + 1));
    CU_ASSERT_EQUAL(strncmp(m, "starcoll: ", 10), 0);
    if (bad != 1 || count_lines(m) != 1) printf("\n  for %s got: %s", assignment, m);
}

static void test_bad_values(void)
{
    sc_policy p;
    char m[1024];
    check_bad("STARCOLL_MODE=fast", "STARCOLL_MODE");
    parse1("STARCOLL_MODE=fast", &p, m, sizeof m);
    CU_ASSERT_EQUAL(p.mode, SC_MODE_SYNC);   /* unknown intent: exact */
    check_bad("STARCOLL_SELECTOR=neural", "STARCOLL_SELECTOR");
    check_bad("STARCOLL_MIN_BYTES=-5", "STARCOLL_MIN_BYTES");
    check_bad("STARCOLL_MIN_BYTES=12Q", "STARCOLL_MIN_BYTES");
    check_bad("STARCOLL_MIN_BYTES=", "STARCOLL_MIN_BYTES");
    check_bad("STARCOLL_MIN_BYTES=99999999999999999999", "STARCOLL_MIN_BYTES");
    parse1("STARCOLL_MIN_BYTES=12Q", &p, m, sizeof m);
    CU_ASSERT_EQUAL(p.min_bytes, SC_MIN_BYTES_DEFAULT);
    check_bad("STARCOLL_FUSE_BYTES=lots", "STARCOLL_FUSE_BYTES");
    check_bad("STARCOLL_FUSE_BYTES=-1", "STARCOLL_FUSE_BYTES");
    parse1("STARCOLL_FUSE_BYTES=lots", &p, m, sizeof m);
    CU_ASSERT_EQUAL(p.fuse_bytes, SC_FUSE_BYTES_DEFAULT);
    check_bad("STARCOLL_FUSE_SHARE=2", "STARCOLL_FUSE_SHARE");
    check_bad("STARCOLL_FUSE_SHARE=-0.1", "STARCOLL_FUSE_SHARE");
    parse1("STARCOLL_FUSE_SHARE=2", &p, m, sizeof m);
    CU_ASSERT_DOUBLE_EQUAL(p.fuse_share, SC_FUSE_SHARE_DEFAULT, 1e-12);
    check_bad("STARCOLL_QUORUM=1.5", "STARCOLL_QUORUM");
    check_bad("STARCOLL_QUORUM=0", "STARCOLL_QUORUM");
    check_bad("STARCOLL_QUORUM=-2", "STARCOLL_QUORUM");
    check_bad("STARCOLL_QUORUM=most", "STARCOLL_QUORUM");
    check_bad("STARCOLL_STALENESS=-1", "STARCOLL_STALENESS");
    check_bad("STARCOLL_STALENESS=abc", "STARCOLL_STALENESS");
    check_bad("STARCOLL_SCALE=half", "STARCOLL_SCALE");
    check_bad("STARCOLL_GROUP=0", "STARCOLL_GROUP");
    check_bad("STARCOLL_GROUP=node2", "STARCOLL_GROUP");
    check_bad("STARCOLL_EPOCH=0", "STARCOLL_EPOCH");
    check_bad("STARCOLL_EPOCH=1e9", "STARCOLL_EPOCH");
    check_bad("STARCOLL_PAPI_EVENTS=", "STARCOLL_PAPI_EVENTS");
    check_bad("STARCOLL_NIC=", "STARCOLL_NIC");
    check_bad("STARCOLL_REPORT=", "STARCOLL_REPORT");
    check_bad("STARCOLL_VERBOSE=9", "STARCOLL_VERBOSE");
    check_bad("STARCOLL_CUDA=0", "STARCOLL_CUDA");
    check_bad("STARCOLL_COLL_WAIT=nonblocking", "STARCOLL_COLL_WAIT");
    parse1("STARCOLL_COLL_WAIT=nonblocking", &p, m, sizeof m);
    CU_ASSERT_EQUAL(p.coll_wait, SC_WAIT_AUTO);   /* the default */
    parse1("STARCOLL_CUDA=no", &p, m, sizeof m);
    CU_ASSERT_EQUAL(p.cuda_off, 0);   /* unknown intent: device buffers are still looked for, never missed */
    check_bad("STARCOLL_MODEL=/nonexistent/model.txt", "STARCOLL_MODEL");
    check_bad("STARCOLL_TRACE=/nonexistent-dir/trace", "STARCOLL_TRACE");
    check_bad("STARCOLL_REPORT=/nonexistent-dir/report.txt", "STARCOLL_REPORT");
    parse1("STARCOLL_REPORT=/nonexistent-dir/report.txt", &p, m, sizeof m);
    CU_ASSERT_EQUAL(p.report, SC_REPORT_STDERR);
    check_bad("STARCOLL_INJECT=rank=x,delay=4ms", "STARCOLL_INJECT");
    check_bad("STARCOLL_INJECT=rank=1,delay=-4ms", "STARCOLL_INJECT");
    check_bad("STARCOLL_INJECT=rank=1,delay=4ms,prob=2", "STARCOLL_INJECT");
    check_bad("STARCOLL_INJECT=rank=1,color=red,delay=1ms", "STARCOLL_INJECT");
    check_bad("STARCOLL_INJECT=delay=1ms", "STARCOLL_INJECT");
    parse1("STARCOLL_INJECT=rank=x", &p, m, sizeof m);
    CU_ASSERT_FALSE(p.inject.enabled);
}

static void test_several_bad(void)
{
    sc_policy p;
    char m[2048];
    fake_env[0] = "STARCOLL_MODE=x";
    fake_env[1] = "STARCOLL_EPOCH=-3";
    fake_env[2] = "STARCOLL_GROUP=2";
    fake_env[3] = NULL;
    CU_ASSERT_EQUAL(sc_policy_parse(&p, fake_get, m, sizeof m), 2);
    CU_ASSERT_EQUAL(count_lines(m), 2);
    CU_ASSERT_EQUAL(p.group_size, 2);   /* good values survive bad neighbours */
    CU_ASSERT_EQUAL(p.epoch, 20);
}

/* Values shown in one line each, however long or odd; values out of range
 * refused; every variable after a huge one still said. */
static void test_messages(void)
{
    sc_policy p;
    static char msgs[8192], big[100001];
    memset(big, 'x', sizeof big - 1);
    char mode_big[100020], nic_big[100020];
    snprintf(mode_big, sizeof mode_big, "STARCOLL_MODE=%s", big);
    snprintf(nic_big, sizeof nic_big, "STARCOLL_NIC=%s", big);
    fake_env[0] = mode_big;
    fake_env[1] = nic_big;
    fake_env[2] = "STARCOLL_EPOCH=x";
    fake_env[3] = "STARCOLL_SCALE=\n";
    fake_env[4] = NULL;
    CU_ASSERT_EQUAL(sc_policy_parse(&p, fake_get, msgs, sizeof msgs), 4);
    CU_ASSERT_EQUAL(count_lines(msgs), 4);   /* none lost to the huge ones */
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "...(100000 characters)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "STARCOLL_EPOCH='x'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "STARCOLL_SCALE='\\n'"));   /* escaped, not a line break */
    for (const char *l = msgs; *l;) {
        const char *e = strchr(l, '\n');
        CU_ASSERT_TRUE(e - l < 400);
        l = e + 1;
    }
    const char *refused[] = {"STARCOLL_QUORUM=0x10", "STARCOLL_QUORUM=1e3", "STARCOLL_QUORUM=+3", "STARCOLL_STALL=-1",
                             "STARCOLL_STALL=5m", "STARCOLL_STALL=0x5", "STARCOLL_INJECT=rank=1,delay=1ms,from=10,until=5",
                             "STARCOLL_FUSE_SHARE=0", "STARCOLL_FUSE_SHARE=1.5", "STARCOLL_FUSE_SHARE=12%",
                             "STARCOLL_FUSE_SHARE=nan", "STARCOLL_STALL=1e3", "STARCOLL_STALL=2ss", "STARCOLL_STALL=s",
                             "STARCOLL_STALL=2 s", "STARCOLL_STALL=.", "STARCOLL_STALL=1000001", "STARCOLL_STALL=inf",
                             "STARCOLL_QUORUM=0.75s", "STARCOLL_FUSE_SHARE=0.5s"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CU_ASSERT_EQUAL(parse1(refused[i], &p, msgs, sizeof msgs), 1);
        CU_ASSERT_EQUAL(count_lines(msgs), 1);
    }
    CU_ASSERT_EQUAL(parse1("STARCOLL_STALL=2.5s", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_DOUBLE_EQUAL(p.stall_s, 2.5, 1e-12);
    CU_ASSERT_EQUAL(parse1("STARCOLL_STALL=0", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_EQUAL(p.stall_s, 0);
    CU_ASSERT_EQUAL(parse1("STARCOLL_STALL= 7s ", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_DOUBLE_EQUAL(p.stall_s, 7, 1e-12);
    /* one parser for every decimal: no length limit of its own */
    char longer[120] = "STARCOLL_STALL=";
    memset(longer + strlen(longer), '0', 80);
    strcat(longer, "12.5");
    CU_ASSERT_EQUAL(parse1(longer, &p, msgs, sizeof msgs), 0);
    CU_ASSERT_DOUBLE_EQUAL(p.stall_s, 12.5, 1e-12);
}

static void test_hash(void)
{
    sc_policy a, b;
    char m[256];
    parse1("STARCOLL_MODE=hier", &a, m, sizeof m);
    parse1("STARCOLL_MODE=hier", &b, m, sizeof m);
    CU_ASSERT_EQUAL(sc_policy_hash(&a), sc_policy_hash(&b));
    parse1("STARCOLL_MODE=sync", &b, m, sizeof m);
    CU_ASSERT_NOT_EQUAL(sc_policy_hash(&a), sc_policy_hash(&b));
    parse1("STARCOLL_INJECT=rank=1,delay=2ms", &b, m, sizeof m);
    parse1("STARCOLL_INJECT=rank=2,delay=2ms", &a, m, sizeof m);
    CU_ASSERT_NOT_EQUAL(sc_policy_hash(&a), sc_policy_hash(&b));
    /* ranks fusing differently would deposit on slots the others lack */
    parse1("STARCOLL_FUSE_BYTES=0", &a, m, sizeof m);
    parse1("STARCOLL_FUSE_BYTES=64K", &b, m, sizeof m);
    CU_ASSERT_NOT_EQUAL(sc_policy_hash(&a), sc_policy_hash(&b));
    /* a rank not looking for device buffers would hand MPI device pointers */
    parse1("STARCOLL_CUDA=off", &a, m, sizeof m);
    parse1("STARCOLL_CUDA=auto", &b, m, sizeof m);
    CU_ASSERT_NOT_EQUAL(sc_policy_hash(&a), sc_policy_hash(&b));
}

static void test_parsers(void)
{
    size_t s;
    double d;
    long n;
    CU_ASSERT_EQUAL(sc_parse_size("64K", &s), 0);
    CU_ASSERT_EQUAL(s, 65536);
    CU_ASSERT_EQUAL(sc_parse_size(" 3 ", &s), 0);
    CU_ASSERT_EQUAL(s, 3);
    CU_ASSERT_EQUAL(sc_parse_size("3KK", &s), -1);
    CU_ASSERT_EQUAL(sc_parse_size("+3", &s), -1);
    CU_ASSERT_EQUAL(sc_parse_duration("40ms", &d), 0);
    CU_ASSERT_DOUBLE_EQUAL(d, 0.04, 1e-12);
    CU_ASSERT_EQUAL(sc_parse_duration("500us", &d), 0);
    CU_ASSERT_DOUBLE_EQUAL(d, 0.0005, 1e-12);
    CU_ASSERT_EQUAL(sc_parse_duration("2s", &d), 0);
    CU_ASSERT_DOUBLE_EQUAL(d, 2, 1e-12);
    CU_ASSERT_EQUAL(sc_parse_duration("7", &d), 0);
    CU_ASSERT_DOUBLE_EQUAL(d, 0.007, 1e-12);
    CU_ASSERT_EQUAL(sc_parse_duration("7 parsecs", &d), -1);
    CU_ASSERT_EQUAL(sc_parse_duration("nan", &d), -1);
    CU_ASSERT_EQUAL(sc_parse_int("12", 0, 10, &n), -1);
    CU_ASSERT_EQUAL(sc_parse_int("10", 0, 10, &n), 0);
}

static void test_inject(void)
{
    sc_inject in;
    char err[160];
    CU_ASSERT_EQUAL(sc_inject_parse("rank=3,delay=40ms", &in, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(sc_inject_delay(&in, 3, 8, 0), 0.04, 1e-12);
    CU_ASSERT_EQUAL(sc_inject_delay(&in, 2, 8, 0), 0);
    CU_ASSERT_EQUAL(sc_inject_parse("rank=1+5,delay=1s,every=2,from=4,until=10", &in, err, sizeof err), 0);
    CU_ASSERT_EQUAL(sc_inject_delay(&in, 5, 8, 3), 0);
    CU_ASSERT_DOUBLE_EQUAL(sc_inject_delay(&in, 5, 8, 4), 1, 1e-12);
    CU_ASSERT_EQUAL(sc_inject_delay(&in, 5, 8, 5), 0);
    CU_ASSERT_DOUBLE_EQUAL(sc_inject_delay(&in, 1, 8, 8), 1, 1e-12);
    CU_ASSERT_EQUAL(sc_inject_delay(&in, 1, 8, 10), 0);
    CU_ASSERT_EQUAL(sc_inject_parse("rank=rotate,delay=1ms,period=5", &in, err, sizeof err), 0);
    CU_ASSERT_TRUE(sc_inject_delay(&in, 0, 4, 4) > 0);
    CU_ASSERT_TRUE(sc_inject_delay(&in, 1, 4, 5) > 0);
    CU_ASSERT_EQUAL(sc_inject_delay(&in, 0, 4, 5), 0);
    CU_ASSERT_EQUAL(sc_inject_parse("rank=all,delay=1ms,prob=0.25,seed=7", &in, err, sizeof err), 0);
    int hits = 0;
    for (long c = 0; c < 4000; c++) hits += sc_inject_delay(&in, 2, 8, c) > 0;
    CU_ASSERT_TRUE(hits > 800 && hits < 1200);
    CU_ASSERT_EQUAL(sc_inject_delay(&in, 2, 8, 17) > 0, sc_inject_delay(&in, 2, 8, 17) > 0);  /* deterministic */
    CU_ASSERT_EQUAL(sc_inject_parse("rank=1", &in, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "delay"));
}

static void test_eligibility(void)
{
    sc_call_shape c = {.op_is_sum = 1, .dkind = SC_DK_FLOAT, .comm_size = 8, .count = 16384};
    CU_ASSERT_EQUAL(sc_eligibility(&c, 65536, NULL), SC_ELIG_OK);
    c.count = 16383;
    CU_ASSERT_EQUAL(sc_eligibility(&c, 65536, NULL), SC_ELIG_SMALL);
    CU_ASSERT_EQUAL(sc_eligibility(&c, 0, NULL), SC_ELIG_OK);
    c.dkind = SC_DK_DOUBLE;
    c.count = 8192;
    CU_ASSERT_EQUAL(sc_eligibility(&c, 65536, NULL), SC_ELIG_OK);
    sc_call_shape x = c;
    x.op_is_sum = 0;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, NULL), SC_ELIG_NOT_SUM);
    x = c;
    x.dkind = SC_DK_OTHER;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, NULL), SC_ELIG_DATATYPE);
    x = c;
    x.is_inter = 1;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, NULL), SC_ELIG_INTERCOMM);
    x = c;
    x.comm_size = 1;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, NULL), SC_ELIG_COMM_SIZE);
    x = c;
    x.count = 0;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, NULL), SC_ELIG_COUNT);
    x = c;
    x.aliased = 1;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, NULL), SC_ELIG_ALIAS);
    /* STARCOLL_EXACT names shapes: by count, of either type or of one */
    sc_exact_list named = {.n = 2, .count = {8192, 100}, .dkind = {SC_DK_FLOAT, SC_DK_OTHER}};
    CU_ASSERT_EQUAL(sc_eligibility(&c, 0, &named), SC_ELIG_OK);   /* 8192 doubles: only floats named */
    x = c;
    x.dkind = SC_DK_FLOAT;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, &named), SC_ELIG_NAMED);
    x.count = 100;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, &named), SC_ELIG_NAMED);
    x.dkind = SC_DK_DOUBLE;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, &named), SC_ELIG_NAMED);
    x.count = 101;
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, &named), SC_ELIG_OK);
    x.count = 100;
    x.op_is_sum = 0;   /* ineligible anyway: the first reason stands */
    CU_ASSERT_EQUAL(sc_eligibility(&x, 0, &named), SC_ELIG_NOT_SUM);
    CU_ASSERT_STRING_EQUAL(sc_elig_reason(SC_ELIG_OK), "eligible");
    /* every reason has words for the report, and the report has room for them all */
    for (int r = 0; r < SC_ELIG_NREASONS; r++) CU_ASSERT_STRING_NOT_EQUAL(sc_elig_reason((sc_elig)r), "?");
    CU_ASSERT(SC_ELIG_NREASONS <= SC_ELIG_NREASONS_MAX);
}

/* A setting that changes sums: the policy line says it (said), the
 * defaults' (*q, filled here) do not (key), and the hashes differ, so
 * ranks that disagree on it are found. */
static void said_and_hashed(const sc_policy *p, const char *said, const char *key, sc_policy *q)
{
    char msgs[1024], line[512];
    sc_policy_describe(p, line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, said));
    fake_env[0] = NULL;
    sc_policy_parse(q, fake_get, msgs, sizeof msgs);
    CU_ASSERT_NOT_EQUAL(sc_policy_hash(p), sc_policy_hash(q));
    sc_policy_describe(q, line, sizeof line);
    CU_ASSERT_PTR_NULL(strstr(line, key));
}

/* A list that names calls or communicators to keep exact, refused: one
 * line naming var, and sync (which were meant is unknown). */
static void refused_to_sync(const char *setting, const char *var, sc_policy *p)
{
    char msgs[1024];
    CU_ASSERT_EQUAL(parse1(setting, p, msgs, sizeof msgs), 1);
    CU_ASSERT_EQUAL(count_lines(msgs), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs, var));
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "using sync"));
    CU_ASSERT_EQUAL(p->mode, SC_MODE_SYNC);
}

/* STARCOLL_EXACT: the shapes it names, the policy line, the hash; a bad
 * list is one line and sync (the calls meant to stay exact are unknown). */
static void test_exact_list(void)
{
    sc_policy p, q;
    char msgs[1024];
    CU_ASSERT_EQUAL(parse1("STARCOLL_EXACT=100, 441:float,7:double", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_EQUAL(p.exact.n, 3);
    CU_ASSERT_EQUAL(p.exact.count[0], 100);
    CU_ASSERT_EQUAL(p.exact.dkind[0], SC_DK_OTHER);
    CU_ASSERT_EQUAL(p.exact.count[1], 441);
    CU_ASSERT_EQUAL(p.exact.dkind[1], SC_DK_FLOAT);
    CU_ASSERT_EQUAL(p.exact.dkind[2], SC_DK_DOUBLE);
    CU_ASSERT_EQUAL(p.mode, SC_MODE_AUTO);
    said_and_hashed(&p, " exact=100,441:float,7:double", "exact=", &q);
    const char *none[] = {"STARCOLL_EXACT=", "STARCOLL_EXACT=none", "STARCOLL_EXACT=  "};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(parse1(none[i], &p, msgs, sizeof msgs), 0);
        CU_ASSERT_EQUAL(p.exact.n, 0);
        CU_ASSERT_EQUAL(sc_policy_hash(&p), sc_policy_hash(&q));
    }
    const char *bad[] = {"STARCOLL_EXACT=100;441", "STARCOLL_EXACT=0", "STARCOLL_EXACT=-5", "STARCOLL_EXACT=100:int",
                         "STARCOLL_EXACT=100,", "STARCOLL_EXACT=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
                         "STARCOLL_EXACT=99999999999", "STARCOLL_EXACT=all"};
    for (int i = 0; i < 8; i++) {
        refused_to_sync(bad[i], "STARCOLL_EXACT", &p);
        CU_ASSERT_EQUAL(p.exact.n, 0);
    }
    /* sixteen are allowed */
    CU_ASSERT_EQUAL(parse1("STARCOLL_EXACT=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_EQUAL(p.exact.n, 16);
}

/* STARCOLL_EXACT_COMMS: the report's communicator numbers, the policy
 * line, the hash; a bad list is one line and sync, as STARCOLL_EXACT's. */
static void test_exact_comms(void)
{
    sc_policy p, q;
    char msgs[1024], line[512];
    CU_ASSERT_EQUAL(parse1("STARCOLL_EXACT_COMMS=1, 3,15", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_EQUAL(p.exact_comms, (1u << 1) | (1u << 3) | (1u << 15));
    CU_ASSERT_EQUAL(p.mode, SC_MODE_AUTO);
    said_and_hashed(&p, " exact_comms=1,3,15", "exact_comms", &q);
    CU_ASSERT_EQUAL(p.exact_comms_set, 1);
    CU_ASSERT_EQUAL(q.exact_comms_set, 0);
    CU_ASSERT_EQUAL(parse1("STARCOLL_EXACT_COMMS=0", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_EQUAL(p.exact_comms, 1u);
    /* none: no communicator named, and crossing ones get rounds (a
     * behaviour of its own: in the hash); empty: as if unset */
    CU_ASSERT_EQUAL(parse1("STARCOLL_EXACT_COMMS= none ", &p, msgs, sizeof msgs), 0);
    CU_ASSERT_EQUAL(p.exact_comms, 0u);
    CU_ASSERT_EQUAL(p.exact_comms_set, 1);
    CU_ASSERT_NOT_EQUAL(sc_policy_hash(&p), sc_policy_hash(&q));
    sc_policy_describe(&p, line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, " exact_comms=none"));
    const char *unset[] = {"STARCOLL_EXACT_COMMS=", "STARCOLL_EXACT_COMMS=  "};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(parse1(unset[i], &p, msgs, sizeof msgs), 0);
        CU_ASSERT_EQUAL(p.exact_comms, 0u);
        CU_ASSERT_EQUAL(p.exact_comms_set, 0);
        CU_ASSERT_EQUAL(sc_policy_hash(&p), sc_policy_hash(&q));
    }
    const char *bad[] = {"STARCOLL_EXACT_COMMS=16", "STARCOLL_EXACT_COMMS=-1", "STARCOLL_EXACT_COMMS=1;2",
                         "STARCOLL_EXACT_COMMS=1,", "STARCOLL_EXACT_COMMS=1@2", "STARCOLL_EXACT_COMMS=world",
                         "STARCOLL_EXACT_COMMS=99999999999999999999"};
    for (int i = 0; i < 7; i++) {
        refused_to_sync(bad[i], "STARCOLL_EXACT_COMMS", &p);
        CU_ASSERT_EQUAL(p.exact_comms, 0u);
        CU_ASSERT_EQUAL(p.exact_comms_set, 0);
    }
}

static void test_kernels(void)
{
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50};
    sc_sum_into(a, b, 5, SC_DK_FLOAT);
    CU_ASSERT_EQUAL(a[0], 11);
    CU_ASSERT_EQUAL(a[4], 55);
    double c[3] = {1, -2, 3}, d[3] = {0.5, 0.5, 0.5};
    sc_sum_into(c, d, 3, SC_DK_DOUBLE);
    CU_ASSERT_EQUAL(c[1], -1.5);
    sc_scale(c, 3, SC_DK_DOUBLE, 2);
    CU_ASSERT_EQUAL(c[2], 7);
    CU_ASSERT_DOUBLE_EQUAL(sc_sqnorm(b, 5, SC_DK_FLOAT), 100 + 400 + 900 + 1600 + 2500, 1e-9);
    sc_sum_into(a, b, 0, SC_DK_FLOAT);   /* zero count touches nothing */
    CU_ASSERT_EQUAL(a[0], 11);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("policy", NULL, NULL);
    CU_add_test(s, "defaults", test_defaults);
    CU_add_test(s, "every variable, good values", test_good_values);
    CU_add_test(s, "every variable, bad values", test_bad_values);
    CU_add_test(s, "several bad values", test_several_bad);
    CU_add_test(s, "messages: long and odd values, out of range", test_messages);
    CU_add_test(s, "policy hash", test_hash);
    CU_add_test(s, "size, duration, int parsers", test_parsers);
    CU_pSuite t = CU_add_suite("plugin", NULL, NULL);
    CU_add_test(t, "STARCOLL_INJECT", test_inject);
    CU_add_test(t, "eligibility", test_eligibility);
    CU_add_test(t, "STARCOLL_EXACT", test_exact_list);
    CU_add_test(t, "STARCOLL_EXACT_COMMS", test_exact_comms);
    CU_add_test(t, "kernels", test_kernels);
    return sc_cunit_run();
}
