/* Data for the training benchmark: the handwritten digits that Debian's
 * python3-sklearn ships (digits.csv.gz: 1797 rows of 64 pixel values 0..16
 * and a label 0..9 in the last column), a deterministic held-out split, and
 * the per-rank shards of the training part.  A deterministic synthetic set
 * of the same shape stands in only when the file cannot be found.
 * Plain C, no MPI. */
#ifndef STARCOLL_TRAIN_DATA_H
#define STARCOLL_TRAIN_DATA_H

#include <stddef.h>

typedef struct train_data {
    int n;          /* samples */
    int nfeat;      /* features per sample */
    int nclass;     /* classes: labels are 0..nclass-1 */
    float *x;       /* n * nfeat, scaled to [0, 1] */
    int *y;         /* n labels */
} train_data;

/* Where the digits come from when no path is given: the standard
 * locations of python3-sklearn's data folder.  Writes the first readable
 * path into buf and returns buf, or NULL when none exists. */
const char *train_data_find_digits(char *buf, size_t len);

/* Load a gzip'ed (or plain) CSV of numbers with the integer label in the
 * last column; features are divided by the largest feature value so they lie
 * in [0, 1].  0 on success, -1 with one line in err otherwise. */
int train_data_load_csv(const char *path, train_data *d, char *err, size_t errlen);

/* A deterministic stand-in of the digits' shape (n samples, 64 features,
 * 10 classes): noisy class prototypes, learnable to well over 90%. */
int train_data_synthetic(train_data *d, int n, unsigned long long seed);

void train_data_free(train_data *d);

/* Deterministic held-out split, independent of any run seed: about
 * test_frac of the samples (shuffled by a fixed seed) go to test, the rest to
 * train.  Both outputs own copies.  0 on success, -1 on bad input or memory. */
int train_data_split(const train_data *all, double test_frac,
                     train_data *train, train_data *test);

/* Indices of the training samples that rank `rank` of `nranks` trains on.
 * Even shards take every nranks-th sample; uneven shards give rank r a share
 * proportional to 2 + (r mod 3), so some ranks run out of data sooner.  The
 * shards are disjoint and cover all n samples.  *idx is malloc'ed (free it);
 * 0 on success, -1 on bad input or memory. */
int train_data_shard(int n, int rank, int nranks, int uneven, int **idx, int *count);

#endif
