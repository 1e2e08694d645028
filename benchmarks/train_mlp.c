/* MLP forward, backward and update: see train_mlp.h. */
#include "train_mlp.h"
#include "train_rng.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int train_mlp_parse_layers(const char *spec, int *sizes, int max)
{
    if (!spec || !*spec)
        return -1;
    int n = 0;
    const char *p = spec;
    for (;;) {
        char *end;
        errno = 0;
        if (*p < '0' || *p > '9')
            return -1;
        long v = strtol(p, &end, 10);
        if (errno == ERANGE || v < 1 || v > 1000000 || n >= max)
            return -1;
        sizes[n++] = (int)v;
        if (*end == '\0')
            break;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
    return n >= 2 ? n : -1;
}

int train_mlp_init(train_mlp *m, const int *sizes, int nsizes, int max_batch, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    if (nsizes < 2 || nsizes > TRAIN_MLP_MAX_LAYERS + 1 || max_batch < 1)
        return -1;
    m->nlayers = nsizes - 1;
    m->max_batch = max_batch;
    for (int l = 0; l < nsizes; l++) {
        if (sizes[l] < 1)
            return -1;
        m->sizes[l] = sizes[l];
    }
    train_rng r;
    train_rng_seed(&r, seed);
    for (int l = 0; l < m->nlayers; l++) {
        size_t in = (size_t)sizes[l], out = (size_t)sizes[l + 1];
        m->nparam[l] = out * in + out;
        m->param[l] = calloc(m->nparam[l], sizeof(float));
        m->velocity[l] = calloc(m->nparam[l], sizeof(float));
        if (!m->param[l] || !m->velocity[l])
            goto fail;
        /* He-uniform: keeps ReLU activations at a steady scale. */
        double bound = sqrt(6.0 / (double)in);
        for (size_t i = 0; i < out * in; i++)
            m->param[l][i] = (float)((2.0 * train_rng_uniform(&r) - 1.0) * bound);
    }
    for (int l = 0; l < nsizes; l++) {
        m->act[l] = malloc((size_t)max_batch * sizes[l] * sizeof(float));
        m->delta[l] = malloc((size_t)max_batch * sizes[l] * sizeof(float));
        if (!m->act[l] || !m->delta[l])
            goto fail;
    }
    return 0;
fail:
    train_mlp_free(m);
    return -1;
}

void train_mlp_free(train_mlp *m)
{
    if (!m)
        return;
    for (int l = 0; l < TRAIN_MLP_MAX_LAYERS; l++) {
        free(m->param[l]);
        free(m->velocity[l]);
    }
    for (int l = 0; l <= TRAIN_MLP_MAX_LAYERS; l++) {
        free(m->act[l]);
        free(m->delta[l]);
    }
    memset(m, 0, sizeof *m);
}

/* Forward pass of rows x[idx[i]] (or x[i] when idx is NULL): fills act[],
 * the last layer holding softmax probabilities.  Returns the mean loss. */
static double forward(train_mlp *m, const float *x, const int *y, const int *idx, int batch)
{
    int in0 = m->sizes[0];
    for (int b = 0; b < batch; b++) {
        size_t row = idx ? (size_t)idx[b] : (size_t)b;
        memcpy(m->act[0] + (size_t)b * in0, x + row * in0, (size_t)in0 * sizeof(float));
    }
    for (int l = 0; l < m->nlayers; l++) {
        int in = m->sizes[l], out = m->sizes[l + 1];
        const float *w = m->param[l], *bias = w + (size_t)out * in;
        int hidden = l + 1 < m->nlayers;
        for (int b = 0; b < batch; b++) {
            const float *a = m->act[l] + (size_t)b * in;
            float *z = m->act[l + 1] + (size_t)b * out;
            for (int o = 0; o < out; o++) {
                const float *wr = w + (size_t)o * in;
                float s = bias[o];
                for (int i = 0; i < in; i++)
                    s += wr[i] * a[i];
                z[o] = hidden && s < 0 ? 0 : s;
            }
        }
    }
    /* Softmax and cross-entropy on the output layer. */
    int nout = m->sizes[m->nlayers];
    double loss = 0;
    for (int b = 0; b < batch; b++) {
        float *z = m->act[m->nlayers] + (size_t)b * nout;
        float zmax = z[0];
        for (int o = 1; o < nout; o++)
            if (z[o] > zmax)
                zmax = z[o];
        double sum = 0;
        for (int o = 0; o < nout; o++) {
            z[o] = expf(z[o] - zmax);
            sum += z[o];
        }
        for (int o = 0; o < nout; o++)
            z[o] = (float)(z[o] / sum);
        int label = y[idx ? idx[b] : b];
        double p = label >= 0 && label < nout ? z[label] : 0.0;
        loss -= log(p > 1e-30 ? p : 1e-30);
    }
    return batch > 0 ? loss / batch : 0.0;
}

double train_mlp_loss(train_mlp *m, const float *x, const int *y, const int *idx, int batch)
{
    if (batch > m->max_batch)
        batch = m->max_batch;
    return forward(m, x, y, idx, batch);
}

double train_mlp_gradient(train_mlp *m, const float *x, const int *y,
                          const int *idx, int batch, float *const *grad)
{
    if (batch > m->max_batch)
        batch = m->max_batch;
    double loss = forward(m, x, y, idx, batch);
    int L = m->nlayers, nout = m->sizes[L];
    /* d(mean loss)/d(logits) = (softmax - onehot) / batch */
    for (int b = 0; b < batch; b++) {
        const float *p = m->act[L] + (size_t)b * nout;
        float *d = m->delta[L] + (size_t)b * nout;
        int label = y[idx ? idx[b] : b];
        for (int o = 0; o < nout; o++)
            d[o] = (p[o] - (o == label ? 1.0f : 0.0f)) / (float)batch;
    }
    for (int l = L - 1; l >= 0; l--) {
        int in = m->sizes[l], out = m->sizes[l + 1];
        float *gw = grad[l], *gb = gw + (size_t)out * in;
        memset(gw, 0, m->nparam[l] * sizeof(float));
        for (int b = 0; b < batch; b++) {
            const float *a = m->act[l] + (size_t)b * in;
            const float *d = m->delta[l + 1] + (size_t)b * out;
            for (int o = 0; o < out; o++) {
                float *gr = gw + (size_t)o * in;
                float dv = d[o];
                if (dv == 0)
                    continue;
                for (int i = 0; i < in; i++)
                    gr[i] += dv * a[i];
                gb[o] += dv;
            }
        }
        if (l == 0)
            break;
        /* Back through the weights and the ReLU of layer l. */
        const float *w = m->param[l];
        for (int b = 0; b < batch; b++) {
            const float *d = m->delta[l + 1] + (size_t)b * out;
            const float *a = m->act[l] + (size_t)b * in;
            float *dp = m->delta[l] + (size_t)b * in;
            for (int i = 0; i < in; i++)
                dp[i] = 0;
            for (int o = 0; o < out; o++) {
                const float *wr = w + (size_t)o * in;
                for (int i = 0; i < in; i++)
                    dp[i] += d[o] * wr[i];
            }
            for (int i = 0; i < in; i++)
                if (a[i] <= 0)
                    dp[i] = 0;
        }
    }
    return loss;
}

void train_mlp_apply(train_mlp *m, float *const *grad, float scale, float lr, float momentum)
{
    for (int l = 0; l < m->nlayers; l++) {
        float *w = m->param[l], *v = m->velocity[l];
        const float *g = grad[l];
        for (size_t i = 0; i < m->nparam[l]; i++) {
            v[i] = momentum * v[i] + scale * g[i];
            w[i] -= lr * v[i];
        }
    }
}

void train_mlp_evaluate(train_mlp *m, const float *x, const int *y, int n,
                        double *accuracy, double *loss)
{
    int nout = m->sizes[m->nlayers], nfeat = m->sizes[0];
    long correct = 0;
    double total_loss = 0;
    for (int start = 0; start < n; start += m->max_batch) {
        int batch = n - start < m->max_batch ? n - start : m->max_batch;
        total_loss += forward(m, x + (size_t)start * nfeat, y + start, NULL, batch) * batch;
        for (int b = 0; b < batch; b++) {
            const float *p = m->act[m->nlayers] + (size_t)b * nout;
            int best = 0;
            for (int o = 1; o < nout; o++)
                if (p[o] > p[best])
                    best = o;
            correct += best == y[start + b];
        }
    }
    *accuracy = n > 0 ? (double)correct / n : 0.0;
    *loss = n > 0 ? total_loss / n : 0.0;
}
