/* mpi_exact: every MPI_Allreduce result must equal PMPI_Allreduce on the
 * same input.  Under the starcoll preload MPI_Allreduce goes through the
 * library while PMPI_Allreduce is the untouched reference, so any
 * difference is the library's.
 *
 * The matrix: communicators (world, a parity split, a dup, a split that
 * leaves one rank alone in reversed key order, MPI_COMM_SELF, an
 * intercommunicator), datatypes and ops (float/double SUM, which starcoll
 * may reshape, and many it must pass through: MAX/MIN/PROD, integers,
 * bytes with bitwise ops, a derived contiguous type, MPI_DOUBLE_INT with
 * MAXLOC/MINLOC, user-defined ops), counts from 0 to 1M, with and without
 * MPI_IN_PLACE.
 *
 * Comparison: bitwise, except for eligible float/double sums of
 * non-integer values when -t is given (hier may round differently; they
 * must then agree within a relative tolerance and be bitwise equal on all
 * ranks of the communicator).  Each call also checks that the send buffer
 * was not written and that nothing was written past the result.
 *
 * Rank 0 prints, summed over ranks, how many calls starcoll should have
 * counted as eligible and as pass-through ("expect: eligible=N
 * passthrough=N"), so the driving script can hold the library's totals
 * line against it.  Only the calls under test use MPI_Allreduce; all
 * bookkeeping uses PMPI_ so it is not counted.
 *
 * -d (device buffers, benchmarks/device_memory.h: CUDA's cudaMalloc, or
 * tests/fakecuda's stand-in): the calls under test take device memory in
 * every placement a GPU code uses (both buffers on the device, in place on
 * the device, send on the host and receive on the device, the reverse);
 * the reference is PMPI_Allreduce on host copies, which is what Debian's
 * Open MPI (not CUDA-aware) can take.  World and the parity split, a few
 * cases (float and double SUM, int MAX, double_int MAXLOC), counts 1 to
 * 16M (-m caps them).
 *
 * Usage: mpi_exact [-t | -p] [-q] [-n] [-d] [-m MAX_COUNT]
 *   -t  tolerant comparison of eligible sums of non-integer values
 *   -p  compare pass-through calls only: eligible calls are made but not
 *       checked (for the tolerant modes, whose sums are not per-call)
 *   -q  quick: world and a split only, a few cases and counts
 *   -n  the calls under test are MPI_Iallreduce, each completed by MPI_Wait,
 *       against PMPI_Iallreduce
 *   -d  the calls under test take device buffers (above)
 *   -m  skip counts above MAX_COUNT */
#define _POSIX_C_SOURCE 200809L   /* getopt */
#include <mpi.h>
#include "mpi_check.h"
#include "device_memory.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { GUARD_BYTES = 64, MAX_DETAILS = 6 };
static const unsigned char GUARD_BYTE = 0xA5;
static const double FLOAT_REL_TOL = 1e-5, DOUBLE_REL_TOL = 1e-12;

enum value_kind { VAL_INTEGER = 1, VAL_RANDOM = 2 };
/* A check's outcome, ordered so that MPI_MAX over ranks gives the verdict:
 * a failure anywhere fails it; it passed if some rank compared it. */
enum outcome { NOT_COMPARED = 0, PASSED = 1, FAILED = 2 };
enum sum_shape { SHAPE_OTHER, SHAPE_FLOAT_SUM, SHAPE_DOUBLE_SUM };
enum compare_kind { CMP_BYTES, CMP_DOUBLE_INT };

/* ---- deterministic input values ------------------------------------- */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef void (*fill_fn)(void *buf, size_t count, uint64_t seed, enum value_kind kind);

/* Integer values keep every sum exact whatever the order; random values
 * lie in [0.5, 1.5) so a relative tolerance is meaningful. */
static void fill_float(void *buf, size_t count, uint64_t seed, enum value_kind kind)
{
    float *v = buf;
    for (size_t i = 0; i < count; i++) {
        uint64_t r = splitmix64(seed + i);
        v[i] = kind == VAL_INTEGER ? (float)((int)(r % 2001) - 1000)
                                   : 0.5f + (float)(r >> 40) * 0x1p-24f;
    }
}

static void fill_double(void *buf, size_t count, uint64_t seed, enum value_kind kind)
{
    double *v = buf;
    for (size_t i = 0; i < count; i++) {
        uint64_t r = splitmix64(seed + i);
        v[i] = kind == VAL_INTEGER ? (double)((int64_t)(r % 200001) - 100000)
                                   : 0.5 + (double)(r >> 11) * 0x1p-53;
    }
}

/* Small integers keep SUM and PROD free of overflow; random ones exercise
 * every bit for MAX/MIN and the bitwise ops. */
static void fill_int(void *buf, size_t count, uint64_t seed, enum value_kind kind)
{
    int *v = buf;
    for (size_t i = 0; i < count; i++) {
        uint64_t r = splitmix64(seed + i);
        v[i] = kind == VAL_INTEGER ? (int)(r % 7) - 3 : (int)(uint32_t)r;
    }
}

static void fill_uint64(void *buf, size_t count, uint64_t seed, enum value_kind kind)
{
    uint64_t *v = buf;
    (void)kind;
    for (size_t i = 0; i < count; i++) v[i] = splitmix64(seed + i);
}

static void fill_bytes(void *buf, size_t count, uint64_t seed, enum value_kind kind)
{
    unsigned char *v = buf;
    (void)kind;
    for (size_t i = 0; i < count; i++) v[i] = (unsigned char)splitmix64(seed + i);
}

static void fill_vec4(void *buf, size_t count, uint64_t seed, enum value_kind kind)
{
    fill_float(buf, 4 * count, seed, kind);
}

typedef struct double_int { double value; int index; } double_int;

/* Few distinct values so MAXLOC/MINLOC meet ties and must break them. */
static void fill_double_int(void *buf, size_t count, uint64_t seed, enum value_kind kind)
{
    double_int *v = buf;
    (void)kind;
    memset(buf, 0, count * sizeof *v);
    for (size_t i = 0; i < count; i++) {
        uint64_t r = splitmix64(seed + i);
        v[i].value = (double)(r % 5);
        v[i].index = (int)((r >> 32) % 1000);
    }
}

/* ---- user-defined ops ------------------------------------------------- */

static void user_float_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const float *a = in;
    float *b = inout;
    for (int i = 0; i < *len; i++) b[i] += a[i];
}

static void user_vec4_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const float *a = in;
    float *b = inout;
    for (int i = 0; i < 4 * *len; i++) b[i] += a[i];
}

/* Keeps the left operand: associative, not commutative, so every rank
 * must end up with rank 0's buffer. */
static void user_int_first(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

/* ---- the matrix ------------------------------------------------------- */

typedef struct reduction_case {
    const char *name;
    MPI_Datatype type;
    MPI_Op op;
    size_t extent;           /* bytes per element of type */
    fill_fn fill;
    int kinds;               /* enum value_kind bits to run */
    enum sum_shape shape;    /* SUM on MPI_FLOAT/MPI_DOUBLE: may be eligible */
    enum compare_kind compare;
    size_t max_count;
    int in_quick;
    size_t device_max_count;   /* -d: its largest count, 0 to leave it out */
} reduction_case;

typedef struct test_comm {
    const char *label;
    MPI_Comm comm;
    int is_inter;
    int size;                /* local group size */
    int owned;               /* created here, freed at the end */
} test_comm;

static const size_t COUNTS[] = {0, 1, 7, 1000, 8191, 8192, 16383, 16384, 65537, 262144, 1048576};
static const size_t QUICK_COUNTS[] = {1, 1000, 65537};
static const size_t DEVICE_COUNTS[] = {1, 7, 1000, 8192, 65537, 1048576, 4194304, 16777216};

/* -d: where the call under test's buffers live.  HOST is the plain call;
 * in place, the one buffer is on the device for every other placement. */
enum placement { PLACE_HOST, PLACE_DEVICE, PLACE_SEND_HOST, PLACE_RECV_HOST };
static const char *const PLACEMENT_NAME[] = {"", " device", " send-host/recv-device", " send-device/recv-host"};

typedef struct run_state {
    int world_rank, world_size;
    int tolerant;
    int passthrough_only;
    int quick;
    int nonblocking;   /* -n: the calls under test are MPI_Iallreduce + MPI_Wait */
    int device;        /* -d: the calls under test take device buffers */
    unsigned char *dev_send, *dev_recv;   /* -d: buf_bytes each */
    enum placement placement;             /* the call under test's, for describe_failure */
    size_t max_count;
    unsigned long long min_bytes;   /* STARCOLL_MIN_BYTES as the library reads it */
    unsigned char *send, *recv, *ref, *send_copy;
    size_t buf_bytes;
    unsigned char *outcome;         /* enum outcome per check, in the same order on all ranks */
    int *check_comm;                /* which test_comm each check belongs to */
    size_t nchecks, cap_checks;
    unsigned long long eligible_calls, passthrough_calls;
    int details_printed;
} run_state;

/* Parse a size with optional K/M/G suffix (powers of 1024), as DESIGN.md
 * specifies STARCOLL_MIN_BYTES.  Returns 0 on success. */
static int parse_size(const char *s, unsigned long long *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return -1;
    if (shift && v > (~0ull >> shift)) return -1;
    *out = v << shift;
    return 0;
}

static unsigned long long min_bytes_from_env(void)
{
    unsigned long long v = 256;   /* the library's default, also its fallback for bad values */
    const char *s = getenv("STARCOLL_MIN_BYTES");
    if (s && parse_size(s, &v) != 0) v = 256;
    return v;
}

static int call_is_eligible(const run_state *st, const reduction_case *c, const test_comm *tc, size_t count)
{
    /* An empty call has nothing to reshape: the library passes it through. */
    return c->shape != SHAPE_OTHER && !tc->is_inter && tc->size >= 2 && count > 0 &&
           (unsigned long long)count * c->extent >= st->min_bytes;
}

static void record_check(run_state *st, int comm_index, enum outcome result)
{
    if (st->nchecks == st->cap_checks) {
        size_t cap = st->cap_checks ? 2 * st->cap_checks : 1024;
        unsigned char *f = realloc(st->outcome, cap);
        if (f) st->outcome = f;
        int *cc = realloc(st->check_comm, cap * sizeof *cc);
        if (cc) st->check_comm = cc;
        if (!f || !cc) {
            fprintf(stderr, "mpi_exact: out of memory recording checks\n");
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
        st->cap_checks = cap;
    }
    st->outcome[st->nchecks] = (unsigned char)result;
    st->check_comm[st->nchecks] = comm_index;
    st->nchecks++;
}

static void describe_failure(run_state *st, const test_comm *tc, const reduction_case *c, size_t count,
                             int in_place, enum value_kind kind, const char *what, size_t elem)
{
    if (st->details_printed >= MAX_DETAILS) return;
    st->details_printed++;
    printf("rank %d: FAIL %s %s count=%zu%s%s %s values: %s", st->world_rank, tc->label, c->name, count,
           in_place ? " in-place" : "", PLACEMENT_NAME[st->placement], kind == VAL_INTEGER ? "integer" : "random", what);
    if (elem != (size_t)-1) {
        printf(" at element %zu", elem);
        if (c->shape == SHAPE_FLOAT_SUM || c->type == MPI_FLOAT) {
            float g, r;
            memcpy(&g, st->recv + elem * 4, 4);
            memcpy(&r, st->ref + elem * 4, 4);
            printf(": got %.9g, PMPI gave %.9g", g, r);
        } else if (c->shape == SHAPE_DOUBLE_SUM || c->type == MPI_DOUBLE) {
            double g, r;
            memcpy(&g, st->recv + elem * 8, 8);
            memcpy(&r, st->ref + elem * 8, 8);
            printf(": got %.17g, PMPI gave %.17g", g, r);
        }
    }
    printf("\n");
    fflush(stdout);
}

/* First element where recv and ref differ, or -1. */
static size_t first_difference(const run_state *st, const reduction_case *c, size_t count)
{
    if (c->compare == CMP_DOUBLE_INT) {
        const double_int *g = (const double_int *)st->recv, *r = (const double_int *)st->ref;
        for (size_t i = 0; i < count; i++)
            if (memcmp(&g[i].value, &r[i].value, sizeof g[i].value) || g[i].index != r[i].index) return i;
        return (size_t)-1;
    }
    size_t bytes = count * c->extent;
    if (memcmp(st->recv, st->ref, bytes) == 0) return (size_t)-1;
    for (size_t i = 0; i < count; i++)
        if (memcmp(st->recv + i * c->extent, st->ref + i * c->extent, c->extent)) return i;
    return (size_t)-1;
}

static size_t first_out_of_tolerance(const run_state *st, const reduction_case *c, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        double g, r, tol;
        if (c->shape == SHAPE_FLOAT_SUM) {
            float gf, rf;
            memcpy(&gf, st->recv + i * 4, 4);
            memcpy(&rf, st->ref + i * 4, 4);
            g = gf, r = rf, tol = FLOAT_REL_TOL;
        } else {
            memcpy(&g, st->recv + i * 8, 8);
            memcpy(&r, st->ref + i * 8, 8);
            tol = DOUBLE_REL_TOL;
        }
        if (!(fabs(g - r) <= tol * fabs(r))) return i;
    }
    return (size_t)-1;
}

/* FNV-1a over the result, to see whether all ranks hold the same bits. */
static uint64_t result_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static int ranks_agree(const run_state *st, MPI_Comm comm, size_t bytes)
{
    uint64_t h = result_hash(st->recv, bytes), v[2] = {h, ~h}, r[2];
    if (PMPI_Allreduce(v, r, 2, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) return 0;
    return r[0] == h && r[1] == ~h;
}

/* A copy to or from device memory that failed leaves nothing to check. */
static void device_copy(int rc, const char *direction)
{
    if (rc == 0) return;
    fprintf(stderr, "mpi_exact: a copy %s device memory failed\n", direction);
    PMPI_Abort(MPI_COMM_WORLD, 2);
}

/* One call under test, its buffers placed as place says, and its reference. */
static enum outcome run_check(run_state *st, const test_comm *tc, const reduction_case *c, size_t count,
                     int in_place, enum placement place, enum value_kind kind, uint64_t seed)
{
    size_t bytes = count * c->extent;
    int eligible = call_is_eligible(st, c, tc, count);
    int fail = 0;

    c->fill(st->send, count, seed, kind);
    memcpy(st->send_copy, st->send, bytes);
    if (in_place) {
        memcpy(st->recv, st->send, bytes);
        memcpy(st->ref, st->send, bytes);
    } else {
        memset(st->recv, GUARD_BYTE, bytes);
        memset(st->ref, GUARD_BYTE, bytes);
    }
    memset(st->recv + bytes, GUARD_BYTE, GUARD_BYTES);

    /* -d: the call under test's buffers on the device, as placed; the
     * host buffers keep the copies that are compared. */
    unsigned char *send = st->send, *recv = st->recv;
    st->placement = place;
    if (place != PLACE_HOST && (in_place || place != PLACE_RECV_HOST)) {
        recv = st->dev_recv;
        device_copy(devmem_write(recv, st->recv, bytes + GUARD_BYTES), "to");
    }
    if (place != PLACE_HOST && !in_place && place != PLACE_SEND_HOST) {
        send = st->dev_send;
        device_copy(devmem_write(send, st->send, bytes), "to");
    }

    int rc;
    if (st->nonblocking) {   /* -n: MPI_Iallreduce, completed by MPI_Wait */
        MPI_Request req = MPI_REQUEST_NULL;
        rc = MPI_Iallreduce(in_place ? MPI_IN_PLACE : send, recv, (int)count, c->type, c->op, tc->comm, &req);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)count, c->type, c->op, tc->comm);
    }
    if (recv != st->recv) device_copy(devmem_read(st->recv, recv, bytes + GUARD_BYTES), "from");
    if (send != st->send) device_copy(devmem_read(st->send, send, bytes), "from");
    /* The reference reduces the pristine copy, in case the call under
     * test wrote into its send buffer. */
    int rc_ref;
    if (st->nonblocking) {
        /* against PMPI_Iallreduce: Open MPI's nonblocking algorithm rounds
         * (and, for some integer types here, sums) differently from its
         * blocking one, with or without starcoll */
        MPI_Request req = MPI_REQUEST_NULL;
        rc_ref = PMPI_Iallreduce(in_place ? MPI_IN_PLACE : st->send_copy, st->ref, (int)count, c->type, c->op, tc->comm,
                                 &req);
        if (rc_ref == MPI_SUCCESS) rc_ref = PMPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        rc_ref = PMPI_Allreduce(in_place ? MPI_IN_PLACE : st->send_copy, st->ref, (int)count, c->type, c->op, tc->comm);
    }
    if (eligible) st->eligible_calls++;
    else st->passthrough_calls++;

    if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
        describe_failure(st, tc, c, count, in_place, kind, rc != MPI_SUCCESS ? "MPI_Allreduce returned an error" : "PMPI_Allreduce returned an error", (size_t)-1);
        return FAILED;
    }
    /* The tolerant modes may return other rounds' sums: nothing to compare
     * (and no rank agreement to ask for) on a call that may be eligible. */
    int maybe_eligible = c->shape != SHAPE_OTHER && !tc->is_inter && tc->size >= 2;
    if (st->passthrough_only && maybe_eligible) return NOT_COMPARED;
    if (!in_place && memcmp(st->send, st->send_copy, bytes)) {
        describe_failure(st, tc, c, count, in_place, kind, "the send buffer was modified", (size_t)-1);
        fail = 1;
    }
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (st->recv[bytes + i] != GUARD_BYTE) {
            describe_failure(st, tc, c, count, in_place, kind, "bytes written past the end of the result", (size_t)-1);
            fail = 1;
            break;
        }
    int tolerant = eligible && kind == VAL_RANDOM && st->tolerant;
    size_t bad = tolerant ? first_out_of_tolerance(st, c, count) : first_difference(st, c, count);
    if (bad != (size_t)-1) {
        describe_failure(st, tc, c, count, in_place, kind,
                         tolerant ? "outside the relative tolerance of PMPI's result" : "not bitwise equal to PMPI's result", bad);
        fail = 1;
    }
    /* Whatever the rounding, every rank of the communicator must hold the
     * same bits (data-parallel replicas must not drift apart).  Checked
     * for every call that could be eligible on some rank, so all ranks
     * take part even when they disagree on STARCOLL_MIN_BYTES. */
    if (maybe_eligible && !ranks_agree(st, tc->comm, bytes)) {
        describe_failure(st, tc, c, count, in_place, kind, "ranks of the communicator hold different results", (size_t)-1);
        fail = 1;
    }
    return fail ? FAILED : PASSED;
}

/* ---- communicators ---------------------------------------------------- */

static int make_comms(const run_state *st, test_comm *tc)
{
    int n = 0, r = st->world_rank, size = st->world_size;
    tc[n++] = (test_comm){"world", MPI_COMM_WORLD, 0, size, 0};
    MPI_Comm c;
    MPI_CHECK(PMPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &c));
    tc[n++] = (test_comm){"parity-split", c, 0, 0, 1};
    if (!st->quick && !st->device) {
        MPI_CHECK(PMPI_Comm_dup(MPI_COMM_WORLD, &c));
        tc[n++] = (test_comm){"world-dup", c, 0, 0, 1};
        /* The last rank alone (size 1); the others in reversed order, so
         * comm ranks differ from world ranks. */
        MPI_CHECK(PMPI_Comm_split(MPI_COMM_WORLD, r == size - 1, -r, &c));
        tc[n++] = (test_comm){"lone-rank-split", c, 0, 0, 1};
        tc[n++] = (test_comm){"self", MPI_COMM_SELF, 0, 1, 0};
        if (size >= 2) {
            MPI_Comm half = tc[1].comm, inter;
            int remote_leader = r % 2 == 0 ? 1 : 0;
            MPI_CHECK(PMPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 77, &inter));
            tc[n++] = (test_comm){"parity-intercomm", inter, 1, 0, 1};
        }
    }
    for (int i = 0; i < n; i++) MPI_CHECK(PMPI_Comm_size(tc[i].comm, &tc[i].size));
    return n;
}

static void free_comms(test_comm *tc, int n)
{
    for (int i = n - 1; i >= 0; i--)
        if (tc[i].owned) MPI_CHECK(PMPI_Comm_free(&tc[i].comm));
}

/* ---- main ------------------------------------------------------------- */

/* The largest count a case runs: its own (-d: its device one), capped by -m. */
static size_t case_max_count(const run_state *st, const reduction_case *c)
{
    size_t n = st->device ? c->device_max_count : c->max_count;
    return n < st->max_count ? n : st->max_count;
}

static int parse_args(run_state *st, int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "tpqndm:")) != -1) {
        switch (opt) {
        case 'n': st->nonblocking = 1; break;
        case 'd': st->device = 1; break;
        case 't': st->tolerant = 1; break;
        case 'p': st->passthrough_only = 1; break;
        case 'q': st->quick = 1; break;
        case 'm': {
            unsigned long long v;
            if (parse_size(optarg, &v) != 0) return -1;
            st->max_count = (size_t)v;
            break;
        }
        default: return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    run_state st = {0};
    st.max_count = (size_t)-1;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(PMPI_Comm_rank(MPI_COMM_WORLD, &st.world_rank));
    MPI_CHECK(PMPI_Comm_size(MPI_COMM_WORLD, &st.world_size));
    if (parse_args(&st, argc, argv) != 0) {
        if (st.world_rank == 0) fprintf(stderr, "usage: mpi_exact [-t | -p] [-q] [-n] [-d] [-m MAX_COUNT]\n");
        MPI_CHECK(MPI_Finalize());
        return 2;
    }
    st.min_bytes = min_bytes_from_env();

    MPI_Datatype vec4;
    MPI_CHECK(PMPI_Type_contiguous(4, MPI_FLOAT, &vec4));
    MPI_CHECK(PMPI_Type_commit(&vec4));
    MPI_Op op_float_sum, op_vec4_sum, op_first;
    MPI_CHECK(PMPI_Op_create(user_float_sum, 1, &op_float_sum));
    MPI_CHECK(PMPI_Op_create(user_vec4_sum, 1, &op_vec4_sum));
    MPI_CHECK(PMPI_Op_create(user_int_first, 0, &op_first));

    const size_t M16 = 16777216, M1 = 1048576, K256 = 262144, SMALL = 65537;
    const reduction_case cases[] = {
        {"float SUM", MPI_FLOAT, MPI_SUM, 4, fill_float, VAL_INTEGER | VAL_RANDOM, SHAPE_FLOAT_SUM, CMP_BYTES, M1, 1, M16},
        {"double SUM", MPI_DOUBLE, MPI_SUM, 8, fill_double, VAL_INTEGER | VAL_RANDOM, SHAPE_DOUBLE_SUM, CMP_BYTES, M1, 1, M16},
        {"float MAX", MPI_FLOAT, MPI_MAX, 4, fill_float, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, K256, 1, 0},
        {"float MIN", MPI_FLOAT, MPI_MIN, 4, fill_float, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"float PROD", MPI_FLOAT, MPI_PROD, 4, fill_float, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"double MAX", MPI_DOUBLE, MPI_MAX, 8, fill_double, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"double MIN", MPI_DOUBLE, MPI_MIN, 8, fill_double, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"double PROD", MPI_DOUBLE, MPI_PROD, 8, fill_double, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, K256, 0, 0},
        {"int SUM", MPI_INT, MPI_SUM, sizeof(int), fill_int, VAL_INTEGER, SHAPE_OTHER, CMP_BYTES, K256, 1, 0},
        {"int PROD", MPI_INT, MPI_PROD, sizeof(int), fill_int, VAL_INTEGER, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"int MAX", MPI_INT, MPI_MAX, sizeof(int), fill_int, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, SMALL},
        {"int MIN", MPI_INT, MPI_MIN, sizeof(int), fill_int, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"int BAND", MPI_INT, MPI_BAND, sizeof(int), fill_int, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"int BOR", MPI_INT, MPI_BOR, sizeof(int), fill_int, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"int BXOR", MPI_INT, MPI_BXOR, sizeof(int), fill_int, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"uint64 SUM", MPI_UINT64_T, MPI_SUM, 8, fill_uint64, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"unsigned char SUM", MPI_UNSIGNED_CHAR, MPI_SUM, 1, fill_bytes, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, K256, 0, 0},
        {"byte BAND", MPI_BYTE, MPI_BAND, 1, fill_bytes, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"byte BOR", MPI_BYTE, MPI_BOR, 1, fill_bytes, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"byte BXOR", MPI_BYTE, MPI_BXOR, 1, fill_bytes, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, K256, 0, 0},
        {"contiguous 4xfloat user-sum", vec4, op_vec4_sum, 16, fill_vec4, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"float user-sum", MPI_FLOAT, op_float_sum, 4, fill_float, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, K256, 1, 0},
        {"int user-first (non-commutative)", MPI_INT, op_first, sizeof(int), fill_int, VAL_RANDOM, SHAPE_OTHER, CMP_BYTES, SMALL, 0, 0},
        {"double_int MAXLOC", MPI_DOUBLE_INT, MPI_MAXLOC, sizeof(double_int), fill_double_int, VAL_INTEGER, SHAPE_OTHER, CMP_DOUBLE_INT, SMALL, 0, SMALL},
        {"double_int MINLOC", MPI_DOUBLE_INT, MPI_MINLOC, sizeof(double_int), fill_double_int, VAL_INTEGER, SHAPE_OTHER, CMP_DOUBLE_INT, SMALL, 0, 0},
    };
    const size_t ncases = sizeof cases / sizeof cases[0];

    /* Buffers sized for the largest call, plus the guard. */
    size_t largest = 0;
    for (size_t i = 0; i < ncases; i++) {
        size_t n = case_max_count(&st, &cases[i]);
        if (n * cases[i].extent > largest) largest = n * cases[i].extent;
    }
    st.buf_bytes = largest + GUARD_BYTES;
    st.send = malloc(st.buf_bytes);
    st.recv = malloc(st.buf_bytes);
    st.ref = malloc(st.buf_bytes);
    st.send_copy = malloc(st.buf_bytes);
    if (!st.send || !st.recv || !st.ref || !st.send_copy) {
        fprintf(stderr, "mpi_exact: cannot allocate %zu bytes per buffer\n", st.buf_bytes);
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (st.device) {
        char why[256];
        if (devmem_open(why, sizeof why) != 0) {
            fprintf(stderr, "mpi_exact: -d: %s\n", why);
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
        st.dev_send = devmem_alloc(st.buf_bytes);
        st.dev_recv = devmem_alloc(st.buf_bytes);
        if (!st.dev_send || !st.dev_recv) {
            fprintf(stderr, "mpi_exact: -d: cannot allocate %zu bytes of device memory per buffer\n", st.buf_bytes);
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
    }

    test_comm comms[6];
    int ncomms = make_comms(&st, comms);

    const size_t *counts = st.device ? DEVICE_COUNTS : st.quick ? QUICK_COUNTS : COUNTS;
    size_t ncounts = st.device  ? sizeof DEVICE_COUNTS / sizeof DEVICE_COUNTS[0]
                     : st.quick ? sizeof QUICK_COUNTS / sizeof QUICK_COUNTS[0]
                                : sizeof COUNTS / sizeof COUNTS[0];
    /* -d: every device placement; in place, the one buffer on the device */
    const enum placement first_place = st.device ? PLACE_DEVICE : PLACE_HOST,
                         last_place = st.device ? PLACE_RECV_HOST : PLACE_HOST;
    uint64_t check_id = 0;
    for (int ci = 0; ci < ncomms; ci++) {
        for (size_t k = 0; k < ncases; k++) {
            const reduction_case *c = &cases[k];
            if (st.quick && !c->in_quick) continue;
            for (size_t n = 0; n < ncounts; n++) {
                size_t count = counts[n];
                if (count > case_max_count(&st, c)) continue;
                /* Small counts of the reshaped sums are where chunking
                 * breaks; other cases skip the threshold counts. */
                if (c->shape == SHAPE_OTHER && (count == 0 || count == 8191 || count == 8192 || count == 16383 || count == 16384))
                    continue;
                for (int in_place = 0; in_place <= 1; in_place++) {
                    if (in_place && comms[ci].is_inter) continue;   /* not allowed on intercommunicators */
                    for (enum placement place = first_place; place <= (in_place ? first_place : last_place); place++) {
                        for (int kind = VAL_INTEGER; kind <= VAL_RANDOM; kind <<= 1) {
                            if (!(c->kinds & kind)) continue;
                            uint64_t seed = splitmix64(++check_id * 0x10001ull + (uint64_t)st.world_rank * 0x9E3779B1ull);
                            record_check(&st, ci, run_check(&st, &comms[ci], c, count, in_place, place, (enum value_kind)kind,
                                                            seed << 20));
                        }
                    }
                }
            }
        }
    }

    /* Every rank ran the same sequence of checks; combine the outcomes. */
    unsigned long long n_local = st.nchecks, n_min, n_max;
    MPI_CHECK(PMPI_Allreduce(&n_local, &n_min, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
    MPI_CHECK(PMPI_Allreduce(&n_local, &n_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
    int sequence_ok = n_min == n_max;
    if (sequence_ok)
        MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, st.outcome, (int)st.nchecks, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD));
    unsigned long long calls[2] = {st.eligible_calls, st.passthrough_calls}, total[2];
    MPI_CHECK(PMPI_Reduce(calls, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    int my_failures = sc_mpi_failures, mpi_failures = 0;
    MPI_CHECK(PMPI_Reduce(&my_failures, &mpi_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));

    size_t passed = 0, failed = 0, not_compared = 0;
    if (st.world_rank == 0) {
        printf("mpi_exact: %d ranks, STARCOLL_MODE=%s STARCOLL_GROUP=%s, min_bytes=%llu, %s%s%s%s\n", st.world_size,
               getenv("STARCOLL_MODE") ? getenv("STARCOLL_MODE") : "(unset)",
               getenv("STARCOLL_GROUP") ? getenv("STARCOLL_GROUP") : "(unset)", st.min_bytes,
               st.passthrough_only ? "pass-through calls only, bitwise"
               : st.tolerant       ? "eligible sums of random values within tolerance"
                                   : "all results bitwise",
               st.quick ? ", quick" : "", st.device ? ", device buffers from " : "", st.device ? devmem_kind() : "");
        for (int ci = 0; ci < ncomms; ci++) {
            size_t n = 0, f = 0;
            for (size_t i = 0; i < st.nchecks; i++)
                if (st.check_comm[i] == ci && st.outcome[i] != NOT_COMPARED) n++, f += st.outcome[i] == FAILED;
            printf("  %-17s %4zu calls checked against PMPI, %zu failed\n", comms[ci].label, n, f);
        }
        for (size_t i = 0; i < st.nchecks; i++) {
            if (st.outcome[i] == PASSED) passed++;
            else if (st.outcome[i] == FAILED) failed++;
            else not_compared++;
        }
        if (not_compared) printf("  (%zu calls that may be eligible made but not compared)\n", not_compared);
        if (!sequence_ok) {
            printf("  ranks ran different numbers of checks (%llu to %llu)\n", n_min, n_max);
            failed++;
        }
        if (mpi_failures) {
            printf("  %d MPI calls of the test's own bookkeeping returned an error\n", mpi_failures);
            failed++;
        }
        printf("expect: eligible=%llu passthrough=%llu\n", total[0], total[1]);
        printf("%zu passed, %zu failed\n", passed, failed);
        fflush(stdout);
    }
    int any_failed = failed > 0;
    MPI_CHECK(PMPI_Bcast(&any_failed, 1, MPI_INT, 0, MPI_COMM_WORLD));

    free_comms(comms, ncomms);
    MPI_CHECK(PMPI_Op_free(&op_float_sum));
    MPI_CHECK(PMPI_Op_free(&op_vec4_sum));
    MPI_CHECK(PMPI_Op_free(&op_first));
    MPI_CHECK(PMPI_Type_free(&vec4));
    free(st.send), free(st.recv), free(st.ref), free(st.send_copy);
    devmem_free(st.dev_send), devmem_free(st.dev_recv);
    free(st.outcome), free(st.check_comm);
    MPI_CHECK(MPI_Finalize());
    return any_failed ? 1 : 0;
}
