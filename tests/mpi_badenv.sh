#!/bin/bash
# Bad STARCOLL_* values are reported and survived (DESIGN.md, "Policy"):
# for every variable of the design's table, one or more bad values (unknown
# word, negative, garbage, out of range, unusable path).  Each job runs
# the quick exactness program at 4 ranks, in hier with group 2 and
# STARCOLL_MIN_BYTES=0 unless the variable under test is one of those.
# Checks per value: the job exits 0 with exact results; stderr holds
# exactly one "starcoll: " line, and it names the variable and the value;
# the library fell back to a safe setting (the totals count what the
# program expects, with a bad STARCOLL_MIN_BYTES counted at the default
# 256 bytes, and every eligible call ran in hier, or in sync for a bad mode).
# Then ranks that disagree on the policy: one line saying so, and sync.
. "$(dirname "$0")/mpi_testlib.sh"

prog="$top_builddir/tests/mpi_exact"
sc_need_program "$prog" || finish
sc_need_library || finish

# Quick jobs: a hung one is killed sooner than the default allows.
: "${SC_RUN_TIMEOUT:=60}"
NP=4
BASE=(STARCOLL_MODE=hier STARCOLL_GROUP=2 STARCOLL_MIN_BYTES=0)
case_no=0

# exited_exact NAME RC LABEL: the job exited 0 and mpi_exact found every call exact.
exited_exact() {
    local c
    c=$(sc_closing "$1")
    if sc_program_passed "$1" "$2"; then
        ok "$3: job exits 0, ${c% *} calls exact"
        return 0
    fi
    fail "$3: exit status $2, mpi_exact says ${c:-nothing}"
    sc_show "$1"
    return 1
}

# bad VAR VALUE [VAR=VALUE...]: run with VAR set to VALUE on every rank,
# the base settings (except VAR) and the extra settings given.
bad() {
    local var=$1 value=$2
    shift 2
    case_no=$((case_no + 1))
    local name="badenv-$case_no" label="$var='$value'" opts=() s mode=hier
    for s in "${BASE[@]}" "$@"; do
        [ "${s%%=*}" = "$var" ] || opts+=(-x "$s")
    done
    opts+=(-x "$var=$value")
    # a bad mode, or a bad list of calls to keep exact: sync
    case $var in STARCOLL_MODE | STARCOLL_EXACT) mode=sync ;; esac
    sc_job "$name" "$NP" "${opts[@]}" "$prog" -q -t
    exited_exact "$name" $? "$label" || return
    sc_preloading || return 0
    local notices count
    notices=$(sc_notices "$name")
    count=$(printf '%s' "$notices" | grep -c '^starcoll: ')
    if [ "$count" -eq 1 ] && printf '%s' "$notices" | grep -qF -- "$var" && printf '%s' "$notices" | grep -qF -- "$value"; then
        ok "$label: one line: $notices"
    elif [ "$count" -eq 0 ]; then
        fail "$label: no starcoll line on stderr"
    else
        fail "$label: expected one starcoll line naming $var and '$value', got $count:"
        printf '%s\n' "$notices" | sed 's/^/    /'
    fi
    sc_check_totals "$name" "$label" "$mode"
}

bad STARCOLL_MODE fast
bad STARCOLL_MODE 'sync hier'
bad STARCOLL_SELECTOR neural
bad STARCOLL_MODEL /nonexistent/starcoll-model.txt STARCOLL_SELECTOR=learned
bad STARCOLL_MIN_BYTES -5
bad STARCOLL_MIN_BYTES 12Q
bad STARCOLL_MIN_BYTES abc
bad STARCOLL_MIN_BYTES 99999999999999999999G
bad STARCOLL_QUORUM 1.5
bad STARCOLL_QUORUM 0
bad STARCOLL_QUORUM -2
bad STARCOLL_QUORUM abc
bad STARCOLL_STALENESS -1
bad STARCOLL_STALENESS abc
bad STARCOLL_SCALE half
bad STARCOLL_GROUP 0
bad STARCOLL_GROUP node2
bad STARCOLL_GROUP -3
bad STARCOLL_EPOCH 0
bad STARCOLL_EPOCH x
bad STARCOLL_PAPI_EVENTS ''
bad STARCOLL_NIC ''
# Files nobody can create, not even root.
bad STARCOLL_TRACE /proc/starcoll-no-such-dir/trace
bad STARCOLL_REPORT ''
bad STARCOLL_REPORT /proc/starcoll-no-such-dir/report
bad STARCOLL_INJECT rank=x
bad STARCOLL_INJECT rank=1,delay=abc
bad STARCOLL_INJECT rank=1,delay=5ms,prob=2
bad STARCOLL_INJECT rank=1
bad STARCOLL_INJECT colour=red
bad STARCOLL_VERBOSE 9
bad STARCOLL_VERBOSE -1
bad STARCOLL_VERBOSE loud
bad STARCOLL_CUDA 0
bad STARCOLL_COLL_WAIT nonblocking
bad STARCOLL_EXACT '100;441'
bad STARCOLL_EXACT 100:int

# disagree SETTING_FOR_RANK_1 [VAR=VALUE...]: rank 1 gets one more setting
# than the others (a wrapper exports it, then execs the program with the
# preload).  Expected: one line that says the ranks disagree, exact
# results, every eligible call in sync.
disagree() {
    local special=$1
    shift
    case_no=$((case_no + 1))
    local name="badenv-$case_no" label="rank 1 with $special" opts=() s lib=none
    for s in "$@"; do opts+=(-x "$s"); done
    sc_preloading && lib=$SC_LIB
    local wrapper='r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; [ "$r" = 1 ] && export "$1"; shift
[ "$SC_PRELOAD_LIB" = none ] || export LD_PRELOAD="$SC_PRELOAD_LIB"; exec "$@"'
    sc_job_plain "$name" "$NP" "${opts[@]}" -x "SC_PRELOAD_LIB=$lib" sh -c "$wrapper" sh "$special" "$prog" -q -t
    exited_exact "$name" $? "$label" || return
    sc_preloading || return 0
    local notices count
    notices=$(sc_notices "$name")
    count=$(printf '%s' "$notices" | grep -c '^starcoll: ')
    if [ "$count" -eq 1 ] && printf '%s' "$notices" | grep -qiE 'disagree|differ|mismatch'; then
        ok "$label: one line: $notices"
    else
        fail "$label: expected one starcoll line saying the ranks disagree, got $count:"
        printf '%s\n' "$notices" | sed 's/^/    /'
    fi
    sc_check_totals "$name" "$label" sync
}

disagree STARCOLL_MODE=hier STARCOLL_MODE=sync STARCOLL_MIN_BYTES=0
# Ranks that disagree on eligibility must not deadlock.
disagree STARCOLL_MIN_BYTES=1M STARCOLL_MODE=hier STARCOLL_GROUP=2 STARCOLL_MIN_BYTES=0
disagree STARCOLL_GROUP=3 STARCOLL_MODE=hier STARCOLL_GROUP=2 STARCOLL_MIN_BYTES=0
# Blocking and polled collectives do not match: one rank polled alone
# must not be the only one (sync everywhere, as for any disagreement).
disagree STARCOLL_COLL_WAIT=polled STARCOLL_MODE=quorum STARCOLL_MIN_BYTES=0
# Calls one rank alone keeps exact change sums: sync everywhere.
disagree STARCOLL_EXACT=12345 STARCOLL_MODE=quorum STARCOLL_MIN_BYTES=0
finish
