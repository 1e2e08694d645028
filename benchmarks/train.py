#!/usr/bin/python3
"""Time-to-accuracy benchmark in NumPy with mpi4py: the Python twin of
starcoll_train.  An ordinary data-parallel training script (no starcoll
API): each rank trains the same MLP on its own shard of the handwritten
digits, reduces each layer's gradient with comm.Allreduce (SUM of float32;
--overlap: comm.Iallreduce per layer as the backward pass reaches it),
divides by the world size and steps; rank 0 evaluates on a held-out split
every few steps.  starcoll is meant to be LD_PRELOADed into it, unchanged.

Run:  mpirun -np 8 /usr/bin/python3 train.py [options]     (see --help)
Last line:  train: mode=M scenario=S ranks=N tta_s=T final_acc=A steps=K

The stop decision travels as in the C trainer: one extra float after the
first layer's gradient carries a stop vote; a rank stops at the first step
whose reduced buffer shows one (--stop-via bcast uses a Bcast per evaluation
instead, which re-aligns the ranks' steps)."""

import argparse
import gzip
import glob
import importlib.util
import math
import os
import sys
import time

import numpy as np
from mpi4py import MPI

TEST_FRACTION = 0.2
SPLIT_SEED = 20240611  # fixed: the held-out split must not move with --seed
MASK64 = (1 << 64) - 1


class UsageError(Exception):
    """A bad option or spec: one line for the user, exit status 2."""


# ---- straggler emulation: same grammar and meaning as benchmarks/straggle.h --

PATTERN_KEYS = {
    "none": {"seed"},
    "fixed": {"rank", "ms", "prob", "seed"},
    "persistent": {"rank", "factor", "ms", "seed"},
    "jitter": {"sigma", "ms", "seed"},
    "burst": {"period", "factor", "ms", "seed"},
    "onset": {"rank", "start", "end", "factor", "ms", "seed"},
}


def parse_duration_s(text):
    for suffix, scale in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("", 1e-3)):
        if suffix == "" or text.endswith(suffix):
            number = text[:len(text) - len(suffix)] if suffix else text
            value = float(number)
            if not math.isfinite(value) or value < 0:
                raise ValueError(text)
            return value * scale
    raise ValueError(text)


class Straggler:
    """A parsed --straggler spec; delay_s() is a pure function of the spec,
    the rank, the world size and the step."""

    def __init__(self, spec):
        spec = spec or "none"
        items = spec.split(",")
        if any(not item for item in items):
            raise UsageError(f"straggler spec '{spec}': empty item between commas")
        self.pattern = "fixed"
        if "=" not in items[0]:
            if items[0] not in PATTERN_KEYS:
                raise UsageError(f"straggler spec '{spec}': unknown pattern '{items[0]}' "
                                 "(accepted: " + ", ".join(PATTERN_KEYS) + ")")
            self.pattern = items.pop(0)
        self.rank = "last"
        self.fixed_s = None
        self.prob = 1.0
        self.factor = 4.0 if self.pattern == "burst" else 2.0
        self.sigma = 0.5
        self.period = 10
        self.start = 50
        self.end = None
        self.seed = 1
        accepted = PATTERN_KEYS[self.pattern]
        given = set()
        for item in items:
            key, eq, value = item.partition("=")
            if not eq or key not in accepted or key in given:
                raise UsageError(f"straggler spec '{spec}': bad item '{item}' for pattern "
                                 f"{self.pattern} (accepted keys: {', '.join(sorted(accepted))}, each once)")
            given.add(key)
            try:
                self._set(key, value)
            except ValueError:
                raise UsageError(f"straggler spec '{spec}': bad value in '{item}'") from None
        if self.pattern == "fixed" and "ms" not in given:
            raise UsageError(f"straggler spec '{spec}': fixed needs ms=M")
        if "ms" in given and "factor" in given:
            raise UsageError(f"straggler spec '{spec}': give factor=F or ms=M, not both")
        if self.pattern == "onset" and self.end is not None and self.end <= self.start:
            raise UsageError(f"straggler spec '{spec}': end must come after start")

    def _set(self, key, value):
        if key == "rank":
            self.rank = "last" if value == "last" else int(value)
            if self.rank != "last" and self.rank < 0:
                raise ValueError(value)
        elif key == "ms":
            self.fixed_s = parse_duration_s(value)
        elif key in ("prob", "factor", "sigma"):
            number = float(value)
            limits = {"prob": (0, 1), "factor": (1, math.inf), "sigma": (0, 10)}[key]
            if not (limits[0] <= number <= limits[1]):
                raise ValueError(value)
            setattr(self, key, number)
        elif key in ("period", "start", "seed"):
            number = int(value)
            if number < (1 if key == "period" else 0):
                raise ValueError(value)
            setattr(self, key, number)
        elif key == "end":
            self.end = None if value == "never" else int(value)
            if self.end is not None and self.end < 0:
                raise ValueError(value)

    def check(self, nranks):
        if self.pattern in ("fixed", "persistent", "onset") and self.rank != "last" \
                and self.rank >= nranks:
            raise UsageError(f"straggler: rank={self.rank} does not exist with {nranks} ranks")

    def describe(self):
        rank = self.rank
        slow = f"ms={self.fixed_s * 1e3:g}" if self.fixed_s is not None else f"factor={self.factor:g}"
        if self.pattern == "none":
            return "none"
        if self.pattern == "fixed":
            return f"fixed,rank={rank},ms={self.fixed_s * 1e3:g},prob={self.prob:g},seed={self.seed}"
        if self.pattern == "persistent":
            return f"persistent,rank={rank},{slow},seed={self.seed}"
        if self.pattern == "jitter":
            extra = f",ms={self.fixed_s * 1e3:g}" if self.fixed_s is not None else ""
            return f"jitter,sigma={self.sigma:g}{extra},seed={self.seed}"
        if self.pattern == "burst":
            return f"burst,period={self.period},{slow},seed={self.seed}"
        end = "never" if self.end is None else self.end
        return f"onset,rank={rank},start={self.start},end={end},{slow},seed={self.seed}"

    @staticmethod
    def _mix(z):
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK64
        return z ^ (z >> 31)

    def _uniform(self, rank, step, stream):
        golden = 0x9e3779b97f4a7c15
        h = self._mix((self.seed + golden) & MASK64)
        for part in (rank & 0xffffffff, step & MASK64, stream):
            h = self._mix(h ^ ((part + golden) & MASK64))
        return ((h >> 11) + 0.5) / 9007199254740992.0

    def _slowdown(self, base_s):
        return self.fixed_s if self.fixed_s is not None else (self.factor - 1.0) * base_s

    def delay_s(self, rank, nranks, step, base_s):
        """Extra seconds this rank sleeps at this step beside base_s."""
        slow_rank = nranks - 1 if self.rank == "last" else self.rank
        p = self.pattern
        if p == "fixed":
            hit = rank == slow_rank and self._uniform(rank, step, 0) < self.prob
            return self.fixed_s if hit else 0.0
        if p == "persistent":
            return self._slowdown(base_s) if rank == slow_rank else 0.0
        if p == "jitter":
            base = self.fixed_s if self.fixed_s is not None else base_s
            u1, u2 = self._uniform(rank, step, 1), self._uniform(rank, step, 2)
            normal = math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)
            return max(0.0, base * (math.exp(self.sigma * normal) - 1.0))
        if p == "burst":
            return self._slowdown(base_s) if rank == (step // self.period) % nranks else 0.0
        if p == "onset":
            active = rank == slow_rank and step >= self.start and (self.end is None or step < self.end)
            return self._slowdown(base_s) if active else 0.0
        return 0.0


# ---- data --------------------------------------------------------------------

def find_digits():
    """python3-sklearn's digits.csv.gz, located without importing sklearn."""
    candidates = []
    try:
        spec = importlib.util.find_spec("sklearn")
        if spec and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                candidates.append(os.path.join(folder, "datasets", "data", "digits.csv.gz"))
    except (ImportError, ValueError):
        pass
    candidates += sorted(glob.glob("/usr/lib/python3*/dist-packages/sklearn/datasets/data/digits.csv.gz"))
    candidates += sorted(glob.glob("/usr/local/lib/python3*/*-packages/sklearn/datasets/data/digits.csv.gz"))
    for path in candidates:
        if os.access(path, os.R_OK):
            return path
    return None


def load_csv(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            table = np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)
    except (OSError, ValueError, EOFError) as e:
        raise UsageError(f"cannot read --data {path}: {e}") from None
    if table.shape[1] < 2 or table.shape[0] < 2:
        raise UsageError(f"{path}: need features and a label in each of at least 2 rows")
    labels = table[:, -1]
    if np.any(labels < 0) or np.any(labels != np.floor(labels)):
        raise UsageError(f"{path}: the last column must hold integer class labels >= 0")
    x = table[:, :-1]
    top = x.max()
    x = (x / top if top > 0 else x).astype(np.float32)
    return x, labels.astype(np.int64)


def synthetic(n=1797, seed=12345):
    """Deterministic stand-in of the digits' shape: noisy class prototypes."""
    rng = np.random.RandomState(seed)
    proto = np.where(rng.random_sample((10, 64)) < 1 / 3, 0.8, 0.1)
    y = np.arange(n) % 10
    x = np.clip(proto[y] + 0.9 * (rng.random_sample((n, 64)) - 0.5), 0, 1)
    return x.astype(np.float32), y.astype(np.int64)


def split_permutation(n):
    """The C trainer's held-out shuffle (SplitMix64 Fisher-Yates, train_rng.h),
    so both trainers hold out the same samples."""
    state = SPLIT_SEED ^ 0x5DEECE66D
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        state = (state + 0x9e3779b97f4a7c15) & MASK64
        j = Straggler._mix(state) % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm)


def split(x, y):
    perm = split_permutation(len(y))
    ntest = min(max(1, int(round(len(y) * TEST_FRACTION))), len(y) - 1)
    test, train = perm[:ntest], perm[ntest:]
    return x[train], y[train], x[test], y[test]


def shard(n, rank, nranks, uneven):
    """Even: every nranks-th sample.  Uneven: contiguous blocks weighted
    2, 3, 4, 2, 3, 4, ... so ranks run out of data at different steps."""
    if not uneven:
        return np.arange(rank, n, nranks)
    weights = [2 + r % 3 for r in range(nranks)]
    total, before = sum(weights), sum(weights[:rank])
    return np.arange(n * before // total, n * (before + weights[rank]) // total)


# ---- model ---------------------------------------------------------------------

class MLP:
    """ReLU hidden layers, softmax output; each layer's parameters (weights
    out x in, then biases) live in one flat float32 array."""

    def __init__(self, sizes, seed):
        self.sizes = sizes
        rng = np.random.RandomState(seed)
        self.params, self.velocity = [], []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            flat = np.zeros(fan_out * fan_in + fan_out, dtype=np.float32)
            bound = math.sqrt(6.0 / fan_in)
            flat[:fan_out * fan_in] = rng.uniform(-bound, bound, fan_out * fan_in)
            self.params.append(flat)
            self.velocity.append(np.zeros_like(flat))

    def _views(self, layer, flat):
        fan_in, fan_out = self.sizes[layer], self.sizes[layer + 1]
        nw = fan_out * fan_in  # flat may be a longer, padded gradient buffer
        return flat[:nw].reshape(fan_out, fan_in), flat[nw:nw + fan_out]

    def _forward(self, x):
        acts = [x]
        for layer in range(len(self.params)):
            w, b = self._views(layer, self.params[layer])
            z = acts[-1] @ w.T + b
            acts.append(np.maximum(z, 0) if layer + 1 < len(self.params) else z)
        z = acts[-1] - acts[-1].max(axis=1, keepdims=True)
        p = np.exp(z)
        acts[-1] = p / p.sum(axis=1, keepdims=True)
        return acts

    @staticmethod
    def _loss(p, y):
        return float(-np.log(np.maximum(p[np.arange(len(y)), y], 1e-30)).mean())

    def gradient(self, x, y, grads):
        """Mean cross-entropy gradient into grads[l][:nparam]; returns the loss."""
        acts = self._forward(x)
        delta = acts[-1].copy()
        delta[np.arange(len(y)), y] -= 1.0
        delta /= len(y)
        for layer in range(len(self.params) - 1, -1, -1):
            gw, gb = self._views(layer, grads[layer])
            gw[...] = delta.T @ acts[layer]
            gb[...] = delta.sum(axis=0)
            if layer:
                w, _ = self._views(layer, self.params[layer])
                delta = (delta @ w) * (acts[layer] > 0)
        return self._loss(acts[-1], y)

    def apply(self, grads, scale, lr, momentum):
        for layer, flat in enumerate(self.params):
            v = self.velocity[layer]
            v *= momentum
            v += scale * grads[layer][:flat.size]
            flat -= lr * v

    def evaluate(self, x, y):
        p = self._forward(x)[-1]
        return float((p.argmax(axis=1) == y).mean()), self._loss(p, y)


# ---- options -------------------------------------------------------------------

def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.upper().removesuffix("IB").removesuffix("B") if text else ""
    suffix = t[-1] if t and t[-1] in "KMG" else ""
    try:
        value = float(t[:len(t) - len(suffix)])
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected a size such as 4096, 64K or 25M") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a size >= 0")
    return int(value * units[suffix])


def positive(kind):
    def check(text):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"'{text}': expected a value > 0")
        return value
    return check


def word(text):
    if not text or any(c.isspace() or c == "=" for c in text):
        raise argparse.ArgumentTypeError(f"'{text}': expected one word without spaces or '='")
    return text


class QuietParser(argparse.ArgumentParser):
    """Errors become UsageError; help is printed by rank 0 only."""

    def error(self, message):
        raise UsageError(message)

    def _print_message(self, message, file=None):
        if MPI.COMM_WORLD.Get_rank() == 0:
            super()._print_message(message, file)


def options(argv):
    ap = QuietParser(prog="train.py", description=__doc__.split("\n\n")[0],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="64,128,10", help="units per layer, input first")
    ap.add_argument("--lr", type=positive(float), default=0.003)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--batch", type=positive(int), default=16, help="samples per rank and step")
    ap.add_argument("--pad-bytes", type=parse_size, default=0, help="pad each gradient buffer to SIZE")
    ap.add_argument("--compute-ms", type=float, default=20.0, help="emulated compute per step (a sleep)")
    ap.add_argument("--straggler", default="none", help="none, persistent, jitter, burst, onset, ...")
    ap.add_argument("--target", type=float, default=0.92, help="held-out accuracy that ends the run")
    ap.add_argument("--max-steps", type=positive(int), default=3000)
    ap.add_argument("--max-seconds", type=positive(float), default=300.0)
    ap.add_argument("--eval-every", type=positive(int), default=5)
    ap.add_argument("--csv", help="write time_s,step,accuracy,loss at every evaluation")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", help="digits CSV (.gz or plain); default: python3-sklearn's copy")
    ap.add_argument("--mode-label", type=word)
    ap.add_argument("--scenario-label", type=word)
    ap.add_argument("--uneven", action="store_true", help="uneven shards and step budgets")
    ap.add_argument("--stop-via", choices=("flag", "bcast"), default="flag")
    ap.add_argument("--overlap", action="store_true",
                    help="comm.Iallreduce per layer during the backward pass, Waitall before the update")
    ap.add_argument("--verbose", action="store_true")
    o = ap.parse_args(argv)
    if not 0 <= o.momentum < 1:
        raise UsageError(f"--momentum {o.momentum}: expected a value in [0, 1)")
    if not 0 <= o.target <= 1:
        raise UsageError(f"--target {o.target}: expected an accuracy between 0 and 1")
    if not 0 <= o.compute_ms < 3.6e6:
        raise UsageError(f"--compute-ms {o.compute_ms}: expected milliseconds >= 0")
    if o.seed < 0:
        raise UsageError(f"--seed {o.seed}: expected an integer >= 0")
    try:
        o.sizes = [int(s) for s in o.layers.split(",")]
    except ValueError:
        o.sizes = []
    if len(o.sizes) < 2 or min(o.sizes) < 1:
        raise UsageError(f"--layers {o.layers}: expected comma-separated unit counts, e.g. 64,128,10")
    if o.uneven and o.stop_via == "bcast":
        raise UsageError("--uneven needs --stop-via flag: with bcast every rank must reach every evaluation")
    return o


def starcoll_preloaded():
    return "starcoll" in os.environ.get("LD_PRELOAD", "")


# ---- training --------------------------------------------------------------------

def setup(o, rank, nranks):
    """Data, shard, model and buffers; raises UsageError on bad input."""
    if o.data:
        x, y = load_csv(o.data)
        source = f"digits path={o.data}"
    else:
        path = find_digits()
        if path:
            x, y = load_csv(path)
            source = f"digits path={path}"
        else:
            x, y = synthetic()
            source = ("SYNTHETIC (digits.csv.gz of python3-sklearn not found; "
                      "install python3-sklearn or give --data PATH)")
    nclass = int(y.max()) + 1
    if o.sizes[0] != x.shape[1] or o.sizes[-1] != nclass:
        raise UsageError(f"--layers {o.layers}: the data has {x.shape[1]} features and {nclass} "
                         f"classes, so the first size must be {x.shape[1]} and the last {nclass}")
    xtr, ytr, xte, yte = split(x, y)
    mine = shard(len(ytr), rank, nranks, o.uneven)
    if len(mine) == 0:
        raise UsageError(f"cannot give each of {nranks} ranks a share of {len(ytr)} training samples")
    model = MLP(o.sizes, o.seed)
    pad_floats = (o.pad_bytes + 3) // 4
    grads = []
    for layer, flat in enumerate(model.params):
        need = flat.size + (1 if layer == 0 else 0)  # layer 0 carries the stop vote
        grads.append(np.zeros(max(need, pad_floats), dtype=np.float32))
    info = (f"train: data={source} samples={len(y)} train={len(ytr)} test={len(yte)} "
            f"features={x.shape[1]} classes={nclass}")
    return info, (xtr, ytr, xte, yte), mine, model, grads


def train(o, comm):
    rank, nranks = comm.Get_rank(), comm.Get_size()
    straggler = Straggler(o.straggler)
    straggler.check(nranks)
    if o.uneven and not starcoll_preloaded():
        raise UsageError("--uneven: ranks would end at different steps, which plain "
                         "Allreduce cannot finish (it would hang); run it with libstarcoll.so preloaded")
    error, state = "", None
    try:
        state = setup(o, rank, nranks)
        csv = None
        if rank == 0 and o.csv:
            try:
                csv = open(o.csv, "w")
            except OSError as e:
                raise UsageError(f"cannot write --csv {o.csv}: {e.strerror}") from None
            csv.write("time_s,step,accuracy,loss\n")
    except (UsageError, MemoryError) as e:
        error = str(e) or "out of memory"
    # Setup may fail on one rank only; agree before the training loop.
    first_failed = comm.allreduce(rank if error else nranks, op=MPI.MIN)
    if first_failed < nranks:
        if error and rank == first_failed:
            print(f"train.py: {error}", file=sys.stderr, flush=True)
        return 1
    info, (xtr, ytr, xte, yte), mine, model, grads = state

    mode = o.mode_label or (os.environ.get("STARCOLL_MODE") or "auto" if starcoll_preloaded() else "none")
    scenario = o.scenario_label or straggler.pattern
    my_max_steps = o.max_steps
    if o.uneven:
        my_max_steps = max(1, round(o.max_steps * len(mine) / (len(ytr) / nranks)))
    stop_slot = model.params[0].size
    if rank == 0:
        nbytes = sum(g.nbytes for g in grads)
        nparams = sum(p.size for p in model.params)
        print(info)
        print(f"train: ranks={nranks} layers={o.layers} params={nparams} allreduce_bytes_per_step={nbytes} "
              f"batch={o.batch} lr={o.lr:g} momentum={o.momentum:g} compute_ms={o.compute_ms:g} "
              f"straggler={straggler.describe()} target={o.target:g} eval_every={o.eval_every} "
              f"stop_via={o.stop_via}{' uneven' if o.uneven else ''}{' overlap' if o.overlap else ''} python=yes", flush=True)

    def record(t, step, acc, loss):
        if csv:
            csv.write(f"{t:.4f},{step},{acc:.5f},{loss:.5f}\n")
            csv.flush()

    acc, loss = model.evaluate(xte, yte) if rank == 0 else (0.0, 0.0)
    if rank == 0:
        record(0.0, 0, acc, loss)
    rng = np.random.RandomState((o.seed * 1000003 + rank) % (1 << 32))
    order, cursor = mine.copy(), len(mine)  # shuffled before the first batch
    base_s, scale = o.compute_ms * 1e-3, np.float32(1.0 / nranks)
    tta, step, last_eval, want_stop, stop = math.nan, 0, 0, False, False

    comm.Barrier()
    t0 = MPI.Wtime()
    while not stop:
        if cursor + o.batch > len(order):
            rng.shuffle(order)
            cursor = 0
        take = order[cursor:cursor + o.batch] if o.batch <= len(order) else rng.choice(order, o.batch)
        cursor += o.batch
        model.gradient(xtr[take], ytr[take], grads)
        compute_s = base_s + straggler.delay_s(rank, nranks, step, base_s)
        if step + 1 >= my_max_steps:
            want_stop = True
        grads[0][stop_slot] = 1.0 if want_stop else 0.0
        if o.overlap:
            # as DDP and ShallowSpeed do: each layer's Iallreduce starts as
            # the backward pass reaches it (its share of the compute), one
            # Waitall before the update
            reqs = []
            for layer in range(len(grads) - 1, -1, -1):
                time.sleep(compute_s / len(grads))
                reqs.append(comm.Iallreduce(MPI.IN_PLACE, [grads[layer], MPI.FLOAT], op=MPI.SUM))
            MPI.Request.Waitall(reqs)
        else:
            time.sleep(compute_s)
            for layer in range(len(grads) - 1, -1, -1):  # backpropagation order
                comm.Allreduce(MPI.IN_PLACE, [grads[layer], MPI.FLOAT], op=MPI.SUM)
        model.apply(grads, scale, o.lr, o.momentum)
        step += 1
        if o.stop_via == "flag" and grads[0][stop_slot] > 0.5:
            stop = True
        if step % o.eval_every == 0:
            if rank == 0:
                t = MPI.Wtime() - t0
                acc, loss = model.evaluate(xte, yte)
                record(t, step, acc, loss)
                last_eval = step
                if acc >= o.target and math.isnan(tta):
                    tta = t
                if acc >= o.target or t >= o.max_seconds:
                    want_stop = True
                if o.verbose:
                    print(f"train: t={t:.2f}s step={step} acc={acc:.4f} loss={loss:.4f}",
                          file=sys.stderr, flush=True)
            if o.stop_via == "bcast":
                stop = comm.bcast(want_stop, root=0) or stop
        if o.stop_via == "bcast" and step >= my_max_steps:
            stop = True
    end = MPI.Wtime() - t0
    if o.verbose:
        print(f"train: rank {rank} stopped after {step} steps at {end:.2f}s", file=sys.stderr, flush=True)
    if rank == 0:
        acc, loss = model.evaluate(xte, yte)
        if last_eval != step:
            record(end, step, acc, loss)
        if acc >= o.target and math.isnan(tta):
            tta = end
        if csv:
            csv.close()
        tta_text = "nan" if math.isnan(tta) else f"{tta:.3f}"
        print(f"train: elapsed_s={end:.3f} steps_per_s={step / end if end > 0 else 0:.2f} rank0_steps={step}")
        print(f"train: mode={mode} scenario={scenario} ranks={nranks} tta_s={tta_text} "
              f"final_acc={acc:.4f} steps={step}", flush=True)
    return 0


def main(argv):
    comm = MPI.COMM_WORLD
    try:
        o = options(argv)
        return train(o, comm)
    except UsageError as e:
        # Every rank parses the same argv and fails alike: rank 0 speaks.
        if comm.Get_rank() == 0:
            print(f"train.py: {e}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
