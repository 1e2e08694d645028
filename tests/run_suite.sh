#!/bin/bash
# Runs every test named on the command line (CUnit binaries and mpirun
# scripts), shows each one's output, and closes with the totals line
# "N passed, N failed".  A test counts its own cases through its closing
# "N passed, N failed" line; a test that dies before printing it counts as
# one failure.  Exit status is non-zero when anything failed.
total_pass=0 total_fail=0 total_skip=0
for t in "$@"; do
    echo "=== $t"
    out=$(mktemp)
    if [ -x "./$t" ]; then cmd="./$t"; else cmd="$srcdir/$t"; fi
    timeout "${SC_TEST_TIMEOUT:-600}" "$cmd" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
    rm -f "$out"
    if [ -n "$line" ]; then
        p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
        f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
        s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
        total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + ${s:-0}))
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
            echo "*** $t exited with status $rc"; total_fail=$((total_fail + 1))
        fi
    else
        echo "*** $t ended (status $rc) without its closing line"
        total_fail=$((total_fail + 1))
    fi
done
echo
if [ "$total_skip" -gt 0 ]; then
    echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
    echo "$total_pass passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
