/* A multilayer perceptron for the training benchmark: ReLU hidden layers,
 * softmax output, mean cross-entropy loss, SGD with optional momentum.
 * Each weight layer's parameters (weights out x in, row-major, then the out
 * biases) form one flat float array, so a layer's gradient is one buffer for
 * one MPI_Allreduce.  Plain C, no MPI. */
#ifndef STARCOLL_TRAIN_MLP_H
#define STARCOLL_TRAIN_MLP_H

#include <stddef.h>
#include <stdint.h>

#define TRAIN_MLP_MAX_LAYERS 16

typedef struct train_mlp {
    int nlayers;                          /* weight layers */
    int sizes[TRAIN_MLP_MAX_LAYERS + 1];  /* units per layer, input first */
    size_t nparam[TRAIN_MLP_MAX_LAYERS];  /* parameters of each weight layer */
    float *param[TRAIN_MLP_MAX_LAYERS];
    float *velocity[TRAIN_MLP_MAX_LAYERS];
    int max_batch;                        /* rows the scratch below holds */
    float *act[TRAIN_MLP_MAX_LAYERS + 1]; /* activations, max_batch x sizes[l] */
    float *delta[TRAIN_MLP_MAX_LAYERS + 1];
} train_mlp;

/* Parse "64,128,10" into sizes (at most max entries, each 1..1000000);
 * returns the count (>= 2), or -1 on bad input. */
int train_mlp_parse_layers(const char *spec, int *sizes, int max);

/* Build a network with He-uniform weights from seed (identical on every
 * rank for the same seed) and zero biases.  0 on success, -1 on bad sizes
 * or memory (the network is then empty and safe to free). */
int train_mlp_init(train_mlp *m, const int *sizes, int nsizes, int max_batch, uint64_t seed);
void train_mlp_free(train_mlp *m);

/* Gradient of the mean cross-entropy over the batch rows x[idx[i]] (labels
 * y[idx[i]]), i < batch <= max_batch, written to grad[l][0..nparam[l]).
 * Returns the batch's mean loss. */
double train_mlp_gradient(train_mlp *m, const float *x, const int *y,
                          const int *idx, int batch, float *const *grad);

/* Mean cross-entropy over the batch rows, without touching gradients. */
double train_mlp_loss(train_mlp *m, const float *x, const int *y, const int *idx, int batch);

/* One SGD step: v = momentum * v + scale * g;  w -= lr * v. */
void train_mlp_apply(train_mlp *m, float *const *grad, float scale, float lr, float momentum);

/* Accuracy and mean cross-entropy over all n rows of x. */
void train_mlp_evaluate(train_mlp *m, const float *x, const int *y, int n,
                        double *accuracy, double *loss);

#endif
