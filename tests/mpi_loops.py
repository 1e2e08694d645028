"""A data-parallel training loop in mpi4py as a course assignment writes it,
run by mpi_loops.sh under the starcoll preload (8 ranks, Debian's
/usr/bin/python3).

Every step: compute (a sleep; the last rank sleeps --slow-factor times as
long), fresh NumPy gradient arrays for an MLP's weights and biases, one
comm.Allreduce(grad, np.zeros_like(grad)) per layer in backward order
(--nonblocking: comm.Iallreduce per layer, then MPI.Request.Waitall),
and a loss reduced every step.  mpi4py's default error handling stays:
an error is an exception, and fails the run.

Gradient i holds integer multiples of 64**(i % 3), so every sum is exact
and a result mixing two tensors shows.  Checks: tags on every result; the
loss exact every step; after a flush (MPI.Pcontrol(2) and a step of
zeros), every rank's summed results per tensor equal the sum of what
every rank sent, bitwise on every rank.  The bookkeeping uses Reduce and
bcast, which starcoll does not reshape.  Rank 0 prints "ok"/"FAIL" lines
and "N passed, N failed".

--no-loss: no loss reduced (nothing exact in the steps).  --pass-every N:
every N steps a figure passed on, as codes do between their collectives,
in turn: comm.sendrecv of a dict around a ring; rank 0 receiving every
rank's by comm.recv from any source (pickled: MPI_Mprobe and MPI_Mrecv);
by comm.Recv of a NumPy array from each rank in turn (the others
comm.Send); comm.Split into halves; each rank's own file written and read
back 50 times by Iwrite_at and Iread_at completed by Wait, and read by
Read_at_all on COMM_SELF; rank 0 polling comm.iprobe for each rank's
figure (MPI_Iprobe), then comm.recv; a helper started by comm.Spawn (this
script, which takes a number by bcast, answers rank 0 one more, and parts
by Disconnect).  Each result is checked.

--model FILE [--scale N]: the step's gradients are a model's tensors (a
.tensors file of benchmarks/models/, registration order) in backward
order, every count over 16384 divided by N (never below 16384), as
benchmarks/starcoll_loops does.
"""
import os
import sys
import time

from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
if MPI.Comm.Get_parent() != MPI.COMM_NULL:
    # pass_on's spawned helper: takes a number, answers one more, parts
    parent = MPI.Comm.Get_parent()
    number = parent.bcast(None, root=0)
    if rank == 0:
        parent.send(number + 1, dest=0, tag=12)
    parent.Disconnect()
    sys.exit(0)
args = sys.argv[1:]
slow_factor = float(args[args.index("--slow-factor") + 1]) if "--slow-factor" in args else 1.0
steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 50
compute_s = float(args[args.index("--compute-ms") + 1]) / 1e3 if "--compute-ms" in args else 0.010
warmup = steps // 4
nonblocking = "--nonblocking" in args
with_loss = "--no-loss" not in args
pass_every = int(args[args.index("--pass-every") + 1]) if "--pass-every" in args else 0

# An MLP 64-256-128-10: weights and biases, in backward order.
shapes = [(128, 10), (10,), (256, 128), (128,), (64, 256), (256,)]
if "--model" in args:
    scale = int(args[args.index("--scale") + 1]) if "--scale" in args else 1
    counts = []
    with open(args[args.index("--model") + 1]) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 2 and not line.startswith("#"):
                c = int(fields[1])
                counts.append(max(c // scale, 16384) if c > 16384 else c)
    shapes = [(c,) for c in reversed(counts)]
tags = [64 ** (i % 3) for i in range(len(shapes))]
sent = [np.zeros(s, np.float64) for s in shapes]
got = [np.zeros(s, np.float64) for s in shapes]
tags_ok = True
loss_ok = True


def gradient(i, step, zero):
    """This rank's gradient of tensor i, a fresh array every step."""
    n = int(np.prod(shapes[i]))
    if zero:
        return np.zeros(shapes[i], np.float32)
    u = 1 + (np.arange(n) + rank + step + i) % 3
    return (tags[i] * u).astype(np.float32).reshape(shapes[i])


def one_step(step, zero=False):
    global tags_ok, loss_ok
    if nonblocking:
        # as overlapping trainers do (ShallowSpeed): each layer's
        # Iallreduce started in backward order, then one Waitall
        grads = [gradient(i, step, zero) for i in range(len(shapes))]
        outs = [np.zeros_like(g) for g in grads]
        reqs = [comm.Iallreduce(g, o, op=MPI.SUM) for g, o in zip(grads, outs)]
        MPI.Request.Waitall(reqs)
    for i in range(len(shapes)):
        if nonblocking:
            grad, out = grads[i], outs[i]
        else:
            grad = gradient(i, step, zero)
            out = np.zeros_like(grad)
            comm.Allreduce(grad, out, op=MPI.SUM)
        sent[i] += grad
        if not (np.all(out >= 0) and np.all(np.mod(out, tags[i]) == 0)):
            tags_ok = False
        got[i] += out
    if not with_loss:
        return
    loss = np.array([float(rank + 1 + step % 5)], np.float32)
    total = np.zeros_like(loss)
    comm.Allreduce(loss, total, op=MPI.SUM)
    if total[0] != size * (size + 1) // 2 + size * (step % 5):
        loss_ok = False


passed = failed = 0
passes_ok = True


def pass_on(which):
    """A figure passed on point to point, or a communicator split."""
    global passes_ok
    if which == 0:
        got = comm.sendrecv({"rank": rank}, dest=(rank + 1) % size, source=(rank - 1) % size)
        passes_ok &= got == {"rank": (rank - 1) % size}
    elif which == 1:
        if rank == 0:
            passes_ok &= sorted(comm.recv(source=MPI.ANY_SOURCE, tag=3) for _ in range(size - 1)) == list(range(2, size + 1))
        else:
            comm.send(rank + 1, dest=0, tag=3)
    elif which == 2:
        buf = np.zeros(1, np.int32)
        if rank == 0:
            for q in range(1, size):
                comm.Recv(buf, source=q, tag=4)
                passes_ok &= int(buf[0]) == q
        else:
            comm.Send(np.array([rank], np.int32), dest=0, tag=4)
    elif which == 3:
        half = comm.Split(rank % 2, rank)
        passes_ok &= half.Get_size() == (size + 1 - rank % 2) // 2
        half.Free()
    elif which == 5:
        if rank == 0:
            figures = []
            for _ in range(size - 1):
                status = MPI.Status()
                while not comm.iprobe(source=MPI.ANY_SOURCE, tag=5, status=status):
                    pass
                figures.append(comm.recv(source=status.Get_source(), tag=5))
            passes_ok &= sorted(figures) == list(range(2, size + 1))
        else:
            comm.send(rank + 1, dest=0, tag=5)
    elif which == 6:
        helper = comm.Spawn(sys.executable, args=[__file__], maxprocs=1)
        helper.bcast(1000 + size if rank == 0 else None, root=MPI.ROOT if rank == 0 else MPI.PROC_NULL)
        if rank == 0:
            passes_ok &= helper.recv(source=0, tag=12) == 1001 + size
        helper.Disconnect()
    else:
        path = os.path.join(os.environ.get("TMPDIR") or "/tmp", "mpi_loops.%d.%d" % (os.getpid(), rank))
        amode = MPI.MODE_RDWR | MPI.MODE_CREATE | MPI.MODE_DELETE_ON_CLOSE
        fh = MPI.File.Open(MPI.COMM_SELF, path, amode)
        for k in range(50):
            w = np.arange(k, k + 1 + k % 13, dtype=np.int32)
            r, c = np.full_like(w, -1), np.full_like(w, -1)
            fh.Iwrite_at(0, w).Wait()
            fh.Iread_at(0, r).Wait()
            fh.Read_at_all(0, c)
            passes_ok &= bool((r == w).all() and (c == w).all())
        fh.Close()



def check(ok, what):
    global passed, failed
    flag = np.array([1 if ok else 0], np.int32)
    low = np.zeros_like(flag)
    comm.Reduce(flag, low, op=MPI.MIN, root=0)
    low = comm.bcast(low, root=0)
    if rank == 0:
        print(("ok   - " if low[0] else "FAIL - ") + what, flush=True)
    if low[0]:
        passed += 1
    else:
        failed += 1


t_warm = time.perf_counter()
for step in range(steps):
    if step == warmup:
        t_warm = time.perf_counter()
    time.sleep(compute_s * (slow_factor if rank == size - 1 else 1.0))
    one_step(step)
    if pass_every and (step + 1) % pass_every == 0:
        pass_on((step + 1) // pass_every % 7)
per_step_ms = (time.perf_counter() - t_warm) / (steps - warmup) * 1e3
MPI.Pcontrol(2)
one_step(steps, zero=True)

check(tags_ok, "mpi4py: every result of a tensor is made of that tensor's buffers (tags)")
if with_loss:
    check(loss_ok, "mpi4py: the per-step loss is exact at every step")
if pass_every:
    check(passes_ok, "mpi4py: every figure passed on (sendrecv, recv, Recv, iprobe polling), every Split, every file read "
          "back and every spawned helper's answer right")
conserved = same = True
for i in range(len(shapes)):
    total, low, high = np.zeros_like(sent[i]), np.zeros_like(got[i]), np.zeros_like(got[i])
    comm.Reduce(sent[i], total, op=MPI.SUM, root=0)
    comm.Reduce(got[i], low, op=MPI.MIN, root=0)
    comm.Reduce(got[i], high, op=MPI.MAX, root=0)
    if rank == 0:
        conserved &= bool(np.array_equal(low, total))
        same &= bool(np.array_equal(low, high))
check(comm.bcast(conserved, root=0), "mpi4py: nothing lost, nothing doubled, per tensor")
check(comm.bcast(same, root=0), "mpi4py: replicas bitwise equal after the flush")
# figures for benchmarks/loops: mean step time of the ranks never slow, and of the slow one
mine = np.array([0.0 if rank == size - 1 else per_step_ms, per_step_ms if rank == size - 1 else 0.0])
sums = np.zeros_like(mine)
comm.Reduce(mine, sums, op=MPI.SUM, root=0)
if rank == 0:
    print(f"loops: loop=mpi4py{'-nonblocking' if nonblocking else ''} ranks={size} steps={steps} fast_step_ms={sums[0] / max(size - 1, 1):.3f} "
          f"slow_step_ms={sums[1]:.3f}", flush=True)
    print(f"{passed} passed, {failed} failed", flush=True)
