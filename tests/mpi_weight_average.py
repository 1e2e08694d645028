"""Local SGD in mpi4py: each rank trains its own copy of a 64-32-10 MLP on
its own data for two steps, then the copies' weights are averaged
(comm.Allreduce of each weight tensor, then divided by the ranks), as
model-averaging and federated codes do.  Run by mpi_loops.sh under the
starcoll preload (8 ranks, Debian's /usr/bin/python3).

These sums are weights, not gradients: a tolerant round, whose late
copies ride into a later sum, makes each average hold another number of
copies than it is divided by, and the replicas drift apart.  Every step
uses fresh NumPy arrays and reduces the loss over the world.  The last
rank computes --slow-factor times as long.  mpi4py's default error
handling stays: an error is an exception, and fails the run.

A figures line gives the mean step of the ranks but the slow one, and the
slow rank's (the exact checks' Reduce and Bcast included).

Checks (rank 0 prints "ok"/"FAIL" lines and "N passed, N failed"): every
averaging sum equals the same sum by Reduce and Bcast (which starcoll
does not reshape; within float rounding, 1e-5 of the largest element);
every rank ends with rank 0's weights; the loss of the last 20 steps is
under three quarters of the first 20's.
"""
import time

from mpi4py import MPI
import numpy as np

from mlp_job import batch, exact_sum, loss_gradient, option, replica_drift, report, softmax_loss

slow_factor = option("--slow-factor", 1.0, float)
steps = option("--steps", 200, int)
local_steps = 2

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()

init = np.random.default_rng(0)
W1 = (init.standard_normal((64, 32)) * 0.1).astype(np.float32)
b1 = np.zeros(32, np.float32)
W2 = (init.standard_normal((32, 10)) * 0.1).astype(np.float32)
b2 = np.zeros(10, np.float32)
weights = [W1, b1, W2, b2]
B = 32


not_exact = 0
losses = []
t0 = time.perf_counter()
for step in range(steps):
    time.sleep(0.002 * (slow_factor if rank == size - 1 else 1.0))   # compute
    x, t = batch(1000 + step * size + rank, B)
    W1, b1, W2, b2 = weights
    h = np.maximum(x @ W1 + b1, 0)
    z = h @ W2 + b2
    p, loss = softmax_loss(z, t)
    total = np.empty_like(loss)
    world.Allreduce(loss, total)
    losses.append(total[0] / size)
    dz = loss_gradient(p, t)
    dh = (dz @ W2.T) * (h > 0)
    grads = [x.T @ dh, dh.sum(0), h.T @ dz, dz.sum(0)]
    weights = [w - 0.1 * g for w, g in zip(weights, grads)]   # fresh arrays, as NumPy code makes them
    if step % local_steps == local_steps - 1:
        averaged = []
        for w in weights:
            s = np.empty_like(w)
            world.Allreduce(w, s)
            e = exact_sum(w, world)
            not_exact += not np.allclose(s, e, rtol=0, atol=1e-5 * max(1.0, float(np.abs(e).max())))
            averaged.append(s / size)
        weights = averaged

loop_s = time.perf_counter() - t0
not_exact = world.allreduce(not_exact)
times = world.gather(loop_s, root=0)
drift = replica_drift(weights, world)
first, last = np.mean(losses[:20]), np.mean(losses[-20:])
checks = [
    (not_exact == 0, "weight-average: every averaging sum exact (%d of %d were not)"
     % (not_exact, len(weights) * (steps // local_steps) * size)),
    (drift == 0, "weight-average: every rank ends with rank 0's weights (largest difference %g)" % drift),
    (last < 0.75 * first, "weight-average: the loss fell (first 20 steps %.3f, last 20 %.3f)" % (first, last)),
]
if rank == 0:
    report(checks, "weight-average: ranks=%d steps=%d step_ms=%.3f slow_step_ms=%.3f"
           % (size, steps, 1e3 * sum(times[:-1]) / (size - 1) / steps, 1e3 * times[-1] / steps))
