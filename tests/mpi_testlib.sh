# Sourced by the mpirun test scripts (mpi_*.sh): counting checks, running
# one job under a time limit with its output and starcoll report captured,
# and reading the report's totals line.  Not a test by itself.
#
# Environment:
#   SC_NO_PRELOAD=1   run without libstarcoll.so (checks the tests alone;
#                     the checks that need the library's report are skipped)
#   SC_RUN_TIMEOUT    seconds one mpirun may take (default 120); a hung
#                     job is killed and counts as a failure
#   SC_KEEP_WORK=1    keep the scratch folder with every job's output

SC_ENV_SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mpi_env.sh"
. "$SC_ENV_SCRIPT"
# timeout(1) runs programs, not shell functions: jobs run in a child bash
# that sources mpi_env.sh again, with what it needs exported.
export MPIRUN top_builddir SC_LIB

# The user's own STARCOLL_* settings would leak into the ranks (local
# ranks inherit mpirun's environment): every job states its own.
for sc_var in $(env | sed -n 's/^\(STARCOLL_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$sc_var"; done
unset sc_var

sc_passed=0 sc_failed=0 sc_skipped=0
ok()   { sc_passed=$((sc_passed + 1)); echo "ok   - $*"; }
fail() { sc_failed=$((sc_failed + 1)); echo "FAIL - $*"; }
skip() { sc_skipped=$((sc_skipped + 1)); echo "skip - $*"; }

# finish: the closing line the suite runner reads, and the exit status.
finish() {
    if [ "$sc_skipped" -gt 0 ]; then
        echo "$sc_passed passed, $sc_failed failed, $sc_skipped skipped"
    else
        echo "$sc_passed passed, $sc_failed failed"
    fi
    [ "$sc_failed" -eq 0 ] && exit 0
    exit 1
}

SC_WORK=$(mktemp -d "${TMPDIR:-/tmp}/starcoll-mpitest.XXXXXX") || { echo "cannot create a scratch folder"; echo "0 passed, 1 failed"; exit 1; }
if [ "${SC_KEEP_WORK:-0}" = 1 ]; then
    echo "(scratch folder kept: $SC_WORK)"
else
    trap 'rm -rf "$SC_WORK"' EXIT
fi

sc_preloading() { [ "${SC_NO_PRELOAD:-0}" != 1 ]; }

# sc_need_library: the library must exist unless SC_NO_PRELOAD=1.
sc_need_library() {
    sc_preloading || { echo "SC_NO_PRELOAD=1: running without libstarcoll.so; report checks skipped"; return 0; }
    [ -f "$SC_LIB" ] && return 0
    fail "libstarcoll.so not found at $SC_LIB (build plugin/ first, or set SC_NO_PRELOAD=1 to check the tests alone)"
    return 1
}

# sc_need_program PATH: a test program built by make check.
sc_need_program() {
    [ -x "$1" ] && return 0
    fail "test program $1 is missing (run make check, which builds it)"
    return 1
}

# sc_job NAME NP [mpirun options...] program args...
# Runs one job with the preload (or without it under SC_NO_PRELOAD=1).
# stdout goes to $SC_WORK/NAME.out, stderr to NAME.err; the report goes
# to NAME.report unless the options set STARCOLL_REPORT themselves.
# Returns the job's exit status (124 when it ran out of time).
sc_job() {
    local name=$1 np=$2 a report=("-x" "STARCOLL_REPORT=$SC_WORK/$1.report")
    sc_fresh_outputs "$name"
    shift 2
    for a in "$@"; do case $a in STARCOLL_REPORT=*) report=() ;; esac; done
    local runner=run_sc
    sc_preloading || runner=run_mpi
    sc_timed "$runner" "$np" "${report[@]}" "$@" >"$SC_WORK/$name.out" 2>"$SC_WORK/$name.err"
}

# sc_fresh_outputs NAME: a job run again under the same name (one more
# attempt) starts without the last one's report and traces, which starcoll
# never overwrites (it would write NAME.report.1 beside them).
sc_fresh_outputs() {
    rm -f "$SC_WORK/$1.report" "$SC_WORK/$1.report".* "$SC_WORK/$1.trace".*
}

# sc_timed run_sc|run_mpi NP args...: the mpi_env.sh launcher under a time limit.
sc_timed() {
    timeout -k 10 "${SC_RUN_TIMEOUT:-120}" bash -c '. "$0"; "$@"' "$SC_ENV_SCRIPT" "$@"
}

# sc_job_plain NAME NP [mpirun options...] program args...: as sc_job,
# without the preload whatever SC_NO_PRELOAD says (for wrappers that set
# LD_PRELOAD themselves, rank by rank).
sc_job_plain() {
    local name=$1 np=$2
    sc_fresh_outputs "$name"
    shift 2
    sc_timed run_mpi "$np" -x "STARCOLL_REPORT=$SC_WORK/$name.report" "$@" >"$SC_WORK/$name.out" 2>"$SC_WORK/$name.err"
}

# sc_show NAME: a failed job's output, indented, to see why.
sc_show() {
    echo "    --- stdout of $1"
    sed 's/^/    /' "$SC_WORK/$1.out" | tail -n 40
    echo "    --- stderr of $1"
    sed 's/^/    /' "$SC_WORK/$1.err" | head -n 40
    # the report's policy, tables and decisions: CI's scratch folder goes
    # with the run, and a rare failure is read from the log alone
    [ -s "$SC_WORK/$1.report" ] || return 0
    echo "    --- report of $1"
    grep -v '^@ \(Monitor\|rank: \)' "$SC_WORK/$1.report" | cut -c1-400 | sed 's/^/    /' | head -n 60
}

# sc_closing NAME: "P F" from the program's closing "N passed, N failed".
sc_closing() {
    grep -E '^[0-9]+ passed, [0-9]+ failed' "$SC_WORK/$1.out" | tail -n 1 |
        sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/'
}

# sc_program_passed NAME RC: the job exited 0 and its program reported
# some checks and no failure.
sc_program_passed() {
    local c
    c=$(sc_closing "$1")
    [ "$2" -eq 0 ] && [ -n "$c" ] && [ "${c#* }" -eq 0 ] && [ "${c% *}" -gt 0 ]
}

# sc_totals NAME FIELD: a field of the library's totals line
# ("starcoll: totals eligible=N passthrough=N bytes=N sync=N ..."), from
# the report file, or from stderr when the report went there.
sc_totals() {
    local f="$SC_WORK/$1.report"
    [ -f "$f" ] || f="$SC_WORK/$1.err"
    grep -E '^starcoll: totals ' "$f" 2>/dev/null | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# sc_ran_in_quorum NAME WHAT: some call of job NAME ran in quorum (the
# totals line's count); WHAT says which calls were to, for the ok or fail
# line.  A run whose step was never learned, or stayed exact, fails it.
sc_ran_in_quorum() {
    local n
    n=$(sc_totals "$1" quorum)
    if [ "${n:-0}" -gt 0 ]; then ok "$1: $2 ran in quorum ($n calls)"
    else fail "$1: no call ran in quorum ($2 were to)"; sc_show "$1"; fi
}

# sc_expect NAME FIELD: a field of the program's "expect: eligible=N ..." line.
sc_expect() {
    grep -E '^expect: ' "$SC_WORK/$1.out" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# sc_notices NAME: the library's lines on stderr other than the totals line.
sc_notices() {
    grep -E '^starcoll: ' "$SC_WORK/$1.err" | grep -vE '^starcoll: totals ' || true
}

# sc_check_totals NAME LABEL MODE: the totals line agrees with what the
# program expected (eligible and pass-through calls) and every eligible
# call ran in MODE (not checked when MODE is "-").  Skipped without the
# preload.
sc_check_totals() {
    local name=$1 label=$2 mode=$3
    sc_preloading || return 0
    local te tp ee ep tm
    te=$(sc_totals "$name" eligible) tp=$(sc_totals "$name" passthrough)
    ee=$(sc_expect "$name" eligible) ep=$(sc_expect "$name" passthrough)
    if [ -z "$te" ]; then
        fail "$label: no totals line in the starcoll report"
        return
    fi
    if [ "$te" = "$ee" ] && [ "$tp" = "$ep" ] && [ "$te" -gt 0 ]; then
        ok "$label: totals count eligible=$te passthrough=$tp, as expected"
    else
        fail "$label: totals count eligible=$te passthrough=$tp, expected eligible=$ee passthrough=$ep"
    fi
    [ "$mode" = - ] && return
    local m all_in_mode=1 counts=""
    for m in sync hier quorum groups; do
        tm=$(sc_totals "$name" "$m")
        counts="$counts $m=${tm:-?}"
        if [ "$m" = "$mode" ]; then [ "${tm:-x}" = "$te" ] || all_in_mode=0
        else [ "${tm:-x}" = 0 ] || all_in_mode=0; fi
    done
    if [ "$all_in_mode" = 1 ]; then
        ok "$label: all $te eligible calls ran in $mode"
    else
        fail "$label: eligible calls should all run in $mode; totals say$counts"
    fi
}

# sc_adopt NAME RC LABEL: take over the "ok"/"FAIL" lines a program printed
# as this script's own checks; a job that failed without saying why, or
# died before its closing line, is one failure.
sc_adopt() {
    local name=$1 rc=$2 label=$3 line c
    while IFS= read -r line; do
        case $line in
            "ok   - "*) ok "$label: ${line#ok   - }" ;;
            "FAIL - "*) fail "$label: ${line#FAIL - }" ;;
        esac
    done < "$SC_WORK/$name.out"
    c=$(sc_closing "$name")
    if [ -z "$c" ] || { [ "$rc" -ne 0 ] && [ "${c#* }" -eq 0 ]; }; then
        fail "$label: job ended with status $rc${c:+ although its program reported no failure}"
        sc_show "$name"
    elif [ "${c#* }" -ne 0 ]; then
        sc_show "$name"
    fi
}

# sc_mode_job NAME MODE -- ARGS...: an 8-rank job under STARCOLL_MODE=MODE
# (ARGS: more mpirun options, then the program), its checks adopted.
sc_mode_job() {
    local name=$1 mode=$2
    shift 3
    sc_job "$name" 8 -x STARCOLL_MODE="$mode" "$@"
    sc_adopt "$name" $? "$name"
}

# sc_python_loops: py, the interpreter with mpi4py and NumPy (PYTHON_MPI,
# else Debian's /usr/bin/python3); pyscript, mpi_loops.py beside these
# tests; have_py=1 when py imports mpi4py and NumPy.
sc_python_loops() {
    py=${PYTHON_MPI:-/usr/bin/python3}
    pyscript="$(cd "$(dirname "$0")" && pwd)/mpi_loops.py"
    have_py=0
    "$py" -c 'import mpi4py, numpy' >/dev/null 2>&1 && have_py=1
}
