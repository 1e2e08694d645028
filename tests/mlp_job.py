"""What the suite's mpi4py training jobs (mpi_weight_average.py,
mpi_tensor_parallel.py, mpi_actor_critic.py) share: their options, a
synthetic digits task, the softmax loss, the exact sum they check
starcoll's against, how far the replicas drifted, and the closing lines.  Imported from the script's own folder (Python puts it
first on sys.path).
"""
import sys

from mpi4py import MPI
import numpy as np


def option(name, default, kind):
    """The value after --name on the command line, else default."""
    args = sys.argv[1:]
    return kind(args[args.index(name) + 1]) if name in args else default


# Synthetic digits: a fixed teacher labels Gaussian inputs.
TEACHER = np.random.default_rng(1).standard_normal((64, 10)).astype(np.float32)


def batch(seed, n):
    """n inputs of 64 floats and their labels, the same for the same seed."""
    x = np.random.default_rng(seed).standard_normal((n, 64)).astype(np.float32)
    return x, (x @ TEACHER).argmax(1)


def softmax_loss(z, t):
    """The probabilities and the mean cross-entropy loss (a 1-element array)."""
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return p, np.array([-np.log(p[np.arange(len(t)), t] + 1e-9).mean()])


def loss_gradient(p, t):
    """The gradient of softmax_loss with respect to z."""
    dz = p.copy()
    dz[np.arange(len(t)), t] -= 1
    return dz / len(t)


def exact_sum(a, comm):
    """The sum by Reduce and Bcast, which starcoll does not reshape."""
    out = np.empty_like(a)
    comm.Reduce(a, out, op=MPI.SUM, root=0)
    comm.Bcast(out, root=0)
    return out


def replica_drift(arrays, comm):
    """The largest difference of any rank's arrays from rank 0's (0 where
    every replica holds rank 0's weights exactly)."""
    drift = 0.0
    for a in arrays:
        a0 = a.copy()
        comm.Bcast(a0, root=0)
        drift = max(drift, float(np.abs(a - a0).max()))
    return comm.allreduce(drift, op=MPI.MAX)


def report(checks, figures):
    """An ok/FAIL line per check, the figures line and the tally (rank 0 calls it)."""
    for good, what in checks:
        print(("ok   - " if good else "FAIL - ") + what)
    print(figures)
    print("%d passed, %d failed" % (sum(g for g, _ in checks), sum(not g for g, _ in checks)))
