"""An actor and a critic trained in turn on one communicator, with the MPI
calls of OpenAI Spinning Up's PPO (spinup/algos/pytorch/ppo/ppo.py and
spinup/utils/mpi_tools.py, mpi_pytorch.py), NumPy MLPs in place of torch.
Run by mpi_loops.sh under the starcoll preload (8 ranks, Debian's
/usr/bin/python3).

Each epoch: the rollout (a sleep; the last rank --slow-factor times as
long), the advantages' mean and spread (mpi_statistics_scalar: a sum of
2 floats, then of 1), then up to 80 actor steps, each the KL reduced
(one float; the steps stop early once it passes 1.5x the target, every
rank alike) and the actor's gradients averaged parameter by parameter
(mpi_avg_grads: W0 b0 W1 b1 W2 b2 of a 4-64-64-2 net), then 80 critic
steps (a 4-64-64-1 net: its first four tensors have the actor's shapes,
its last two do not), then the epoch's statistics.  Every sum is
mpi_op's: np.asarray(x, float32) sent, np.zeros_like received.
--grads own: each gradient in its parameter's buffer, zeroed in place
(torch before 2.0); --grads fresh: a new array each step (torch 2's
zero_grad(set_to_none=True)).  mpi4py's default error handling stays: an
error is an exception, and fails the run.

Gradients are rounded to multiples of 1/1024, so every sum is exact in
float32 and a sum holding another tensor shows.  Checks (rank 0 prints
"ok"/"FAIL" lines and "N passed, N failed"): from the third epoch on,
every gradient sum equals the same sum by Reduce and Bcast (which starcoll
does not reshape), bitwise; every KL sum is exact (within float32
rounding: Reduce adds in another order); the critic's loss fell.  The
figures line gives how far the ranks' weights ended from rank 0's: under a
tolerant mode, before the communicator turns exact, a late rank may apply
two sums at once, and Adam then leaves the replicas apart (README,
Limits), so it is no check.
"""
import time

from mpi4py import MPI
import numpy as np

from mlp_job import exact_sum, option, replica_drift, report

slow_factor = option("--slow-factor", 1.0, float)
epochs = option("--epochs", 5, int)
grads_mode = option("--grads", "own", str)
step_s = option("--step-ms", 3.0, float) / 1e3
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
checked_from = 2                       # the epoch from which every gradient sum must be exact
not_exact = [0, 0]                     # gradient sums, KL sums
checked = [0, 0]
slow = slow_factor if rank == size - 1 else 1.0


def mpi_op(x, op, what=None):
    """Spinning Up's mpi_op, each sum compared with the exact one where asked."""
    x, scalar = ([x], True) if np.isscalar(x) else (x, False)
    x = np.asarray(x, dtype=np.float32)
    buff = np.zeros_like(x, dtype=np.float32)
    comm.Allreduce(x, buff, op=op)
    if what is not None:
        checked[what] += 1
        e = exact_sum(x, comm)   # gradients are multiples of 1/1024: bitwise; the KL within float32 rounding
        not_exact[what] += not (np.array_equal(buff, e) if what == 0 else np.allclose(buff, e, rtol=1e-6, atol=1e-9))
    return buff[0] if scalar else buff


def mpi_statistics_scalar(x):
    x = np.array(x, dtype=np.float32)
    global_sum, global_n = mpi_op([np.sum(x), len(x)], MPI.SUM)
    mean = global_sum / global_n
    return mean, np.sqrt(mpi_op(np.sum((x - mean) ** 2), MPI.SUM) / global_n)


class Net:
    """A tanh MLP trained by Adam; its gradients averaged as mpi_avg_grads does."""

    def __init__(self, sizes, seed):
        init = np.random.default_rng(seed)   # the same on every rank (sync_params would Bcast)
        self.params = []
        for i, o in zip(sizes[:-1], sizes[1:]):
            self.params += [(init.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32)]
        self.grads = [np.zeros_like(p) for p in self.params]
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def forward(self, x):
        self.acts = [x]
        layers = len(self.params) // 2
        for k in range(layers):
            x = x @ self.params[2 * k].T + self.params[2 * k + 1]
            if k < layers - 1:
                x = np.tanh(x)
            self.acts.append(x)
        return x

    def backward(self, dout):
        new = [None] * len(self.params)
        for k in reversed(range(len(self.params) // 2)):
            a = self.acts[k]
            new[2 * k], new[2 * k + 1] = dout.T @ a, dout.sum(0)
            if k:
                dout = (dout @ self.params[2 * k]) * (1 - a ** 2)
        for i, g in enumerate(new):
            g = np.clip(np.round(g * 1024) / 1024, -4, 4).astype(np.float32)
            if grads_mode == "own":
                self.grads[i][...] = g
            else:
                self.grads[i] = g

    def step(self, lr, check):
        for g in self.grads:                 # mpi_avg_grads: p_grad_numpy[:] = mpi_avg(p.grad)
            g[:] = mpi_op(g, MPI.SUM, 0 if check else None) / size
        self.t += 1
        for i, p in enumerate(self.params):
            g = self.grads[i]
            self.m[i] = 0.9 * self.m[i] + 0.1 * g
            self.v[i] = 0.999 * self.v[i] + 0.001 * g * g
            mh, vh = self.m[i] / (1 - 0.9 ** self.t), self.v[i] / (1 - 0.999 ** self.t)
            p -= (lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)


def log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


actor, critic = Net([4, 64, 64, 2], 1), Net([4, 64, 64, 1], 2)
data = np.random.default_rng(100 + rank)
n = 4000 // size
critic_losses, stops = [], []
t0 = time.perf_counter()
for epoch in range(epochs):
    check = epoch >= checked_from
    obs = data.standard_normal((n, 4)).astype(np.float32)
    logp_all = log_softmax(actor.forward(obs))
    act = (data.random(n) < np.exp(logp_all[:, 1])).astype(int)
    logp_old = logp_all[np.arange(n), act]
    ret = (act == (obs[:, 0] > 0)).astype(np.float32) + 0.5 * data.standard_normal(n).astype(np.float32)
    adv = ret - critic.forward(obs)[:, 0]
    time.sleep(0.03 * slow)                                     # the rollout
    mean, spread = mpi_statistics_scalar(adv)                   # buf.get()
    adv = (adv - mean) / spread
    stop = 80
    for i in range(80):
        logp_all = log_softmax(actor.forward(obs))
        logp = logp_all[np.arange(n), act]
        ratio = np.exp(logp - logp_old)
        kl = mpi_op(float(np.mean(logp_old - logp)), MPI.SUM, 1) / size
        if kl > 1.5 * 0.01:
            stop = i
            break
        clipped = ((adv > 0) & (ratio > 1.2)) | ((adv < 0) & (ratio < 0.8))
        dlogp = np.where(clipped, 0.0, -ratio * adv) / n
        time.sleep(step_s * slow)
        actor.backward((dlogp[:, None] * (np.eye(2)[act] - np.exp(logp_all))).astype(np.float32))
        actor.step(3e-4, check)
    stops.append(stop)
    for i in range(80):
        v = critic.forward(obs)[:, 0]
        time.sleep(step_s * slow)
        critic.backward((2 * (v - ret) / n)[:, None].astype(np.float32))
        critic.step(1e-3, check)
    loss_v = float(np.mean((critic.forward(obs)[:, 0] - ret) ** 2))
    critic_losses.append(mpi_statistics_scalar([loss_v])[0])
    mpi_statistics_scalar([kl, stop])

loop_s = time.perf_counter() - t0
not_exact = [comm.allreduce(k) for k in not_exact]
checked = [comm.allreduce(k) for k in checked]
drift = replica_drift(actor.params + critic.params, comm)
checks = [
    (checked[0] > 0 and not_exact[0] == 0, "actor-critic: from epoch %d on, every gradient sum exact (%d of %d were not)"
     % (checked_from, not_exact[0], checked[0])),
    (not_exact[1] == 0, "actor-critic: every KL sum exact (%d of %d were not)" % (not_exact[1], checked[1])),
    (critic_losses[-1] < critic_losses[0], "actor-critic: the critic's loss fell (%.3f -> %.3f)"
     % (critic_losses[0], critic_losses[-1])),
]
if rank == 0:
    report(checks, "actor-critic: ranks=%d epochs=%d grads=%s actor_steps=%s loop_s=%.2f replica_drift=%g"
           % (size, epochs, grads_mode, ",".join(map(str, stops)), loop_s, drift))
