#!/bin/bash
# The README test command: set up, then make check (unit tests with CUnit,
# multi-rank tests under mpirun); ends with "N passed, N failed".
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
cd "${STARCOLL_BUILD:-$top/_build}"
exec make check
