#!/bin/bash
# The OSU-style benchmark and the compare script, end to end at 2 to 4
# ranks: validated sums with and without the preload, OSU's columns, only
# MPI_Allreduce timed (a straggler's wait shows, emulated compute does not),
# bad options stop every rank with status 2 and one message, and compare
# prints its table or one clear error.
testlib="$(dirname "$0")/mpi_testlib.sh"
[ -f "$testlib" ] || { echo "FAIL - $testlib is missing"; echo "0 passed, 1 failed"; exit 1; }
. "$testlib"

bench="$top_builddir/benchmarks/starcoll_allreduce"
compare="$top_builddir/benchmarks/starcoll-compare"
sc_need_program "$bench" || finish
sc_need_program "$compare" || finish

# rows NAME: the benchmark's result rows (not the # header lines).
rows() { grep -v '^#' "$SC_WORK/$1.out" | grep -E '^[0-9]+ '; }
# column NAME SIZE N: field N of the row for SIZE.
column() { rows "$1" | awk -v s="$2" -v n="$3" '$1 == s { print $n }'; }

# validated NAME LABEL RC NROWS FIRST NFIELDS: exit 0, NROWS rows starting
# at size FIRST, each with NFIELDS fields and a Pass.
validated() {
    local name=$1 label=$2 rc=$3 nrows=$4 first=$5 nfields=$6 n bad
    n=$(rows "$name" | wc -l)
    bad=$(rows "$name" | awk -v f="$nfields" 'NF != f || $NF != "Pass"' | wc -l)
    if [ "$rc" -eq 0 ] && [ "$n" -eq "$nrows" ] && [ "$bad" -eq 0 ] &&
       [ "$(rows "$name" | head -n 1 | awk '{print $1}')" = "$first" ]; then
        ok "$label: $n sizes from $first bytes, all Pass"
    else
        fail "$label: status $rc, $n rows (want $nrows from $first), $bad not Pass with $nfields fields"
        sc_show "$name"
    fi
}

# 1. Exact sums without the preload, float and double, OSU's -f columns.
sc_job_plain plain-float 2 "$bench" -m 4:64K -i 5 -x 1 -c -f
validated plain-float "no preload, float, -f -c" $? 15 4 6
if grep -q '^# Size *Avg Latency(us) *Min Latency(us) *Max Latency(us) *Iterations *Validation$' "$SC_WORK/plain-float.out" &&
   grep -q '^# starcoll allreduce benchmark$' "$SC_WORK/plain-float.out"; then
    ok "header lines as OSU prints them"
else
    fail "header lines differ from OSU's"; sc_show plain-float
fi
sc_job_plain plain-double 3 "$bench" -m 4:4K -i 5 -x 1 -c -T double
validated plain-double "no preload, double, 3 ranks, 4 B skipped" $? 10 8 3

# 2. The same through the library, eligible from the first byte; then as
# a user runs it.
if sc_need_library; then
    for cfg in sync hier:2; do
        env=(-x "STARCOLL_MODE=${cfg%%:*}" -x STARCOLL_MIN_BYTES=0)
        [[ $cfg == *:* ]] && env+=(-x "STARCOLL_GROUP=${cfg#*:}")
        sc_job "pre-$cfg" 4 "${env[@]}" "$bench" -m 4:1M -i 3 -x 1 -c
        validated "pre-$cfg" "preload $cfg, 4 ranks" $? 19 4 3
    done
    # Under the tolerant policies with the default threshold, as a user runs
    # it: the sizes under 256 B pass through, so the step is first learned
    # with no eligible call in it; the first eligible size is off that
    # pattern, and every rank must agree to learn again (it read the slot
    # of a step of none, and crashed every rank).
    for mode in quorum groups auto; do
        sc_job "pre-$mode" 4 -x "STARCOLL_MODE=$mode" "$bench" -m 4:1M -i 3 -x 1 -c
        validated "pre-$mode" "preload $mode, 4 ranks, default threshold" $? 19 4 3
        relearns=$(grep -c "comm 0: the calls' pattern changed [1-9][0-9]* time(s)" "$SC_WORK/pre-$mode.report")
        [ "$relearns" = 1 ] && ok "preload $mode: the first eligible size made every rank learn the step again" ||
            { fail "preload $mode: no relearning in the report after a step of no eligible call"; sc_show "pre-$mode"; }
    done
fi

# 3. Bad options: status 2 on every rank, one message from rank 0, no hang.
for args in "-T half" "-m 64:32" "--straggler rank=5,ms=1" "--straggler slow" "-i 0" "--bogus" "-m"; do
    read -r -a argv <<<"$args"
    sc_job_plain bad 2 "$bench" "${argv[@]}"
    rc=$?
    n=$(grep -c '^starcoll_allreduce: ' "$SC_WORK/bad.err")
    if [ "$rc" -eq 2 ] && [ "$n" -eq 1 ] && grep -q '^usage: ' "$SC_WORK/bad.err" && [ -z "$(rows bad)" ]; then
        ok "'$args' rejected: status 2, $(grep '^starcoll_allreduce: ' "$SC_WORK/bad.err")"
    else
        fail "'$args': status $rc, $n messages (want 2 and 1)"; sc_show bad
    fi
done

# 4. Timing covers the call only: rank 0 waits out rank 1's 60 ms inside
# the call, while rank 1 does not count its own sleep; common compute is
# not timed.  The margins leave room for a busy machine's wake-up delays.
sc_job_plain slow 2 "$bench" -m 1K:1K -i 8 -x 1 -f --straggler rank=1,ms=60
rc=$? avg=$(column slow 1024 2) min=$(column slow 1024 3) max=$(column slow 1024 4)
if [ "$rc" -eq 0 ] && [ -n "$avg" ] && awk -v lo="$min" -v hi="$max" \
       'BEGIN { exit !(hi >= 50000 && lo <= hi - 25000) }'; then
    ok "straggler rank=1,ms=60: waiting rank ${max} us, straggler ${min} us, avg ${avg} us"
else
    fail "straggler rank=1,ms=60: status $rc, avg=$avg min=$min max=$max (want max >= 50000, min <= max - 25000)"; sc_show slow
fi
sc_job_plain compute 2 "$bench" -m 1K:1K -i 8 -x 1 -f --compute-ms 60
rc=$? max=$(column compute 1024 4)
if [ "$rc" -eq 0 ] && [ -n "$max" ] && awk -v hi="$max" 'BEGIN { exit !(hi < 30000) }'; then
    ok "--compute-ms 60 is not timed: max latency $max us"
else
    fail "--compute-ms 60: status $rc, max latency ${max:-none} us (want < 30000)"; sc_show compute
fi

# 5. compare: its table without the library, and one clear error for a bad one.
timeout -k 10 "${SC_RUN_TIMEOUT:-120}" "$compare" -np 2 --configs none --rounds 2 -m 8:64 -i 5 -x 1 \
    >"$SC_WORK/cmp.out" 2>"$SC_WORK/cmp.err"
rc=$?
n=$(grep -cE '^[0-9]+ +[0-9.]+$' "$SC_WORK/cmp.out")
if [ "$rc" -eq 0 ] && [ "$n" -eq 4 ] && grep -q '^# Size *none(us)$' "$SC_WORK/cmp.out" &&
   grep -q '\[2/2\] round 2/2 none' "$SC_WORK/cmp.err"; then
    ok "compare --configs none: 4 sizes over 2 rounds, progress on stderr"
else
    fail "compare --configs none: status $rc, $n rows"; sc_show cmp
fi
timeout -k 10 60 "$compare" -np 2 --configs "none sync" --lib "$SC_WORK/no-such-lib.so" >"$SC_WORK/cmpbad.out" 2>"$SC_WORK/cmpbad.err"
rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$SC_WORK/cmpbad.err")" -eq 1 ] && grep -q 'no-such-lib.so' "$SC_WORK/cmpbad.err"; then
    ok "compare with a missing library: status 2, $(cat "$SC_WORK/cmpbad.err")"
else
    fail "compare with a missing library: status $rc"; sc_show cmpbad
fi
if sc_preloading && [ -f "$SC_LIB" ]; then
    timeout -k 10 "${SC_RUN_TIMEOUT:-120}" "$compare" -np 2 --configs "none sync hier:2" --rounds 1 -m 64K:128K -i 5 -x 1 \
        --lib "$SC_LIB" --min-bytes 0 -c >"$SC_WORK/cmplib.out" 2>"$SC_WORK/cmplib.err"
    rc=$?
    n=$(awk '$1 ~ /^[0-9]+$/ && NF == 7 && $5 ~ /^[0-9.]+$/ && $6 ~ /^[0-9.]+$/' "$SC_WORK/cmplib.out" | wc -l)
    if [ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && grep -q 'sync/none *hier:2/sync *sync-none(us)$' "$SC_WORK/cmplib.out"; then
        ok "compare none sync hier:2 with the library: ratio columns for 2 sizes, validation passed"
    else
        fail "compare with the library: status $rc, $n complete rows"; sc_show cmplib
    fi
fi
finish
