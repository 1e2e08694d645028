#!/bin/bash
# The README demo: set up, then train an MLP on the digits data at 8 ranks
# under three straggler scenarios (none, one rank persistently 2x slow,
# lognormal jitter), sync against auto, side by side, and print the
# time-to-accuracy table.  About two minutes.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build="${STARCOLL_BUILD:-$top/_build}"
cd "$build"
exec bash "$top/benchmarks/scenarios" --demo --trainer "$build/benchmarks/starcoll_train" \
    --lib "$build/plugin/.libs/libstarcoll.so" --out "$build/demo" "$@"
