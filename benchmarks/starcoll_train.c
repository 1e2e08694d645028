/* starcoll_train: time-to-accuracy benchmark.  An ordinary data-parallel
 * MPI training code (no starcoll API): every rank trains the same MLP on its
 * own shard of the handwritten digits, reduces each layer's gradient with
 * MPI_Allreduce (SUM of floats), divides by the world size and steps.  Rank
 * 0 evaluates on a held-out split every few steps and stops the run at the
 * target accuracy or a budget.  starcoll is meant to be LD_PRELOADed into it.
 *
 * How the stop reaches every rank (--stop-via flag, the default): one extra
 * float after the first layer's gradient carries a stop vote, and a rank
 * stops at the first step whose reduced buffer shows a vote.  Under plain MPI
 * every rank sees the vote at the same step; under a tolerant reduction each
 * rank sees it when the round holding it reaches it, so no collective forces
 * the ranks into lock-step.  --stop-via bcast is the textbook alternative
 * (an MPI_Bcast from rank 0 at every evaluation); it re-aligns all ranks'
 * step counts at every evaluation. */
#define _POSIX_C_SOURCE 200809L
#include "straggle.h"
#include "device_memory.h"
#include "train_data.h"
#include "train_mlp.h"
#include "train_opts.h"
#include "train_rng.h"
#include "tensor_list.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include "mpi_check.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEST_FRACTION 0.2

static int world_rank = 0;

/* One line on stderr from rank 0 only (every rank reaches the same error). */
static void error0(const char *fmt, ...)
{
    if (world_rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "starcoll_train: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void sleep_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int starcoll_preloaded(void)
{
    const char *pre = getenv("LD_PRELOAD");
    return pre && strstr(pre, "starcoll") != NULL;
}

/* The mode named in the last line when --mode-label is not given. */
static const char *default_mode_label(void)
{
    if (!starcoll_preloaded())
        return "none";
    const char *mode = getenv("STARCOLL_MODE");
    return mode && *mode ? mode : "auto";
}

/* Everything a rank owns during the run. */
typedef struct run_state {
    train_data all, train, test;
    train_mlp mlp;
    int *shard;
    int shard_count;
    int *batch_idx;
    float *grad[TRAIN_MLP_MAX_LAYERS];
    int grad_count[TRAIN_MLP_MAX_LAYERS];  /* floats sent per layer */
    void *dev_grad[TRAIN_MLP_MAX_LAYERS];  /* --device: where each layer's gradient is reduced */
    size_t stop_slot;                      /* index of the vote in grad[0] */
    /* --shape: the layers' gradients, last layer first, at the start of
     * one buffer reduced as a model's tensors (zeros past them) */
    float *flat;
    long shape_count[4096];
    int nshape;
    FILE *csv;
} run_state;

static void run_free(run_state *r)
{
    for (int l = 0; l < TRAIN_MLP_MAX_LAYERS; l++) {
        free(r->grad[l]);
        devmem_free(r->dev_grad[l]);
    }
    free(r->flat);
    train_mlp_free(&r->mlp);
    train_data_free(&r->all);
    train_data_free(&r->train);
    train_data_free(&r->test);
    free(r->shard);
    free(r->batch_idx);
    if (r->csv)
        fclose(r->csv);
}

/* Load the data; prints nothing, describes the source in `source`.  A path
 * given with --data must load; without one, a missing digits file means the
 * synthetic stand-in. */
static int load_data(const train_opts *o, run_state *r, char *source, size_t len,
                     char *err, size_t errlen)
{
    char path[1024];
    if (o->data[0]) {
        if (train_data_load_csv(o->data, &r->all, err, errlen) != 0)
            return -1;
        snprintf(source, len, "digits path=%s", o->data);
    } else if (train_data_find_digits(path, sizeof path)) {
        if (train_data_load_csv(path, &r->all, err, errlen) != 0)
            return -1;
        snprintf(source, len, "digits path=%s", path);
    } else {
        if (train_data_synthetic(&r->all, 1797, 12345) != 0) {
            snprintf(err, errlen, "out of memory building the synthetic data set");
            return -1;
        }
        snprintf(source, len, "SYNTHETIC (digits.csv.gz of python3-sklearn not found; "
                 "install python3-sklearn or give --data PATH)");
    }
    if (train_data_split(&r->all, TEST_FRACTION, &r->train, &r->test) != 0) {
        snprintf(err, errlen, "cannot split %d samples into training and held-out sets", r->all.n);
        return -1;
    }
    return 0;
}

/* Model, shard and gradient buffers.  -1 with err set on failure. */
static int build(const train_opts *o, int rank, int nranks, run_state *r,
                 char *err, size_t errlen)
{
    int sizes[TRAIN_MLP_MAX_LAYERS + 1];
    int nsizes = train_mlp_parse_layers(o->layers, sizes, TRAIN_MLP_MAX_LAYERS + 1);
    if (nsizes < 0) {
        snprintf(err, errlen, "--layers %s: expected 2 to %d comma-separated unit counts, e.g. %d,128,%d",
                 o->layers, TRAIN_MLP_MAX_LAYERS + 1, r->all.nfeat, r->all.nclass);
        return -1;
    }
    if (sizes[0] != r->all.nfeat || sizes[nsizes - 1] != r->all.nclass) {
        snprintf(err, errlen, "--layers %s: the data has %d features and %d classes, so the "
                 "first size must be %d and the last %d", o->layers, r->all.nfeat,
                 r->all.nclass, r->all.nfeat, r->all.nclass);
        return -1;
    }
    if (train_data_shard(r->train.n, rank, nranks, o->uneven, &r->shard, &r->shard_count) != 0) {
        snprintf(err, errlen, "cannot give each of %d ranks a share of %d training samples",
                 nranks, r->train.n);
        return -1;
    }
    int max_batch = o->batch > 256 ? o->batch : 256;  /* evaluation runs in chunks of this */
    r->batch_idx = malloc((size_t)o->batch * sizeof *r->batch_idx);
    if (!r->batch_idx || train_mlp_init(&r->mlp, sizes, nsizes, max_batch, o->seed) != 0) {
        snprintf(err, errlen, "out of memory building the model %s", o->layers);
        return -1;
    }
    size_t pad_floats = (o->pad_bytes + sizeof(float) - 1) / sizeof(float);
    r->stop_slot = r->mlp.nparam[0];
    for (int l = 0; l < r->mlp.nlayers; l++) {
        size_t need = r->mlp.nparam[l] + (l == 0 ? 1 : 0);
        size_t count = need > pad_floats ? need : pad_floats;
        if (count > (size_t)0x7fffffff) {
            snprintf(err, errlen, "--pad-bytes: %zu floats exceed one MPI count", count);
            return -1;
        }
        r->grad_count[l] = (int)count;
        r->grad[l] = calloc(count, sizeof(float));  /* the padding stays zero */
        if (!r->grad[l]) {
            snprintf(err, errlen, "out of memory for %zu-byte gradient buffers (--pad-bytes)",
                     count * sizeof(float));
            return -1;
        }
    }
    if (o->device) {
        if (o->shape[0]) {
            snprintf(err, errlen, "--device and --shape: choose one (--device reduces the layers' own buffers)");
            return -1;
        }
        char why[256];
        if (devmem_open(why, sizeof why) != 0) {
            snprintf(err, errlen, "--device: %s", why);
            return -1;
        }
        for (int l = 0; l < r->mlp.nlayers; l++)
            if (!(r->dev_grad[l] = devmem_alloc((size_t)r->grad_count[l] * sizeof(float)))) {
                snprintf(err, errlen, "--device: cannot allocate %zu bytes of device memory",
                         (size_t)r->grad_count[l] * sizeof(float));
                return -1;
            }
    }
    if (o->shape[0]) {
        if (o->pad_bytes) {
            snprintf(err, errlen, "--shape and --pad-bytes: choose one (both set the bytes a step reduces)");
            return -1;
        }
        r->nshape = tensor_list_read(o->shape, o->shape_scale, r->shape_count, 4096);
        if (r->nshape <= 0) {
            snprintf(err, errlen, "--shape %s: not a readable .tensors file of at most 4096 tensors", o->shape);
            return -1;
        }
        size_t total = 0, need = 0;
        for (int i = 0; i < r->nshape; i++) total += (size_t)r->shape_count[i];
        for (int l = 0; l < r->mlp.nlayers; l++) need += (size_t)r->grad_count[l];
        if (total < need) {
            snprintf(err, errlen, "--shape %s: its tensors hold %zu floats (after --shape-scale), fewer than the "
                     "MLP's %zu", o->shape, total, need);
            return -1;
        }
        if (!(r->flat = calloc(total, sizeof(float)))) {
            snprintf(err, errlen, "out of memory for the %zu-float --shape buffer", total);
            return -1;
        }
    }
    if (rank == 0 && o->csv[0]) {
        r->csv = fopen(o->csv, "w");
        if (!r->csv) {
            snprintf(err, errlen, "cannot write --csv %s: %s", o->csv, strerror(errno));
            return -1;
        }
        fprintf(r->csv, "time_s,step,accuracy,loss\n");
    }
    return 0;
}

/* --shape: the gradients, last layer first, into one buffer reduced
 * tensor by tensor in the model's backward order, and back. */
static void reduce_shaped(run_state *r)
{
    size_t off = 0;
    for (int l = r->mlp.nlayers - 1; l >= 0; l--) {
        memcpy(r->flat + off, r->grad[l], (size_t)r->grad_count[l] * sizeof(float));
        off += (size_t)r->grad_count[l];
    }
    off = 0;
    for (int i = 0; i < r->nshape; i++) {
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, r->flat + off, (int)r->shape_count[i], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        off += (size_t)r->shape_count[i];
    }
    off = 0;
    for (int l = r->mlp.nlayers - 1; l >= 0; l--) {
        memcpy(r->grad[l], r->flat + off, (size_t)r->grad_count[l] * sizeof(float));
        off += (size_t)r->grad_count[l];
    }
}

/* --device: as a CUDA-aware code, whose backward pass leaves each layer's
 * gradient in GPU memory and hands MPI that pointer: here the CPU's
 * gradient is copied there first, and the sum read back for the update. */
static void reduce_on_device(run_state *r)
{
    for (int l = r->mlp.nlayers - 1; l >= 0; l--) {
        size_t bytes = (size_t)r->grad_count[l] * sizeof(float);
        if (devmem_write(r->dev_grad[l], r->grad[l], bytes) != 0) {
            fprintf(stderr, "train: a copy to device memory failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, r->dev_grad[l], r->grad_count[l], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        if (devmem_read(r->grad[l], r->dev_grad[l], bytes) != 0) {
            fprintf(stderr, "train: a copy from device memory failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
}

/* Next batch of shard indices, reshuffling the shard at each epoch. */
static void next_batch(run_state *r, train_rng *rng, int batch, int *cursor)
{
    for (int b = 0; b < batch; b++) {
        if (*cursor == 0)
            train_rng_shuffle(rng, r->shard, r->shard_count);
        r->batch_idx[b] = r->shard[*cursor];
        *cursor = (*cursor + 1) % r->shard_count;
    }
}

static void csv_row(FILE *f, double t, long step, double acc, double loss)
{
    if (f) {
        fprintf(f, "%.4f,%ld,%.5f,%.5f\n", t, step, acc, loss);
        fflush(f);
    }
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));   /* errors come back as codes */
    int nranks;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    const int rank = world_rank;
    char err[1200] = "";

    train_opts o;
    if (train_opts_parse(argc, argv, &o, err, sizeof err) != 0) {
        error0("%s", err);
        MPI_CHECK(MPI_Finalize());
        return 2;
    }
    if (o.help) {
        if (rank == 0)
            train_opts_usage(argv[0]);
        MPI_CHECK(MPI_Finalize());
        return 0;
    }
    straggle st;
    if (straggle_parse(o.straggler, &st, err, sizeof err) != 0
        || straggle_check(&st, nranks, err, sizeof err) != 0) {
        error0("--straggler: %s", err);
        MPI_CHECK(MPI_Finalize());
        return 2;
    }
    if (o.uneven && o.stop_via == TRAIN_STOP_BCAST) {
        error0("--uneven needs --stop-via flag: with bcast every rank must reach every evaluation");
        MPI_CHECK(MPI_Finalize());
        return 2;
    }
    if (o.uneven && !starcoll_preloaded()) {
        error0("--uneven: ranks would end at different steps, which plain MPI_Allreduce "
               "cannot finish (it would hang); run it with libstarcoll.so preloaded");
        MPI_CHECK(MPI_Finalize());
        return 2;
    }

    /* Setup may fail on one rank only (memory, a file); agree before the
     * first collective of the training loop so nobody is left waiting. */
    run_state r;
    memset(&r, 0, sizeof r);
    char source[1200] = "";
    int failed = load_data(&o, &r, source, sizeof source, err, sizeof err) != 0
                 || build(&o, rank, nranks, &r, err, sizeof err) != 0;
    /* The lowest failing rank speaks for all (they usually fail alike). */
    int mine = failed ? rank : nranks, first_failed = nranks;
    MPI_CHECK(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (failed && rank == first_failed)
        fprintf(stderr, "starcoll_train: %s%s\n", rank == 0 ? "" : "on some ranks: ", err);
    if (first_failed < nranks) {
        run_free(&r);
        MPI_CHECK(MPI_Finalize());
        return 1;
    }

    const char *mode = o.mode_label[0] ? o.mode_label : default_mode_label();
    const char *scenario = o.scenario_label[0] ? o.scenario_label : straggle_pattern_name(st.pattern);
    long my_max_steps = o.max_steps;
    if (o.uneven) {
        /* A rank's budget follows its shard: the same number of epochs. */
        double mean = (double)r.train.n / nranks;
        my_max_steps = lround((double)o.max_steps * r.shard_count / mean);
        if (my_max_steps < 1)
            my_max_steps = 1;
    }
    size_t params = 0, bytes = 0;
    for (int l = 0; l < r.mlp.nlayers; l++) {
        params += r.mlp.nparam[l];
        bytes += (size_t)r.grad_count[l] * sizeof(float);
    }
    if (r.flat) {
        bytes = 0;
        for (int i = 0; i < r.nshape; i++) bytes += (size_t)r.shape_count[i] * sizeof(float);
    }
    if (rank == 0) {
        char desc[256];
        printf("train: data=%s samples=%d train=%d test=%d features=%d classes=%d\n",
               source, r.all.n, r.train.n, r.test.n, r.all.nfeat, r.all.nclass);
        printf("train: ranks=%d layers=%s params=%zu allreduce_bytes_per_step=%zu batch=%d lr=%g "
               "momentum=%g compute_ms=%g straggler=%s target=%g eval_every=%d stop_via=%s%s%s\n",
               nranks, o.layers, params, bytes, o.batch, o.lr, o.momentum, o.compute_ms,
               straggle_describe(&st, desc, sizeof desc), o.target, o.eval_every,
               o.stop_via == TRAIN_STOP_FLAG ? "flag" : "bcast", o.uneven ? " uneven" : "",
               o.device ? " gradients_in=device" : "");
        fflush(stdout);
    }

    double acc = 0, loss = 0;
    if (rank == 0) {
        train_mlp_evaluate(&r.mlp, r.test.x, r.test.y, r.test.n, &acc, &loss);
        csv_row(r.csv, 0.0, 0, acc, loss);
    }
    train_rng rng;
    train_rng_seed(&rng, o.seed * 1000003ULL + (unsigned long long)rank);
    int cursor = 0;
    const double base_s = o.compute_ms * 1e-3;
    const float scale = 1.0f / (float)nranks;
    double tta = NAN;
    long step = 0, last_eval = 0;
    int want_stop = 0, stop = 0;

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    while (!stop) {
        next_batch(&r, &rng, o.batch, &cursor);
        train_mlp_gradient(&r.mlp, r.train.x, r.train.y, r.batch_idx, o.batch, r.grad);
        sleep_s(base_s + straggle_delay_s(&st, rank, nranks, step, base_s));
        if (step + 1 >= my_max_steps)
            want_stop = 1;
        r.grad[0][r.stop_slot] = want_stop ? 1.0f : 0.0f;
        /* Backpropagation order: last layer first, as frameworks do. */
        if (r.flat)
            reduce_shaped(&r);
        else if (o.device)
            reduce_on_device(&r);
        else
            for (int l = r.mlp.nlayers - 1; l >= 0; l--)
                MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, r.grad[l], r.grad_count[l], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        train_mlp_apply(&r.mlp, r.grad, scale, (float)o.lr, (float)o.momentum);
        step++;
        if (o.stop_via == TRAIN_STOP_FLAG && r.grad[0][r.stop_slot] > 0.5f)
            stop = 1;
        if (step % o.eval_every == 0) {
            if (rank == 0) {
                double t = MPI_Wtime() - t0;
                train_mlp_evaluate(&r.mlp, r.test.x, r.test.y, r.test.n, &acc, &loss);
                csv_row(r.csv, t, step, acc, loss);
                last_eval = step;
                if (acc >= o.target && isnan(tta))
                    tta = t;
                if (acc >= o.target || t >= o.max_seconds)
                    want_stop = 1;
                if (o.verbose)
                    fprintf(stderr, "train: t=%.2fs step=%ld acc=%.4f loss=%.4f\n", t, step, acc, loss);
            }
            if (o.stop_via == TRAIN_STOP_BCAST) {
                int flag = want_stop;
                MPI_CHECK(MPI_Bcast(&flag, 1, MPI_INT, 0, MPI_COMM_WORLD));
                stop = stop || flag;
            }
        }
        if (o.stop_via == TRAIN_STOP_BCAST && step >= my_max_steps)
            stop = 1;
    }
    double end = MPI_Wtime() - t0;
    if (o.verbose)
        fprintf(stderr, "train: rank %d stopped after %ld steps at %.2fs\n", rank, step, end);
    if (rank == 0) {
        /* The final model counts as one more evaluation. */
        train_mlp_evaluate(&r.mlp, r.test.x, r.test.y, r.test.n, &acc, &loss);
        if (last_eval != step)
            csv_row(r.csv, end, step, acc, loss);
        if (acc >= o.target && isnan(tta))
            tta = end;
        char tta_text[32];
        if (isnan(tta))
            snprintf(tta_text, sizeof tta_text, "nan");
        else
            snprintf(tta_text, sizeof tta_text, "%.3f", tta);
        printf("train: elapsed_s=%.3f steps_per_s=%.2f rank0_steps=%ld\n", end,
               end > 0 ? step / end : 0.0, step);
        printf("train: mode=%s scenario=%s ranks=%d tta_s=%s final_acc=%.4f steps=%ld\n",
               mode, scenario, nranks, tta_text, acc, step);
        fflush(stdout);
    }
    run_free(&r);
    int failures = sc_mpi_failures;
    MPI_CHECK(MPI_Finalize());
    if (failures) fprintf(stderr, "train: rank %d: %d MPI calls returned an error\n", rank, failures);
    return failures ? 1 : 0;
}
