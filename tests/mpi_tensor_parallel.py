"""A hybrid tensor- and data-parallel MLP in mpi4py, as a course assignment
on Megatron-style model parallelism writes it, run by mpi_loops.sh under
the starcoll preload (8 ranks, Debian's /usr/bin/python3).

The world splits into tensor-parallel pairs (world ranks 2i and 2i+1: the
report's communicator 1) and data-parallel groups of the even and of the
odd ranks (communicator 2).  Each pair holds a 64-256-10 MLP, its hidden
layer cut in two: the first layer's columns (column-parallel), the
second's rows (row-parallel).  Every step, with fresh NumPy arrays:
  - forward: comm.Allreduce of the row-parallel layer's partial outputs
    over the pair (32 x 10 floats): activations, which the rest of the
    step computes with at once;
  - backward: comm.Allreduce of the input's gradient over the pair
    (32 x 64 floats), as a layer below would need;
  - each of the four gradient tensors reduced over the data-parallel
    group, and the loss over the world.
The last rank computes --slow-factor times as long.  mpi4py's default
error handling stays: an error is an exception, and fails the run.

A figures line gives the mean step of the ranks outside the slow rank's
pair and the slow rank's.

Checks (rank 0 prints "ok"/"FAIL" lines and "N passed, N failed"): every
tensor-parallel sum equals the exact one at every step (the same sum by
Reduce and Bcast, which starcoll does not reshape: bitwise, two addends);
and the loss of the last 20 steps is under half that of the first 20.
"""
import time

from mpi4py import MPI
import numpy as np

from mlp_job import batch, exact_sum, loss_gradient, option, report, softmax_loss

slow_factor = option("--slow-factor", 1.0, float)
steps = option("--steps", 150, int)

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
mp = 2
dp = size // mp
tp = world.Split(rank // mp, rank)      # the pair: tensor parallel
dpc = world.Split(rank % mp, rank)      # the replicas of this half: data parallel
half, member = tp.Get_rank(), dpc.Get_rank()

rng = np.random.default_rng(0)
H, b = 256, 32
hs = H // mp
W1 = (rng.standard_normal((64, H)) * 0.1).astype(np.float32)[:, half * hs:(half + 1) * hs].copy()
b1 = np.zeros(hs, np.float32)
W2 = (rng.standard_normal((H, 10)) * 0.1).astype(np.float32)[half * hs:(half + 1) * hs].copy()
b2 = np.zeros(10, np.float32)


not_exact = 0
losses = []
t0 = time.perf_counter()
for step in range(steps):
    time.sleep(0.002 * (slow_factor if rank == size - 1 else 1.0))   # compute
    x, t = batch(1000 + step * dp + member, b)
    h = np.maximum(x @ W1 + b1, 0)
    part = h @ W2
    out = np.empty_like(part)
    tp.Allreduce(part, out)
    not_exact += not np.array_equal(out, exact_sum(part, tp))
    z = out + b2
    p, loss = softmax_loss(z, t)
    total = np.empty_like(loss)
    world.Allreduce(loss, total)
    losses.append(total[0] / size)
    dz = loss_gradient(p, t)
    grads = [None, None, h.T @ dz, dz.sum(0)]
    dh = (dz @ W2.T) * (h > 0)
    grads[0], grads[1] = x.T @ dh, dh.sum(0)
    dx = dh @ W1.T
    dx_sum = np.empty_like(dx)
    tp.Allreduce(dx, dx_sum)
    not_exact += not np.array_equal(dx_sum, exact_sum(dx, tp))
    for g in grads:
        s = np.empty_like(g)
        dpc.Allreduce(g, s)
        g[...] = s / dp
    for w, g in zip((W1, b1, W2, b2), grads):
        w -= 0.1 * g

loop_s = time.perf_counter() - t0
not_exact = world.allreduce(not_exact)
times = world.gather(loop_s, root=0)
first, last = np.mean(losses[:20]), np.mean(losses[-20:])
checks = [
    (not_exact == 0, "tensor-parallel: every tensor-parallel sum exact at every step (%d of %d were not)"
     % (not_exact, 2 * steps * size)),
    (last < first / 2, "tensor-parallel: the loss fell (first 20 steps %.3f, last 20 %.3f)" % (first, last)),
]
if rank == 0:
    far = [t for r, t in enumerate(times) if r // mp != (size - 1) // mp]   # not the slow rank's pair
    report(checks, "tensor-parallel: ranks=%d steps=%d step_ms=%.3f slow_pair_step_ms=%.3f"
           % (size, steps, 1e3 * sum(far) / len(far) / steps, 1e3 * times[size - 1] / steps))
