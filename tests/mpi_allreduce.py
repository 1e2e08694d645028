"""comm.Allreduce from mpi4py on NumPy buffers, as a Python training code
calls it, run by mpi_py.sh under the starcoll preload.

Float32 and float64 sums large enough to be eligible at the default
STARCOLL_MIN_BYTES (256 bytes), in and out of place, on the world and on a
split; then calls starcoll must pass through untouched (a small int sum,
a MAX).  Inputs are integer-valued, so every result must equal the sum
computed here from every rank's known input, bitwise.  Random-valued
sums are compared within a relative tolerance (hier may round
differently) and must be bitwise equal on every rank.

Rank 0 prints one line per check, "expect: eligible=N" (eligible calls
summed over ranks) and the closing "N passed, N failed".  Bookkeeping
uses gather/bcast, never Allreduce, so the library's counts are ours.
"""
import sys

import mpi4py
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
MIN_BYTES = 256   # starcoll's default STARCOLL_MIN_BYTES
checks = []          # (description, passed on this rank, what passing means)
calls = {"eligible": 0, "passthrough": 0}


def integer_input(r, n, dtype, salt):
    """Rank r's integer-valued input: sums stay exact in any order."""
    return ((np.arange(n, dtype=np.int64) * 7 + r * 13 + salt) % 2001 - 1000).astype(dtype)


def random_input(r, n, dtype, salt):
    return np.random.default_rng(1000 * salt + r).uniform(0.5, 1.5, n).astype(dtype)


def count_call(c, buf, op):
    """How starcoll should count this call (DESIGN.md, "Which calls are touched")."""
    eligible = (op == MPI.SUM and buf.dtype in (np.float32, np.float64) and c.Get_size() >= 2
                and buf.nbytes >= MIN_BYTES)
    calls["eligible" if eligible else "passthrough"] += 1


def same_on_all_ranks(c, buf):
    digests = c.allgather(buf.tobytes())
    return all(d == digests[0] for d in digests)


def check_sum(name, c, ranks, n, dtype, salt, in_place=False, random=False):
    """Allreduce SUM of each rank's input over communicator c, whose world
    ranks are `ranks`, against the sum computed here."""
    make = random_input if random else integer_input
    send = make(rank, n, dtype, salt)
    expected = np.zeros(n, dtype=np.float64)
    for r in ranks:
        expected += make(r, n, dtype, salt).astype(np.float64)
    if in_place:
        recv = send.copy()
        c.Allreduce(MPI.IN_PLACE, recv, op=MPI.SUM)
    else:
        recv = np.empty_like(send)
        c.Allreduce(send, recv, op=MPI.SUM)
    count_call(c, send, MPI.SUM)
    if random:
        tol = 1e-5 if dtype == np.float32 else 1e-12
        good = bool(np.all(np.abs(recv - expected) <= tol * np.abs(expected)))
        good = same_on_all_ranks(c, recv) and good
        verdict = "within tolerance of the sum, identical on every rank"
    else:
        good = np.array_equal(recv, expected.astype(dtype))
        verdict = "exact on every rank"
    checks.append((name, good, verdict))


def check_passthrough():
    """Calls starcoll must leave alone: a small int sum and a MAX."""
    n = 10
    send = np.arange(n, dtype=np.int32) + rank
    recv = np.empty_like(send)
    comm.Allreduce(send, recv, op=MPI.SUM)
    count_call(comm, send, MPI.SUM)
    expected = np.arange(n, dtype=np.int32) * size + size * (size - 1) // 2
    checks.append(("small int32 SUM (passes through)", np.array_equal(recv, expected), "exact on every rank"))

    send = integer_input(rank, 50000, np.float32, 5)
    recv = np.empty_like(send)
    comm.Allreduce(send, recv, op=MPI.MAX)
    count_call(comm, send, MPI.MAX)
    expected = np.max([integer_input(r, 50000, np.float32, 5) for r in range(size)], axis=0)
    checks.append(("float32 MAX of 50000 (passes through)", np.array_equal(recv, expected), "exact on every rank"))


def main():
    world = list(range(size))
    check_sum("float32 SUM of 65536", comm, world, 65536, np.float32, 1)
    check_sum("float64 SUM of 100000", comm, world, 100000, np.float64, 2)
    check_sum("float32 SUM of 262144, in place", comm, world, 262144, np.float32, 3, in_place=True)
    check_sum("float64 SUM of 16384, in place", comm, world, 16384, np.float64, 4, in_place=True)
    check_sum("float32 SUM of 65536, random values", comm, world, 65536, np.float32, 6, random=True)
    check_sum("float64 SUM of 100000, random values", comm, world, 100000, np.float64, 7, random=True)
    half = comm.Split(rank % 2, rank)
    check_sum("float64 SUM of 20000 on a parity split", half, [r for r in world if r % 2 == rank % 2],
              20000, np.float64, 8)
    half.Free()
    check_passthrough()

    verdicts = comm.gather([good for _, good, _ in checks], root=0)
    counted = comm.gather(calls, root=0)
    failed = 0
    if rank == 0:
        print(f"mpi_allreduce.py: {size} ranks, mpi4py {mpi4py.__version__}, numpy {np.__version__}")
        for i, (name, _, verdict) in enumerate(checks):
            good = all(v[i] for v in verdicts)
            failed += not good
            print(f"{'ok  ' if good else 'FAIL'} - {name}: {verdict if good else 'wrong on some rank'}")
        print(f"expect: eligible={sum(c['eligible'] for c in counted)} "
              f"passthrough={sum(c['passthrough'] for c in counted)}")
        print(f"{len(checks) - failed} passed, {failed} failed")
        sys.stdout.flush()
    failed = comm.bcast(failed, root=0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
