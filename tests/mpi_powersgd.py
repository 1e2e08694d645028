"""PowerSGD gradient compression in a data-parallel MLP, with the MPI calls
of epfml/powersgd (powersgd/powersgd.py, utils.py, __init__.py) as
torch.distributed makes them on the MPI backend: an in-place allreduce of
a packed buffer.  NumPy in place of torch.  Run by mpi_loops.sh under the
starcoll preload (8 ranks, Debian's /usr/bin/python3).

Each step: compute (a sleep; the last rank --slow-factor times as long),
the gradients of a 64-128-128-10 MLP added to each rank's error-feedback
buffers, then for --start-after steps the plain aggregator (every buffer
packed in one, divided by the ranks, summed in place), and after that
PowerSGD's: rank-2 factors of the three weight matrices, one power
iteration a step, alternating: the packed Q factors (G^T orth(P), 640
floats) summed one step, the packed P factors (G orth(Q), 532) the next,
each from the last sum of the other, orthogonalized on every rank; the
biases packed and summed every step (266 floats); then the loss (one
float).  mpi4py's default error handling stays: an error is an
exception, and fails the run.

Each rank computes the next factors from the last sums at once, so a
late or partial factor sum is wrong, not late.  Checks (rank 0 prints
"ok"/"FAIL" lines and "N passed, N failed"): every factor sum equals the
sum by Reduce and Bcast (which starcoll does not reshape), within float32
rounding (Reduce adds in another order); the loss fell under 0.5 (plain
MPI: 2.24 to 0.19 in the last 20 of 900 steps).  The figures line gives
the replicas' largest difference from rank 0's weights.
"""
import time

from mpi4py import MPI
import numpy as np

from mlp_job import batch, exact_sum, loss_gradient, option, replica_drift, report, softmax_loss

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
steps = option("--steps", 900, int)
slow_factor = option("--slow-factor", 1.0, float)
start_after = option("--start-after", 10, int)
compute_s = option("--compute-ms", 3.0, float) / 1e3
RANK = 2

rng = np.random.default_rng(7)
shapes = [(128, 64), (128,), (128, 128), (128,), (10, 128), (10,)]
params = [(rng.standard_normal(s) * (0.1 if len(s) == 2 else 0)).astype(np.float32) for s in shapes]
errors = [np.zeros(s, np.float32) for s in shapes]   # p.grad: the error-feedback buffers


def compressed(shape):
    """PowerSGD's rule: a matrix whose rank-2 factors are under half its size."""
    r = min(RANK, min(shape))
    return len(shape) == 2 and np.prod(shape) / (0.5 * r * sum(shape)) > 2


compress = [compressed(s) for s in shapes]
groups = {}   # the compressed matrices by shape, batched as powersgd.py does
for i, s in enumerate(shapes):
    if compress[i]:
        groups.setdefault(s, []).append(i)


def pack(ts):
    return np.concatenate([t.reshape(-1) for t in ts]), [t.shape for t in ts]


def unpack(buf, shps):
    out, at = [], 0
    for s in shps:
        n = int(np.prod(s))
        out.append(buf[at:at + n].reshape(s))
        at += n
    return out


g0 = np.random.default_rng(0)
ps_buffer, ps_shapes = pack([g0.standard_normal((len(ix), s[0], RANK)).astype(np.float32) for s, ix in groups.items()])
qs_buffer, qs_shapes = pack([g0.standard_normal((len(ix), s[1], RANK)).astype(np.float32) for s, ix in groups.items()])
ps, qs = unpack(ps_buffer, ps_shapes), unpack(qs_buffer, qs_shapes)
iterations = 0
factor_sums = factor_wrong = 0


def orthogonalize(m):
    m[...] = np.linalg.qr(m)[0]


def plain_aggregate(grads):
    """AllReduce.aggregate: pack, divide, sum in place, unpack, zero."""
    buf, shps = pack(grads)
    buf /= size
    comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
    out = [o.copy() for o in unpack(buf, shps)]
    for g in grads:
        g[...] = 0
    return out


def powersgd_aggregate(grads):
    """BasicPowerSGD.aggregate, one iteration: the approximation, and the
    error left in grads."""
    global iterations, factor_sums, factor_wrong
    at = 0
    batches = []
    for ix in groups.values():
        batches.append(np.stack(grads[at:at + len(ix)]))
        at += len(ix)
    even = iterations % 2 == 0
    out_b, in_b, out_buffer = (qs, ps, qs_buffer) if even else (ps, qs, ps_buffer)
    approx = []
    for g, ib, ob in zip(batches, in_b, out_b):
        orthogonalize(ib)
        m = g if even else g.transpose(0, 2, 1)   # Q = G^T P, P = G Q
        ob[...] = m.transpose(0, 2, 1) @ ib
        m -= ib @ ob.transpose(0, 2, 1)           # the error, in place in g
    want = exact_sum(out_buffer, comm)
    comm.Allreduce(MPI.IN_PLACE, out_buffer, op=MPI.SUM)
    factor_sums += 1
    factor_wrong += not np.allclose(out_buffer, want, rtol=1e-4, atol=1e-6)
    for ib, ob in zip(in_b, out_b):
        a = ib @ ob.transpose(0, 2, 1) / size
        approx.append(a if even else a.transpose(0, 2, 1))
    out, at = [], 0
    for g, a in zip(batches, approx):
        for k in range(g.shape[0]):
            grads[at][...] = g[k]
            out.append(a[k])
            at += 1
    iterations += 1
    return out


def forward_backward(x, t):
    W1, b1, W2, b2, W3, b3 = params
    h1 = np.maximum(x @ W1.T + b1, 0)
    h2 = np.maximum(h1 @ W2.T + b2, 0)
    p, loss = softmax_loss(h2 @ W3.T + b3, t)
    dz = loss_gradient(p, t)
    d2 = (dz @ W3) * (h2 > 0)
    d1 = (d2 @ W2) * (h1 > 0)
    return [d1.T @ x, d1.sum(0), d2.T @ h1, d2.sum(0), dz.T @ h2, dz.sum(0)], loss


losses = []
t0 = time.perf_counter()
for step in range(steps):
    time.sleep(compute_s * (slow_factor if rank == size - 1 else 1.0))
    x, t = batch(1000 * step + rank, 32)
    grads, loss = forward_backward(x, t)
    for e, g in zip(errors, grads):
        e += g.astype(np.float32)
    if step < start_after:
        avg = plain_aggregate(errors)
    else:
        ci = [i for i in range(len(shapes)) if compress[i]]
        ui = [i for i in range(len(shapes)) if not compress[i]]
        avg = [None] * len(shapes)
        for i, a in zip(ci, powersgd_aggregate([errors[i] for i in ci])):
            avg[i] = a
        for i, a in zip(ui, plain_aggregate([errors[i] for i in ui])):
            avg[i] = a
    for p, a in zip(params, avg):
        p -= 0.1 * a
    total = np.zeros(1, np.float32)
    comm.Allreduce(loss.astype(np.float32), total, op=MPI.SUM)
    losses.append(float(total[0]) / size)

loop_s = time.perf_counter() - t0
factor_wrong = comm.allreduce(factor_wrong)
drift = replica_drift(params, comm)
first, last = np.mean(losses[:20]), np.mean(losses[-20:])
checks = [
    (factor_wrong == 0, "powersgd: every factor sum exact (%d of %d were not, over ranks)"
     % (factor_wrong, factor_sums * size)),
    (last < 0.5, "powersgd: the loss fell under 0.5 (first 20 steps %.3f, last 20 %.3f)" % (first, last)),
]
if rank == 0:
    report(checks, "powersgd: ranks=%d steps=%d loop_s=%.2f replica_drift=%g" % (size, steps, loop_s, drift))
