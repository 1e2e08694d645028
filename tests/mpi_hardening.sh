#!/bin/bash
# What a misconfigured job or a hostile machine does to starcoll, and what
# it must do instead (DESIGN.md, "Policy"; issue "Hardening"):
#   per-rank settings   STARCOLL_REPORT=none on some ranks, STARCOLL_SCHEDULE
#                       on some: one line, rank 0's setting everywhere, no hang;
#   partial preload     the library on some ranks only (or not on rank 0): one
#                       clear line, every call passes through, exact, exit 0;
#   files               an existing report file is kept (a new name is used), a
#                       symbolic link is never followed (nor a dangling one's
#                       target created), a failed write is said;
#   messages            a huge value, a newline in a value, out-of-range values:
#                       one readable line each;
#   soak                100,000 eligible calls or more at 8 ranks: random delays
#                       and spikes, MPI_Pcontrol(0/1/2), hot swaps;
#                       conservation, replicas, no call over 10 s; then two
#                       communicators (every tensor fused, small tensors
#                       fused, unfused with starcoll's collectives polled by
#                       STARCOLL_COLL_WAIT=auto and by =polled, the halves
#                       parting mid-run and the world's collectives blocking
#                       again), quiet and beside stress-ng --cpu 4; one
#                       communicator never polls;
#   machine pauses      every rank stopped (SIGSTOP) is taken out of the
#                       bound; a rank that stops calling is not;
#   stall sentinel      one rank's process stopped holds the coordinator's
#                       engine thread in a reduction, where the watchdog is
#                       mute: the sentinel thread says so while it lasts;
#   stall rule          rounds that cannot reach their quorum for 10 s close
#                       below it: the coordinator says so once, whichever
#                       rank it is and on whichever communicator, the others
#                       go on, and nothing is lost; a sub-communicator's
#                       lines name world ranks.
. "$(dirname "$0")/mpi_testlib.sh"
sc_need_library || finish
sc_preloading || { skip "SC_NO_PRELOAD=1: these checks are about the library"; finish; }
loops="$top_builddir/benchmarks/starcoll_loops"
sc_need_program "$loops" || finish
: "${SC_RUN_TIMEOUT:=180}"

# on_ranks NAME NP FROM BELOW "VAR=VALUE" [mpirun options...] -- program args:
# ranks FROM..BELOW-1 get VAR=VALUE (LD_PRELOAD=... for the library itself).
on_ranks() {
    local name=$1 np=$2 from=$3 below=$4 setting=$5
    shift 5
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    local wrapper='r=${OMPI_COMM_WORLD_RANK:-0}; from=$1 below=$2 setting=$3; shift 3
[ "$r" -ge "$from" ] && [ "$r" -lt "$below" ] && export "$setting"; exec "$@"'
    sc_job_plain "$name" "$np" "${opts[@]}" sh -c "$wrapper" sh "$from" "$below" "$setting" "$@"
}

lines_of() { grep -c "^starcoll: $2" "$SC_WORK/$1.err"; }
# figure NAME FIELD: a field of the program's figures line ("loops: ... FIELD=N").
figure() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$SC_WORK/$1.out" | tail -n 1; }

# ---- settings that differ between ranks ----------------------------------
on_ranks report-split 8 4 8 STARCOLL_REPORT=none -x LD_PRELOAD="$SC_LIB" -x STARCOLL_MODE=auto -- \
    "$loops" --loop fresh --steps 40
rc=$?
sc_adopt report-split $rc "STARCOLL_REPORT=none on ranks 4-7"
if [ "$(lines_of report-split 'STARCOLL_REPORT differs between ranks')" = 1 ] && [ -s "$SC_WORK/report-split.report" ]; then
    ok "STARCOLL_REPORT=none on ranks 4-7: one line, and rank 0's report written"
else
    fail "STARCOLL_REPORT=none on ranks 4-7: expected one line saying it differs and rank 0's report"
    sc_show report-split
fi
on_ranks schedule-split 8 0 1 STARCOLL_SCHEDULE=10:quorum:6 -x LD_PRELOAD="$SC_LIB" -x STARCOLL_MODE=auto -- \
    "$loops" --loop fresh --steps 40
sc_adopt schedule-split $? "STARCOLL_SCHEDULE on rank 0 only"
if [ "$(lines_of schedule-split 'STARCOLL_SCHEDULE differs between ranks')" = 1 ] &&
    grep -q "STARCOLL_SCHEDULE: entry 1" "$SC_WORK/schedule-split.report"; then
    ok "STARCOLL_SCHEDULE on rank 0 only: one line, and rank 0's schedule used everywhere"
else
    fail "STARCOLL_SCHEDULE on rank 0 only: expected one line and the schedule applied"
    sc_show schedule-split
fi

# ---- the library on some ranks only --------------------------------------
for case in "0 4 on ranks 0-3" "1 8 on ranks 1-7"; do
    set -- $case
    name="partial-$1-$2" label="libstarcoll.so ${*:3}"
    on_ranks "$name" 8 "$1" "$2" LD_PRELOAD="$SC_LIB" -x STARCOLL_MODE=auto -- "$loops" --loop fresh --steps 30
    rc=$?
    sc_adopt "$name" $rc "$label"
    n=$(lines_of "$name" '.*preloaded on some ranks\|libstarcoll.so is loaded on')
    if [ "$n" -ge 1 ] && [ "$n" -le 2 ] && ! grep -qiE "stack smashing|TRUNCATE|corrupt" "$SC_WORK/$name.err"; then
        ok "$label: $n clear line(s), every call passed through, no corruption"
    else
        fail "$label: expected one or two clear lines and no corruption"
        sc_show "$name"
    fi
done

# ---- report and trace files ----------------------------------------------
files="$SC_WORK/files"
mkdir -p "$files/traces"
echo "the user's own file" > "$files/existing"
ln -s "$files/target" "$files/link"
ln -s "$files/nowhere" "$files/dangling"
run_report() {   # NAME PATH: a quick sync job writing its report to PATH
    sc_job "$1" 2 -x STARCOLL_MODE=sync -x STARCOLL_REPORT="$2" "$loops" --loop own --steps 5
}
run_report file-existing "$files/existing"
if [ "$(cat "$files/existing")" = "the user's own file" ] && grep -q "^starcoll: totals" "$files/existing.1" &&
    [ "$(lines_of file-existing "STARCOLL_REPORT: .*existing exists; writing .*existing.1 instead")" = 1 ]; then
    ok "an existing report file is kept; the report goes to a new name, said in one line"
else
    fail "an existing report file was overwritten or not said"
    sc_show file-existing
fi
for l in link dangling; do
    run_report "file-$l" "$files/$l"
    if [ ! -e "$files/target" ] && [ ! -e "$files/nowhere" ] && grep -q "symbolic link" "$SC_WORK/file-$l.err" &&
        grep -q "^starcoll: totals" "$SC_WORK/file-$l.err"; then
        ok "a report path that is a $l symbolic link is not followed; one line, the report on stderr"
    else
        fail "a report path that is a $l symbolic link: followed, or not said"
        sc_show "file-$l"
    fi
done
if [ -w /dev/full ]; then
    run_report file-full /dev/full
    if grep -q "STARCOLL_REPORT: writing /dev/full failed" "$SC_WORK/file-full.err"; then
        ok "a failed report write (/dev/full) is said, and the report goes to stderr"
    else
        fail "a failed report write (/dev/full) was silent"
        sc_show file-full
    fi
fi
sc_job trace-dir 2 -x STARCOLL_MODE=auto -x STARCOLL_TRACE="$files/traces/" "$loops" --loop own --steps 40
if [ -s "$files/traces/trace.0" ] && [ -s "$files/traces/trace.1" ] && [ -z "$(ls -A "$files/traces" | grep '^\.')" ]; then
    ok "STARCOLL_TRACE=DIR/ writes DIR/trace.RANK, no hidden files"
else
    fail "STARCOLL_TRACE=DIR/: $(ls -A "$files/traces" | tr '\n' ' ')"
fi

# ---- messages -------------------------------------------------------------
msg_job() {   # NAME PATTERN label -- env settings: one readable line matching PATTERN
    local name=$1 pattern=$2 label=$3
    shift 4
    local opts=() s
    for s in "$@"; do opts+=(-x "$s"); done
    sc_job "$name" 2 -x STARCOLL_REPORT=none "${opts[@]}" "$loops" --loop own --steps 30
    local rc=$? n long
    n=$(grep -c "^starcoll: " "$SC_WORK/$name.err")
    long=$(awk 'length > 400' "$SC_WORK/$name.err" | grep -c '^starcoll: ')
    if [ $rc = 0 ] && [ "$n" = 1 ] && [ "$long" = 0 ] && grep -qE "^starcoll: $pattern" "$SC_WORK/$name.err"; then
        ok "$label: one readable line"
    else
        fail "$label: status $rc, $n starcoll line(s), $long over 400 characters"
        sc_show "$name"
    fi
}
big=$(head -c 100000 /dev/zero | tr '\0' x)
STARCOLL_MODE=$big msg_job msg-big "STARCOLL_MODE='x+\.\.\.\(100000 characters\)' is not valid" "a 100 KB value" -- STARCOLL_MODE
sc_job msg-big-then 2 -x STARCOLL_REPORT=none -x STARCOLL_NIC="$big" -x STARCOLL_EPOCH=x -x STARCOLL_SCALE=y "$loops" --loop own --steps 5
if [ "$(grep -c '^starcoll: STARCOLL_' "$SC_WORK/msg-big-then.err")" = 3 ]; then
    ok "a 100 KB value costs the lines of the bad values after it nothing"
else
    fail "a 100 KB value cut the other lines: $(grep -c '^starcoll: ' "$SC_WORK/msg-big-then.err") lines"
fi
STARCOLL_MODE=$'sync\nquorum' msg_job msg-newline "STARCOLL_MODE='sync\\\\nquorum' is not valid" "a newline in a value" -- STARCOLL_MODE
msg_job msg-hex "STARCOLL_QUORUM='0x10' is not valid" "STARCOLL_QUORUM=0x10" -- STARCOLL_MODE=quorum STARCOLL_QUORUM=0x10
msg_job msg-quorum "STARCOLL_QUORUM=1000000 is more than the 2 ranks" "STARCOLL_QUORUM=1000000 on 2 ranks" -- \
    STARCOLL_MODE=quorum STARCOLL_QUORUM=1000000
msg_job msg-inject-rank "STARCOLL_INJECT names rank 99, but the job has 2 ranks" "STARCOLL_INJECT=rank=99" -- \
    STARCOLL_INJECT=rank=99,delay=1ms
msg_job msg-inject-window "STARCOLL_INJECT=.*until must be above from" "STARCOLL_INJECT from=10,until=5" -- \
    STARCOLL_INJECT=rank=1,delay=1ms,from=10,until=5
msg_job msg-model "STARCOLL_MODEL=" "a STARCOLL_MODEL that is no model" -- STARCOLL_SELECTOR=learned STARCOLL_MODEL=/etc/hostname
# ... and the report says the selector fell back, beside the policy asked for.
sc_job model-fallback 2 -x STARCOLL_SELECTOR=learned -x STARCOLL_MODEL=/etc/hostname "$loops" --loop own --steps 30
sc_adopt model-fallback $? "a STARCOLL_MODEL that is no model"
if grep -q "^@ Policy .*selector=learned" "$SC_WORK/model-fallback.report" &&
    grep -q "STARCOLL_MODEL=/etc/hostname: .*using the heuristic selector" "$SC_WORK/model-fallback.report"; then
    ok "a STARCOLL_MODEL that is no model: the report says the heuristic selector ran instead"
else
    fail "a STARCOLL_MODEL that is no model: the report does not say the selector fell back"
    sc_show model-fallback
fi

# ---- soak -----------------------------------------------------------------
# Hot swaps every 13 steps (valid on the 4-rank halves too).
sched=$(awk 'BEGIN {n = split("quorum:3 groups:3 sync groups:1+3 hier quorum:2 groups:2 sync", m, " ");
                    for (i = 0; i < 250; i++) printf "%s%d:%s", i ? "," : "", 20 + 13 * i, m[i % n + 1]}')
soak() {   # NAME STEPS BOUND_S LABEL MIN_CALLS [starcoll_loops options]; SOAK_ENV: one more VAR=VALUE
    local name=$1 steps=$2 bound=$3 label=$4 least=$5
    shift 5
    # The stall watchdog at 2 s with the coordinator's books (verbose 2):
    # a call that waits past the bound leaves what it waited for in the log.
    sc_job "$name" 8 -x STARCOLL_MODE=auto -x STARCOLL_SCHEDULE="$sched" -x STARCOLL_STALL=2 -x STARCOLL_VERBOSE=2 \
        ${SOAK_ENV:+-x "$SOAK_ENV"} "$loops" --loop fresh --soak "$@" --steps "$steps" --compute-ms 4 --bound-s "$bound"
    local rc=$?
    sc_adopt "$name" $rc "$label"
    local said="stalled\|coordinator:\|own view\|slot [0-9]* flush\|below the quorum\|longest MPI_Allreduce took"
    if grep -q "$said" "$SC_WORK/$name.err"; then
        echo "    --- the watchdog's lines of $name"
        grep "$said" "$SC_WORK/$name.err" | head -n 60 | sed 's/^/    /'
    fi
    local calls
    calls=$(sc_totals "$name" eligible)
    echo "    $label: $calls eligible calls; $(sed -n 's/.*\(longest_call_s=[0-9.]*\).*/\1/p' "$SC_WORK/$name.out")"
    [ -n "$calls" ] && [ "$calls" -ge "$least" ] && ok "$label: $calls eligible calls (at least $least)" ||
        fail "$label: ${calls:-no} eligible calls, expected at least $least"
}
soak soak-quiet 3200 10 "soak, quiet machine" 100000
# One communicator: STARCOLL_COLL_WAIT=auto (the default) never polls, so
# such a job pays nothing for the cure below.
if ! [ -s "$SC_WORK/soak-quiet.report" ]; then
    fail "one communicator, STARCOLL_COLL_WAIT=auto: no report to read"
elif grep -q "polled from now on\|waited polled" "$SC_WORK/soak-quiet.err" "$SC_WORK/soak-quiet.report"; then
    fail "one communicator, STARCOLL_COLL_WAIT=auto: its collectives were polled"
    grep -h "polled" "$SC_WORK/soak-quiet.err" "$SC_WORK/soak-quiet.report" | head -n 3 | sed 's/^/    /'
else
    ok "one communicator, STARCOLL_COLL_WAIT=auto: its collectives stayed MPI's blocking ones"
fi
# Two communicators (the world and its halves, each with its engine) on 2
# cores.  With MPI's blocking collectives, and the tensors not fused, Open
# MPI held a call here for 10 s to minutes now and then (README, "Limits");
# STARCOLL_COLL_WAIT=auto (the default) polls every engine's collectives
# while a rank runs two engines, which no run has stalled.  10 s is far
# above the longest call of a healthy run (0.2-0.6 s) and far below those
# stalls.  Every tensor fused (STARCOLL_FUSE_SHARE=1; at the 1 MiB default
# all four are under the size), unfused (the default share), and unfused
# with STARCOLL_COLL_WAIT=polled for the whole job.
SOAK_ENV=STARCOLL_FUSE_SHARE=1 soak soak-two-comms 800 10 "soak, two communicators, every tensor fused" 50000 --two-comms
# ... small tensors, every one fused: a flush or a catch-up on one
# communicator used to wait for calls a rank had made fused, or staged,
# while it was blocked on the other (hung 2 runs in 3 at 64 KiB before the
# fix).
SOAK_ENV=STARCOLL_FUSE_SHARE=1 soak soak-two-comms-fused 800 10 "soak, two communicators, small tensors all fused" 50000 \
    --two-comms --counts 1000,2000,500,3000,800
soak soak-two-comms-unfused 800 10 "soak, two communicators, unfused, STARCOLL_COLL_WAIT=auto" 50000 --two-comms
# Each of the three engines' coordinators said it polls from now on, and
# the report counts what waited polled on each communicator.
said=$(grep -c "^starcoll: comm [0-9@]*.*: its collectives polled from now on: rank .* runs another communicator's engine too" \
    "$SC_WORK/soak-two-comms-unfused.err")
counted=$(grep -c "^@ comm [0-9@]*: [1-9][0-9]* rounds and direct-step calls per rank waited polled (STARCOLL_COLL_WAIT=auto" \
    "$SC_WORK/soak-two-comms-unfused.report")
if [ "$said" -ge 3 ] && [ "$counted" -eq 3 ]; then
    ok "STARCOLL_COLL_WAIT=auto, two engines a rank: every communicator's coordinator switched to polled, and the report counts it on all 3"
else
    fail "STARCOLL_COLL_WAIT=auto, two engines a rank: $said of 3 coordinators said they poll, $counted of 3 report lines"
    grep -h "polled" "$SC_WORK/soak-two-comms-unfused.err" "$SC_WORK/soak-two-comms-unfused.report" | head -n 8 |
        sed 's/^/    /'
fi
SOAK_ENV=STARCOLL_COLL_WAIT=polled soak soak-two-comms-polled 800 10 \
    "soak, two communicators, unfused, starcoll's collectives polled" 50000 --two-comms
if grep -q "^starcoll: .* coll_wait=polled" "$SC_WORK/soak-two-comms-polled.err"; then
    ok "STARCOLL_COLL_WAIT=polled: the policy line says coll_wait=polled"
else
    fail "STARCOLL_COLL_WAIT=polled: the policy line does not say coll_wait=polled"
fi
# ... the halves part at step 100 (flushed, checked, freed) and the world
# goes on alone for 500 steps: its coordinator hears that no rank runs a
# second engine any more and every rank goes back to blocking collectives
# at the same round or direct step (a rank waiting the other way would
# hang the job); the report's count of what waited polled on the world
# stays near 100 steps' worth (about 5 a step), far under the 960 that
# 40% of its 2400 calls a rank would be.
soak soak-two-comms-part 600 10 "soak, two communicators, the halves part at step 100" 20000 --two-comms --part-at 100
world_polled=$(sed -n 's/^@ comm 0: \([0-9]*\) rounds and direct-step calls per rank waited polled.*/\1/p' \
    "$SC_WORK/soak-two-comms-part.report")
if grep -q "^starcoll: comm 0: its collectives blocking again: no rank runs another communicator's engine" \
    "$SC_WORK/soak-two-comms-part.err" && [ -n "$world_polled" ] && [ "$world_polled" -lt 960 ]; then
    ok "STARCOLL_COLL_WAIT=auto: the world went back to blocking collectives once the halves parted ($world_polled calls a rank waited polled)"
else
    fail "STARCOLL_COLL_WAIT=auto: the world did not go back to blocking once the halves parted (${world_polled:-no} calls a rank waited polled)"
    grep -h "polled\|blocking again" "$SC_WORK/soak-two-comms-part.err" "$SC_WORK/soak-two-comms-part.report" | head -n 8 |
        sed 's/^/    /'
fi
if command -v stress-ng >/dev/null 2>&1; then
    stress-ng --cpu 4 --timeout 300s >/dev/null 2>&1 &
    stress=$!
    # 12 CPU-bound threads on 2 cores: 0.9-5.2 s in the CI so far, each
    # call's time spent waiting to be scheduled (README, "Limits"); issue
    # 11's stalls were 30-55 s.
    soak soak-loaded 200 30 "soak beside stress-ng --cpu 4" 12000 --two-comms
    kill "$stress" 2>/dev/null
    wait "$stress" 2>/dev/null
else
    skip "soak beside stress-ng: stress-ng not installed"
fi

# ---- machine pauses ---------------------------------------------------------
# A virtual machine's host can stop it for seconds (this one's kernel logged
# "workqueue lockup ... stuck for 40-88 s" several times a day): a call that
# spans such a stop takes that long whatever MPI or starcoll do.  The soaks'
# bound is on their waits, so starcoll_loops takes out the time its process
# did not run at all (benchmarks/machine_pause.h) and says so.  Both ways
# checked: every rank stopped (SIGSTOP) for 2 s is taken out; a rank that
# stops calling for 2 s, running all along, still counts.
sc_job pause-stopped 4 -x STARCOLL_MODE=sync "$loops" --loop fresh --steps 600 --compute-ms 5 --bound-s 1 &
job=$!
for _ in $(seq 1 100); do pgrep -x starcoll_loops >/dev/null && break; sleep 0.1; done
sleep 1.5
pkill -STOP -x starcoll_loops
sleep 2
pkill -CONT -x starcoll_loops
wait "$job"
paused=$(figure pause-stopped machine_pause_s)
if grep -q "^ok   - fresh: no single MPI_Allreduce took over 1.0 s" "$SC_WORK/pause-stopped.out" &&
    awk -v p="${paused:-0}" 'BEGIN { exit !(p >= 1.5) }'; then
    ok "every rank stopped for 2 s: taken out of the calls ($paused s seen), none over 1 s"
else
    fail "every rank stopped for 2 s: machine_pause_s=${paused:-none}, or a call over 1 s"
    sc_show pause-stopped
fi
sc_job pause-waited 4 -x STARCOLL_MODE=sync "$loops" --loop fresh --steps 60 --compute-ms 5 --stop-at 20 --stop-s 2 --bound-s 1
paused=$(figure pause-waited machine_pause_s)
longest=$(figure pause-waited longest_call_s)
if grep -q "^FAIL - fresh: no single MPI_Allreduce took over 1.0 s" "$SC_WORK/pause-waited.out" &&
    awk -v p="${paused:-9}" -v l="${longest:-0}" 'BEGIN { exit !(p < 0.5 && l >= 1.8) }'; then
    ok "a rank that stops calling for 2 s: the others' wait counts (longest call $longest s, pause $paused s)"
else
    fail "a rank that stops calling for 2 s: longest call ${longest:-none} s, machine_pause_s=${paused:-none}"
    sc_show pause-waited
fi
# ---- stall sentinel ---------------------------------------------------------
# One rank's whole process stopped for 8 s (SIGSTOP; engine threads too):
# the coordinator's engine thread waits in a round's reduction, which needs
# every ring member's engine thread, and the stall watchdog runs on that
# thread.  Before the sentinel thread (stall_sentinel.c) nothing was said
# until the stop ended (one line at 8.5 s, "has waited 8 s").  Now the
# coordinator's sentinel names the reduction and what its application
# thread waits for from 2 s, again at a doubled silence, and the engine
# thread says when it is back.  Rank 3 computes twice as long, so it is
# not the coordinator (placed by the least load while learning).
# frozen_job NAME STALL STEPS STOP_AT STOP_S LABEL: 4 ranks in quorum, rank
# 3's whole process stopped STOP_S seconds at step STOP_AT (--freeze)
frozen_job() {
    sc_job "$1" 4 -x STARCOLL_MODE=quorum -x STARCOLL_STALL="$2" "$loops" --loop fresh --steps "$3" --compute-ms 5 \
        --slow-rank 3 --slow-factor 2 --stop-at "$4" --stop-s "$5" --freeze
    sc_adopt "$1" $? "$6"
}
frozen=sentinel-frozen
frozen_job "$frozen" 2 60 20 8 "a rank's process stopped 8 s"
err="$SC_WORK/$frozen.err"
# Where rank 3 stops while no round is under way (seen once in about 50
# CI runs: the fast ranks were a step behind it, waiting for its deposits,
# which its engine thread had not yet announced), the coordinator's engine
# thread is in no reduction: its watchdog is free, says so itself from
# 2 s, and the sentinel rightly says nothing.  That run is shown and the
# job gets one more attempt, which must take the sentinel's path.
if ! grep -q "no word from world rank" "$err" &&
    grep -q "^starcoll: comm 0 stalled: rank [0-2] has waited 2 s in MPI_Allreduce .*waiting for rank 3 no answer" "$err"; then
    echo "    sentinel-frozen: rank 3 stopped while no round was under way; the watchdog said so at 2 s; one more attempt"
    sc_show "$frozen"
    frozen=sentinel-frozen-again
    frozen_job "$frozen" 2 60 20 8 "a rank's process stopped 8 s (again)"
    err="$SC_WORK/$frozen.err"
fi
first=$(grep -n "^starcoll: comm 0: no word from world rank [0-2]'s engine thread for [2-4] s: it is in the reduction of round [0-9]* of tensor [1-4], .* In this process: comm 0's application thread in MPI_Allreduce for [0-9.]* s (tensor [1-4], call [0-9]*)" "$err" | head -n 1 | cut -d: -f1)
back=$(grep -n "^starcoll: comm 0: world rank [0-2]'s engine thread is back after [0-9.]* s from the reduction of round" "$err" | head -n 1 | cut -d: -f1)
back_s=$(sed -n "s/^starcoll: comm 0: world rank [0-2]'s engine thread is back after \([0-9.]*\) s .*/\1/p" "$err" | head -n 1)
said=$(grep -c "no word from world rank" "$err")
if [ -n "$first" ] && [ -n "$back" ] && [ "$first" -lt "$back" ] && [ "$said" -ge 2 ] && [ "$said" -le 4 ] &&
    awk -v b="${back_s:-0}" 'BEGIN { exit !(b >= 6 && b < 20) }'; then
    ok "a rank's process stopped 8 s: the coordinator's sentinel said so while it lasted ($said lines, from 2 s), and the engine thread was back after $back_s s"
else
    fail "a rank's process stopped 8 s: sentinel lines ${said:-0} (first at line ${first:-none} of stderr), back ${back_s:-never} (line ${back:-none})"
    sc_show "$frozen"
fi

# STARCOLL_STALL=0 turns the sentinel off with the watchdog: no line.
frozen_job sentinel-off 0 40 15 3 "a rank's process stopped 3 s, STARCOLL_STALL=0"
said=$(grep -c "no word from\|engine thread is back\|stalled:" "$SC_WORK/sentinel-off.err")
if [ "$said" = 0 ]; then
    ok "a rank's process stopped 3 s, STARCOLL_STALL=0: no sentinel or watchdog line"
else
    fail "a rank's process stopped 3 s, STARCOLL_STALL=0: $said sentinel or watchdog line(s)"
    sc_show sentinel-off
fi

# ---- stall rule -------------------------------------------------------------
# A tolerant round waits for its quorum.  Ranks it cannot hear from for 10 s
# (blocked in a call starcoll cannot see, or not running) would hold the
# others forever where plain MPI would not have waited for them; the
# coordinator then closes rounds below the quorum and says so, once, and
# takes the silent ranks that have made as many calls as some waiting
# rank to be blocked elsewhere until they next call (engine_coord.c,
# presume_outside).
# (a) the world, a quorum of all 4, rank 3 stops calling for 25 s at step
# 20: the rule, not rank 3's return, ends each wait, and it fires again 10 s
# after it fired (the round it closed must not stretch the round period it
# scales with: that made the second wait last until rank 3 came back).
# Rank 3 is behind every waiting rank, so it is not taken to be away: the
# staleness bound still waits for it between the rule's rounds.
sc_job relax-world 4 -x STARCOLL_MODE=quorum -x STARCOLL_QUORUM=4 "$loops" --loop fresh --steps 60 --compute-ms 5 \
    --stop-at 20 --stop-s 25
sc_adopt relax-world $? "stall rule, the world with a quorum of all"
said=$(grep -c "^starcoll: comm 0: tolerant rounds made no progress for 1[0-9] s while ranks waited .*closing rounds below the quorum" "$SC_WORK/relax-world.err")
relaxed=$(sc_totals relax-world relaxed)
longest=$(figure relax-world longest_call_s)
if [ "$said" = 1 ] && [ "${relaxed:-0}" -ge 2 ] && awk -v l="${longest:-0}" 'BEGIN { exit !(l >= 9.5 && l < 14) }'; then
    ok "stall rule, the world: said once, $relaxed round(s) closed below the quorum, the longest wait $longest s (rank 3 stopped 25 s)"
else
    fail "stall rule, the world: said ${said:-0} times, relaxed=${relaxed:-none}, longest call ${longest:-none} s"
    sc_show relax-world
fi
# (b) two communicators, a quorum of 2: the world goes on without rank 3,
# the half that holds it (2 ranks, both needed) stalls.  Its coordinator
# is not world rank 0 (the halves are odd and even world ranks: it is comm
# 1@1, led by world rank 1), and its lines name world ranks.  The half stalls only if world rank 1 gets into
# it first.  With a quorum of 3 of 4 and rank 3 away, each world round
# needs every other rank fresh, and any two of them waiting at different
# tensors hold the third; after 4 rounds without rank 3 the world waits
# for it (staleness).  So rank 1 could stall in the world instead, until
# the world's stall rule (1 run in 12 here).  A quorum of 2 and no
# staleness bound let the world go on without rank 3 (12 of 12).
sc_job relax-half 4 -x STARCOLL_MODE=quorum -x STARCOLL_QUORUM=2 -x STARCOLL_STALENESS=1000000 -x STARCOLL_STALL=2 \
    "$loops" --loop fresh --steps 60 --compute-ms 5 --stop-at 20 --stop-s 15 --two-comms
sc_adopt relax-half $? "stall rule, a half of the world"
if grep -q "^starcoll: comm 1@1 (coordinated by world rank [13]): tolerant rounds made no progress for 1[0-9] s" "$SC_WORK/relax-half.err" &&
    grep -q "^starcoll: comm 1@1 (coordinated by world rank [13]) stalled: rank [01] (world 1) has waited [0-9]* s .*waiting for rank [01] (world 3) computing for [0-9.]* s" "$SC_WORK/relax-half.err"; then
    ok "stall rule, a half of the world: its coordinator says so, and its lines name rank 3 by its world rank"
else
    fail "stall rule, a half of the world: no line from the half's coordinator naming world rank 3"
    sc_show relax-half
fi
# (c) the lower and upper halves: the lower one's ranks are world ranks
# 0..1 in order, yet its lines must not read like the world's.  Rank 1
# stops 4 s; the watchdog (2 s) names both communicators.  As in (b), a
# quorum of 2 and no staleness bound: world rank 0 gets into the half
# before the world could hold it (with 3 of 4, 1 run in 5 here failed so);
# ranks 2 and 3 then stall at the final flush, which needs ranks 0 and 1.
sc_job names-halves 4 -x STARCOLL_MODE=quorum -x STARCOLL_QUORUM=2 -x STARCOLL_STALENESS=1000000 -x STARCOLL_STALL=2 \
    "$loops" --loop fresh \
    --steps 40 --compute-ms 5 --slow-rank 1 --stop-at 20 --stop-s 4 --two-comms --halves-in-order
sc_adopt names-halves $? "stall lines, the lower half"
if grep -q "^starcoll: comm 1 (coordinated by world rank [01]) stalled: .*waiting for rank 1 (world 1) computing" "$SC_WORK/names-halves.err" &&
    grep -q "^starcoll: comm 0 stalled: rank [23] has waited" "$SC_WORK/names-halves.err" &&
    ! grep "^starcoll: comm 0 " "$SC_WORK/names-halves.err" | grep -q "world"; then
    ok "stall lines, the lower half: its lines name world ranks, the world's do not"
else
    fail "stall lines, the lower half: its lines read like the world's, or the world's name world ranks"
    sc_show names-halves
fi
# (d) a rank blocked where starcoll cannot see (a PMPI_Sendrecv after its
# steps, as a library calling the profiling interface passes a figure on)
# while a straggler's last rounds need it: rank 1 3x slow in quorum, the
# others run ahead, finish their steps, and rank 2 waits in the
# PMPI_Sendrecv for rank 1.  The rule fires once;
# rank 2, further on than rank 1, is taken to be away, and rank 1's last
# calls go on without it.  Before, they waited for its deposits forever
# (the job did not end in 60 s).  A fast rank that finishes its steps only
# after the stall costs a stall of its own (once in CI: 21.5 s), so the
# bound on the longest wait allows two.
SC_RUN_TIMEOUT=60 sc_job relax-unseen 4 -x STARCOLL_MODE=quorum "$loops" --loop fresh --steps 40 --compute-ms 20 \
    --slow-rank 1 --slow-factor 3 --end-call pmpi-sendrecv
sc_adopt relax-unseen $? "stall rule, a rank blocked unseen after its steps"
said=$(grep -c "^starcoll: comm 0: tolerant rounds made no progress for 1[0-9] s while ranks waited .*silent ranks level with or past a waiting rank count as away" "$SC_WORK/relax-unseen.err")
longest=$(figure relax-unseen longest_call_s)
if [ "$said" = 1 ] && awk -v l="${longest:-0}" 'BEGIN { exit !(l >= 9.5 && l < 35) }'; then
    ok "stall rule, a rank blocked unseen after its steps: said once, the job ended, the longest wait $longest s"
else
    fail "stall rule, a rank blocked unseen after its steps: said ${said:-0} times, longest call ${longest:-none} s"
    sc_show relax-unseen
fi
# (e) the same with a call starcoll wraps in the PMPI_Sendrecv's place:
# the ranks waiting in it are away and the straggler's last rounds go on at
# once: no stall, no call near 10 s, and the call's result right.  The
# vector and prefix collectives after the steps (blocking.c); point to
# point, communicator making, collective MPI-IO and windows also every 10
# steps, as a code passes a figure on or checkpoints (blocking_p2p.c,
# blocking_setup_io.c; before, each of those cost a 10 s stall: steps of
# 0.7 to 1.3 s against 0.05 to 0.09).
seen() {
    local call=$1
    shift
    SC_RUN_TIMEOUT=60 sc_job "seen-$call" 4 -x STARCOLL_MODE=quorum "$loops" --loop fresh --steps 40 --compute-ms 20 \
        --slow-rank 1 --slow-factor 3 --end-call "$call" "$@"
    sc_adopt "seen-$call" $? "--end-call $call${*:+ $*}"
    said=$(grep -c "made no progress" "$SC_WORK/seen-$call.err")
    longest=$(figure "seen-$call" longest_call_s)
    if [ "$said" = 0 ] && awk -v l="${longest:-99}" 'BEGIN { exit !(l < 5) }'; then
        ok "--end-call $call${*:+ $*}: no round waited for the ranks in it, no stall (longest wait $longest s)"
    else
        fail "--end-call $call${*:+ $*}: ${said:-?} stall line(s), longest call ${longest:-none} s"
        sc_show "seen-$call"
    fi
}
for call in allgatherv gatherv scatterv alltoallv reduce_scatter reduce_scatter_block scan exscan; do seen "$call"; done
# neighbor: MPI_Neighbor_alltoall and _allgather on a ring made by
# MPI_Dist_graph_create_adjacent before the steps (a gossip step among
# peers); alltoallw.  Every 10 steps; before they were seen, 43.8 s a job
# with a 10 s stall at each, against 3.8 to 3.9 s now.
for call in neighbor alltoallw; do seen "$call" --call-every 10; done
# ifile: each rank's own nonblocking file I/O (and a collective read on
# MPI_COMM_SELF) every 10 steps; Open MPI's ompio once crashed there when an
# engine's thread drove MPI's progress meanwhile (ompio_progress.c).
# pscw: a halo exchange by active-target epochs (MPI_Win_post, _start,
# _complete, _wait) on a window made before the steps; before they were
# seen, 43 to 53 s a job, or over 60, with a 10 s stall at each epoch.
# lock: passive target on that window (MPI_Win_lock, a put, _unlock, a
# get), which starcoll passes through: it waits for no rank's application.
# connect: the even ranks MPI_Comm_accept, the odd ones MPI_Comm_connect
# (a port opened before the steps), then MPI_Comm_disconnect; before they
# were seen, 53 s a job with a 10 s stall at each.  The halves' own
# communicators, engines running, are parted by MPI_Comm_disconnect too.
for call in sendrecv recv probe split file ifile fence pscw lock; do seen "$call" --call-every 10; done
seen connect --call-every 10 --two-comms --disconnect
# iprobe: rank 0 polls MPI_Iprobe for any rank's number, as a master does,
# then MPI_Recv; the others MPI_Send.  Polling that finds nothing counts as
# away, as MPI_Test's does; before, 32.9 s a job (a 10 s stall at each)
# against 2.9 s without starcoll.
seen iprobe --call-every 10
# split-file: a checkpoint behind the compute by split collectives
# (MPI_File_write_at_all_begin and _end, a sync, read_at_all_begin and
# _end) on a file opened before the steps; its result is checked.  They
# are wrapped as the other collective MPI-IO calls are; stop 39's library,
# which did not see them, did not stall here either (the fast ranks meet
# the straggler in MPI_File_sync, which it saw).
seen split-file --call-every 10
# spawn: a helper process started by MPI_Comm_spawn every 20 steps (this
# program; it takes a number through the intercommunicator and answers),
# then MPI_Comm_disconnect; before it was seen, 33.5 s a job (a 10 s stall
# at each) against 3.7 s without starcoll.
seen spawn --call-every 20
# The helpers inherit the preload and STARCOLL_REPORT; ending first, the
# first one's report took the job's file name (the job's went to .1).
# Theirs go to NAME.report.spawned (then .spawned.1, ...), saying so.
q=$(sc_totals seen-spawn quorum)
if [ "${q:-0}" -gt 0 ] && grep -q "started by another job's MPI_Comm_spawn" "$SC_WORK/seen-spawn.report.spawned" 2>/dev/null; then
    ok "--end-call spawn: the job's report under its own name ($q quorum calls), its helpers' under .spawned, saying so"
else
    fail "--end-call spawn: the job's report holds ${q:-no} quorum calls, or no helper's report under .spawned"
fi
finish
