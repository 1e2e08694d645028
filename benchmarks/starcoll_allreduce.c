/* starcoll_allreduce: an OSU-style MPI_Allreduce latency benchmark with
 * straggler emulation.  A plain MPI program with no starcoll API, so it
 * measures the same thing with or without libstarcoll.so preloaded.
 *
 * Options and columns follow OSU's osu_allreduce (-m -i -x -f -c -h), plus
 * -T float|double (a char SUM is never eligible for starcoll), and
 * --compute-ms / --straggler to emulate a training step before each call.
 * Only the MPI_Allreduce call is timed, never the emulated compute. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, for --host-mapped */
#define _POSIX_C_SOURCE 200809L

#include "straggle.h"
#include "device_memory.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include "mpi_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define FIELD_WIDTH 18
#define FLOAT_PRECISION 2
#define LARGE_MESSAGE 8192          /* OSU's switch to fewer iterations */
#define MAX_MESSAGE (1L << 30)      /* largest -m accepted */
#define EXIT_USAGE 2

typedef struct bench_options {
    long min_bytes, max_bytes;
    long iters, iters_large;        /* timed iterations below / from LARGE_MESSAGE */
    long warmup, warmup_large;
    int full_stats;
    int validate;
    MPI_Datatype type;
    size_t type_size;
    const char *type_name;
    double compute_s;               /* emulated compute slept by every rank per call */
    straggle straggler;
    int barrier;                    /* barrier between iterations, as OSU does */
    int device;                     /* buffers in GPU memory (device_memory.h), as osu_allreduce -d cuda */
    int cuda_loaded;                /* host buffers in a process that has loaded CUDA and made a context */
    int host_mapped;                /* host buffers in pages of their own (mmap), not the heap */
} bench_options;

static void short_usage(FILE *out, const char *prog)
{
    fprintf(out, "usage: %s [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-T float|double]\n"
                 "       [--compute-ms MS] [--straggler SPEC] [--barrier|--no-barrier] [--device | --cuda-loaded]\n"
                 "       [--host-mapped]\n"
                 "       (-h for details)\n", prog);
}

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
        "usage: %s [options]\n"
        "  -m, --message-size [MIN:]MAX  message sizes in bytes, doubling from MIN to MAX\n"
        "                                (suffixes K, M, G; default 4:1048576, MAX up to 1G)\n"
        "  -i, --iterations N            timed iterations per size (default 1000, 100 from 8K)\n"
        "  -x, --warmup N                untimed warm-up iterations (default 200, 10 from 8K)\n"
        "  -f, --full                    also print min and max latency and iterations\n"
        "  -c, --validation              check every result against the exact sum (Pass/Fail)\n"
        "  -T, --type float|double       element type reduced with MPI_SUM (default float)\n"
        "      --compute-ms MS           emulated compute every rank sleeps before each call (default 0)\n"
        "      --straggler SPEC          extra sleep before each call, e.g. rank=3,ms=5 or\n"
        "                                persistent|jitter|burst|onset[,key=value...]; see straggle.h;\n"
        "                                steps count from 0 at each size's first warm-up call\n"
        "      --barrier, --no-barrier   barrier between iterations (default: yes, as OSU does,\n"
        "                                unless --compute-ms or --straggler emulate a training loop)\n"
        "      --device                  send and receive buffers in GPU memory (cudaMalloc), filled\n"
        "                                and checked by copies outside the timed call\n"
        "      --cuda-loaded             host buffers, in a process that has loaded CUDA and made a\n"
        "                                context first (what telling device buffers apart costs)\n"
        "      --host-mapped             host buffers in pages of their own (mmap), as large arrays are,\n"
        "                                where starcoll asks the CUDA driver about them; by default\n"
        "                                they come from malloc, in the heap up to glibc's threshold\n"
        "  -h, --help                    this help\n"
        "Only MPI_Allreduce is timed; latency is the per-rank mean, then avg/min/max over ranks.\n",
        prog);
}

/* A byte count with optional K/M/G suffix (powers of 1024). */
static int parse_bytes(const char *s, long *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    long v = strtol(s, &end, 10);
    if (end == s || errno == ERANGE)
        return -1;
    long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1L << 10;
    else if (*end == 'M' || *end == 'm')
        mult = 1L << 20;
    else if (*end == 'G' || *end == 'g')
        mult = 1L << 30;
    if (mult != 1)
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || v > LONG_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

static int parse_count(const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < min || v > INT_MAX)
        return -1;
    *out = v;
    return 0;
}

enum { OPT_STRAGGLER = 256, OPT_COMPUTE_MS, OPT_BARRIER, OPT_NO_BARRIER, OPT_DEVICE, OPT_CUDA_LOADED, OPT_HOST_MAPPED };

/* Parse argv into o; 0 on success, 1 for -h, -1 with a message in err. */
static int parse_options(int argc, char **argv, bench_options *o, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        { "message-size", required_argument, NULL, 'm' },
        { "iterations", required_argument, NULL, 'i' },
        { "warmup", required_argument, NULL, 'x' },
        { "full", no_argument, NULL, 'f' },
        { "validation", no_argument, NULL, 'c' },
        { "type", required_argument, NULL, 'T' },
        { "help", no_argument, NULL, 'h' },
        { "straggler", required_argument, NULL, OPT_STRAGGLER },
        { "compute-ms", required_argument, NULL, OPT_COMPUTE_MS },
        { "barrier", no_argument, NULL, OPT_BARRIER },
        { "no-barrier", no_argument, NULL, OPT_NO_BARRIER },
        { "device", no_argument, NULL, OPT_DEVICE },
        { "cuda-loaded", no_argument, NULL, OPT_CUDA_LOADED },
        { "host-mapped", no_argument, NULL, OPT_HOST_MAPPED },
        { NULL, 0, NULL, 0 }
    };
    memset(o, 0, sizeof *o);
    o->min_bytes = 4;
    o->max_bytes = 1L << 20;
    o->iters = 1000;
    o->iters_large = 100;
    o->warmup = 200;
    o->warmup_large = 10;
    o->type = MPI_FLOAT;
    o->type_size = sizeof(float);
    o->type_name = "float";
    o->barrier = -1;
    straggle_parse(NULL, &o->straggler, NULL, 0);

    opterr = 0;   /* our own messages, from rank 0 only */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":m:i:x:fcT:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': {
            const char *colon = strchr(optarg, ':');
            int ok;
            if (colon) {
                char min[64];
                size_t n = (size_t)(colon - optarg);
                ok = n < sizeof min;
                if (ok) {
                    memcpy(min, optarg, n);
                    min[n] = '\0';
                    ok = parse_bytes(min, &o->min_bytes) == 0 && parse_bytes(colon + 1, &o->max_bytes) == 0;
                }
            } else {
                ok = parse_bytes(optarg, &o->max_bytes) == 0;
            }
            if (!ok || o->min_bytes < 1 || o->max_bytes < o->min_bytes || o->max_bytes > MAX_MESSAGE) {
                snprintf(err, errlen, "-m %s: expected [MIN:]MAX in bytes with 1 <= MIN <= MAX <= 1G (suffixes K, M, G)", optarg);
                return -1;
            }
            break;
        }
        case 'i':
            if (parse_count(optarg, 1, &o->iters) != 0) {
                snprintf(err, errlen, "-i %s: expected a number of iterations >= 1", optarg);
                return -1;
            }
            o->iters_large = o->iters;
            break;
        case 'x':
            if (parse_count(optarg, 0, &o->warmup) != 0) {
                snprintf(err, errlen, "-x %s: expected a number of warm-up iterations >= 0", optarg);
                return -1;
            }
            o->warmup_large = o->warmup;
            break;
        case 'f':
            o->full_stats = 1;
            break;
        case 'c':
            o->validate = 1;
            break;
        case 'T':
            if (strcmp(optarg, "float") == 0) {
                o->type = MPI_FLOAT;
                o->type_size = sizeof(float);
                o->type_name = "float";
            } else if (strcmp(optarg, "double") == 0) {
                o->type = MPI_DOUBLE;
                o->type_size = sizeof(double);
                o->type_name = "double";
            } else {
                snprintf(err, errlen, "-T %s: expected float or double", optarg);
                return -1;
            }
            break;
        case OPT_STRAGGLER:
            if (straggle_parse(optarg, &o->straggler, err, errlen) != 0)
                return -1;
            break;
        case OPT_COMPUTE_MS: {
            char *end;
            errno = 0;
            double ms = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno == ERANGE || !isfinite(ms) || ms < 0 || ms > 3.6e6) {
                snprintf(err, errlen, "--compute-ms %s: expected milliseconds between 0 and 3600000", optarg);
                return -1;
            }
            o->compute_s = ms * 1e-3;
            break;
        }
        case OPT_BARRIER:
            o->barrier = 1;
            break;
        case OPT_NO_BARRIER:
            o->barrier = 0;
            break;
        case OPT_DEVICE:
            o->device = 1;
            break;
        case OPT_CUDA_LOADED:
            o->cuda_loaded = 1;
            break;
        case OPT_HOST_MAPPED:
            o->host_mapped = 1;
            break;
        case 'h':
            return 1;
        case ':':
            snprintf(err, errlen, "option %s needs a value", argv[optind - 1]);
            return -1;
        default:
            snprintf(err, errlen, "unknown option %s", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    /* A barrier per iteration suits a latency test, but in an emulated
     * training loop it would hide the waiting a straggler causes. */
    if (o->barrier < 0)
        o->barrier = o->compute_s == 0 && o->straggler.pattern == STRAGGLE_NONE;
    return 0;
}

static void sleep_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Validation inputs: small integers, so float sums stay exact for any
 * realistic rank count, varying with rank, element and iteration. */
static long rank_weight(int rank) { return rank % 13 + 1; }
static long element_value(size_t j, long iter) { return (long)((j + (size_t)iter) % 7) + 1; }

static void fill_send(void *buf, const bench_options *o, size_t count, int rank, long iter)
{
    long w = o->validate ? rank_weight(rank) : 1;
    for (size_t j = 0; j < count; j++) {
        long v = o->validate ? w * element_value(j, iter) : 1;
        if (o->type == MPI_FLOAT)
            ((float *)buf)[j] = (float)v;
        else
            ((double *)buf)[j] = (double)v;
    }
}

/* 1 when every element is the exact sum over ranks. */
static int check_recv(const void *buf, const bench_options *o, size_t count, long weight_sum, long iter)
{
    for (size_t j = 0; j < count; j++) {
        double want = (double)(weight_sum * element_value(j, iter));
        double got = o->type == MPI_FLOAT ? (double)((const float *)buf)[j] : ((const double *)buf)[j];
        if (got != want)
            return 0;
    }
    return 1;
}

static void print_header(const bench_options *o, int nranks)
{
    char spec[256];
    printf("# starcoll allreduce benchmark\n");
    printf("# ranks %d, type %s, op sum, compute %g ms, straggler %s, iteration barrier %s, buffers %s%s\n",
           nranks, o->type_name, o->compute_s * 1e3,
           straggle_describe(&o->straggler, spec, sizeof spec), o->barrier ? "yes" : "no",
           o->device ? devmem_kind() : o->cuda_loaded ? "host, CUDA loaded" : "host",
           o->host_mapped ? " (mmap'ed)" : "");
    printf("%-*s%*s", 10, "# Size", FIELD_WIDTH, "Avg Latency(us)");
    if (o->full_stats)
        printf("%*s%*s%*s", FIELD_WIDTH, "Min Latency(us)", FIELD_WIDTH, "Max Latency(us)", 12, "Iterations");
    if (o->validate)
        printf("%*s", 12, "Validation");
    printf("\n");
    fflush(stdout);
}

/* Host buffers: malloc's, or with --host-mapped pages of their own. */
static void *host_alloc(const bench_options *o, size_t bytes)
{
    if (!o->host_mapped) return malloc(bytes);
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void host_free(const bench_options *o, void *p, size_t bytes)
{
    if (!o->host_mapped) free(p);
    else if (p) munmap(p, bytes ? bytes : 1);
}

/* Runs one message size; returns 0, or -1 if any rank could not allocate. */
static int run_size(const bench_options *o, long bytes, int rank, int nranks, long weight_sum)
{
    size_t count = (size_t)bytes / o->type_size;
    long iters = bytes < LARGE_MESSAGE ? o->iters : o->iters_large;
    long warmup = bytes < LARGE_MESSAGE ? o->warmup : o->warmup_large;
    size_t nb = count * o->type_size;
    void *send = host_alloc(o, nb), *recv = host_alloc(o, nb);
    /* --device: the call reduces GPU buffers; the host ones are filled and
     * checked, with copies outside the timed call */
    void *dsend = o->device ? devmem_alloc(nb) : send, *drecv = o->device ? devmem_alloc(nb) : recv;
    int ok = send && recv && dsend && drecv, all_ok = 0;
    MPI_CHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr, "starcoll_allreduce: cannot allocate 2 x %ld bytes%s on some rank; stopping\n", bytes,
                    o->device ? " of device memory" : "");
        if (o->device) {
            devmem_free(dsend);
            devmem_free(drecv);
        }
        host_free(o, send, nb);
        host_free(o, recv, nb);
        return -1;
    }
    fill_send(send, o, count, rank, 0);
    memset(recv, 0, nb);
    int copies_ok = !o->device || (devmem_write(dsend, send, nb) == 0 && devmem_write(drecv, recv, nb) == 0);

    double timer = 0;
    int valid = 1;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (long i = 0; i < warmup + iters; i++) {
        if (o->validate) {
            fill_send(send, o, count, rank, i);
            if (o->device) copies_ok &= devmem_write(dsend, send, nb) == 0;
        }
        sleep_s(o->compute_s + straggle_delay_s(&o->straggler, rank, nranks, i, o->compute_s));
        double t0 = MPI_Wtime();
        MPI_CHECK(MPI_Allreduce(dsend, drecv, (int)count, o->type, MPI_SUM, MPI_COMM_WORLD));
        double t1 = MPI_Wtime();
        if (i >= warmup)
            timer += t1 - t0;
        if (o->validate) {
            if (o->device) copies_ok &= devmem_read(recv, drecv, nb) == 0;
            valid &= check_recv(recv, o, count, weight_sum, i);
        }
        if (o->barrier)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (!copies_ok) {
        fprintf(stderr, "starcoll_allreduce: rank %d: a copy between host and device memory failed\n", rank);
        valid = 0;
    }
    if (o->device) {
        devmem_free(dsend);
        devmem_free(drecv);
    }
    host_free(o, send, nb);
    host_free(o, recv, nb);

    double latency = timer * 1e6 / (double)iters, lmin, lmax, lsum;
    MPI_CHECK(MPI_Reduce(&latency, &lmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(&latency, &lmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(&latency, &lsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    int all_valid = 1;
    if (o->validate)
        MPI_CHECK(MPI_Reduce(&valid, &all_valid, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD));

    if (rank == 0) {
        printf("%-*ld%*.*f", 10, bytes, FIELD_WIDTH, FLOAT_PRECISION, lsum / nranks);
        if (o->full_stats)
            printf("%*.*f%*.*f%*ld", FIELD_WIDTH, FLOAT_PRECISION, lmin,
                   FIELD_WIDTH, FLOAT_PRECISION, lmax, 12, iters);
        if (o->validate)
            printf("%*s", 12, all_valid ? "Pass" : "Fail");
        printf("\n");
        fflush(stdout);
    }
    return o->validate && !all_valid ? 1 : 0;
}

/* Untimed settling before the first size: right after start-up the
 * launcher and MPI's own threads still compete for the cores and would
 * inflate the first, shortest measurements.  Rank 0's clock decides when
 * it is over, so every rank leaves the loop at the same iteration. */
#define SETTLE_S 0.25

static void settle(const bench_options *o, int rank)
{
    double send[1] = { 1.0 }, recv[1];
    double start = MPI_Wtime();
    int more = 1;
    while (more) {
        MPI_CHECK(MPI_Allreduce(send, recv, 1, o->type, MPI_SUM, MPI_COMM_WORLD));
        if (rank == 0)
            more = MPI_Wtime() - start < SETTLE_S;
        MPI_CHECK(MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));   /* errors come back as codes */
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));

    /* Every rank parses the same argv, so all reach the same verdict
     * without communicating; only rank 0 speaks. */
    bench_options o;
    char err[512] = "";
    int rc = parse_options(argc, argv, &o, err, sizeof err);
    if (rc == 0 && straggle_check(&o.straggler, nranks, err, sizeof err) != 0)
        rc = -1;
    if (rc == 0 && o.device && o.cuda_loaded) {
        snprintf(err, sizeof err, "--device and --cuda-loaded: choose one");
        rc = -1;
    }
    if (rc == 0 && o.device && o.host_mapped) {
        snprintf(err, sizeof err, "--host-mapped is for host buffers, not --device");
        rc = -1;
    }
    void *context_holder = NULL;   /* --cuda-loaded: a byte of device memory makes the context */
    if (rc == 0 && (o.device || o.cuda_loaded)) {   /* every rank needs device memory: agreed, so none runs on alone */
        int mine = devmem_open(err, sizeof err) == 0, all = 0;
        if (mine && o.cuda_loaded && !(context_holder = devmem_alloc(1))) {
            snprintf(err, sizeof err, "--cuda-loaded: no device memory");
            mine = 0;
        }
        MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        if (!all) {
            if (mine) snprintf(err, sizeof err, "%s: some rank has no device memory", o.device ? "--device" : "--cuda-loaded");
            rc = -1;
        }
    }
    if (rc != 0) {
        if (rank == 0 && rc < 0) {
            fprintf(stderr, "starcoll_allreduce: %s\n", err);
            short_usage(stderr, argv[0]);
        } else if (rank == 0) {
            usage(stdout, argv[0]);
        }
        MPI_CHECK(MPI_Finalize());
        return rc < 0 ? EXIT_USAGE : 0;
    }

    long weight_sum = 0;
    for (int r = 0; r < nranks; r++)
        weight_sum += rank_weight(r);

    if (rank == 0)
        print_header(&o, nranks);
    settle(&o, rank);
    int failed = 0;
    for (long bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
        if ((size_t)bytes < o.type_size)
            continue;   /* smaller than one element, as OSU skips */
        int r = run_size(&o, bytes, rank, nranks, weight_sum);
        if (r < 0) {
            failed = 1;
            break;
        }
        failed |= r;
    }
    devmem_free(context_holder);
    int failures = sc_mpi_failures;
    MPI_CHECK(MPI_Finalize());
    if (failures) fprintf(stderr, "starcoll_allreduce: %d MPI calls returned an error\n", failures);
    return failed || failures ? 1 : 0;
}
