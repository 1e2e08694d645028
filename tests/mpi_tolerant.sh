#!/bin/bash
# The tolerant modes at 8 ranks: conservation and replica consistency
# (exact, integer-valued) under straggler patterns, the staleness bound,
# the quorum never undercut, hot swap by MPI_Pcontrol, two communicators,
# MPI_IN_PLACE, a call off the pattern, one rank asleep for 3 s, ragged ends,
# hot swaps at fixed steps (STARCOLL_SCHEDULE), nonblocking calls
# (MPI_Iallreduce completed by Wait, Waitall, Waitany or Test polling),
# STARCOLL_INJECT on a communication thread's nonblocking calls, calls
# from a communication thread, two threads on two communicators at
# once (and first used in different orders by different ranks: the report
# keeps a row each), two threads on one communicator (erroneous: said,
# passed through).
. "$(dirname "$0")/mpi_testlib.sh"
. "$(dirname "$0")/decisions_lib.sh"
sc_need_library || finish
prog="$top_builddir/tests/mpi_tolerant"
sc_need_program "$prog" || finish
MODES=${SC_TOLERANT_MODES:-quorum groups auto}

# The report's rows (comm, size, instances) and coordinator lines, one per
# communicator however each rank's threads first used them: comm_rows NAME
# "ROWS" COMM...  With --two-comms, the world and its halves (even and odd
# world ranks, whose rank 0 is world rank 0 and 1), not one row for both
# halves (each rank's second communicator); with --threads crossed, a
# duplicate of the world that even ranks used first, odd ranks second.
comm_rows() {
    local name=$1 want=$2 rows missing="" c
    shift 2
    rows=$(sed -n '/^@--- MPI_Allreduce per communicator/,/^@---/p' "$SC_WORK/$name.report" |
        awk '$1 ~ /^[0-9]/ {printf "%s %s %s; ", $1, $2, $3}')
    for c in "$@"; do grep -q "^  comm $c: coordinator rank" "$SC_WORK/$name.report" || missing="$missing $c"; done
    if [ "$rows" = "$want" ] && [ -z "$missing" ]; then
        ok "$name: the report has a row for each communicator ($want) and a coordinator line for each of comm $*"
    else
        fail "$name: report rows (comm size instances) '$rows', expected '$want'; no coordinator line for comm:${missing:- (all there)}"
    fi
}

# inject_rows NAME RANK "COMMS" OTHER ["PARTNERS"]: the straggler CSV lists
# world rank RANK slow as the injection makes it on each of COMMS for 10
# steps or more (of 40), and no other rank slow with no resource signal;
# and no rank slow with no resource signal on comm OTHER, which RANK is
# not part of.  PARTNERS share a smaller communicator with RANK (the odd
# half): on the world they may read slow too, and are named, not failed:
# while auto still learns, that half's steps are exact, so they wait for
# RANK there each step and come late to the world's calls (CI once: world
# ranks 3 and 7 for 10 steps or more).  On the half itself RANK must
# stand alone.
# Ranks slow for want of CPU (cause cpu: 8 ranks and their engine
# threads on 2 cores; once the odd half's three others, 13 to 15 steps,
# run-queue delay 100% of wall) are the machine's, not the injection's,
# and are named in the verdict only.  RANK itself sleeps (cause none),
# but its engine threads poll for the rounds it is late for and queue on
# these 2 cores, so every thread's run-queue delay can read cpu for it
# too (CI once on the world; here once on its half, "run-queue delay 55%
# of wall, all threads"): named with either cause, the cause said; a
# sleep read as network or work fails.  On a
# failure the comm's rows of the CSV are printed, for the next reader.
inject_rows() {
    local name=$1 rank=$2 comms=$3 other=$4 partners=" ${5:-} " csv="$SC_WORK/$1.report.stragglers.csv" c got starved
    local waited p its long
    # comm, world rank, cause of each row slow for 10 steps or more
    long=$(awk -F, 'NR > 1 && $9 >= 10 { print $1, $2, $10 }' "$csv" 2>/dev/null)
    for c in $comms; do
        got=$(awk -v c="$c" -v r="$rank" '$1 == c && $3 == "none" && $2 != r { print $2 }' <<<"$long" | sort -u | tr '\n' ' ')
        its=$(awk -v c="$c" -v r="$rank" '$1 == c && $2 == r { print $3 }' <<<"$long" | sort -u | tr '\n' ' ')
        waited=""
        if [ "$c" = 0 ] && [ -n "${5:-}" ]; then   # the world: RANK's partners waited for it in their half
            local kept=""
            for p in $got; do
                if [[ "$partners" == *" $p "* ]]; then waited="$waited$p "; else kept="$kept$p "; fi
            done
            got=$kept
        fi
        starved=$(awk -v c="$c" -v r="$rank" '$1 == c && $3 != "none" && $2 != r { print $2 " (" $3 ")" }' <<<"$long" | tr '\n' ' ')
        if [ -n "$its" ] && [ -z "$got" ] && [ -z "$(echo $its | tr ' ' '\n' | grep -vx 'none\|cpu')" ]; then
            ok "$name: comm $c: the straggler table names world rank $rank, the injected rank (cause ${its% })${waited:+ (and ${waited% } of its half, which waited for it there)}${starved:+ (and, slow for other causes: ${starved% })}"
        else
            local what="is not named slow for 10 steps or more"
            [ -n "$its" ] && what="is named slow, cause ${its% } (a sleep: none, or cpu on these 2 cores)"
            what="$what${got:+; slow with no resource signal for 10 steps or more: ${got% }}"
            fail "$name: comm $c: the injected world rank $rank $what${starved:+ (slow for other causes: ${starved% })}"
            csv_comm_rows "$csv" "$c"
        fi
    done
    got=$(awk -v c="$other" '$1 == c && $3 == "none" { print $2 }' <<<"$long" | sort -u | tr '\n' ' ')
    if [ -z "$got" ]; then ok "$name: comm $other (without world rank $rank): no rank slow with no resource signal for 10 steps or more"
    else
        fail "$name: comm $other, which world rank $rank is not on, has ranks slow with no resource signal for 10 steps or more: $got"
        csv_comm_rows "$csv" "$other"
    fi
}

# csv_comm_rows CSV COMM: the straggler CSV's header and COMM's rows, as
# comments in the log.
csv_comm_rows() {
    awk -F, -v c="$2" 'NR == 1 || $1 == c { print "#   " $0 }' "$1" 2>/dev/null
}

# tolerant_job NAME MODE [env...] -- args...: run, adopt its checks, check the report.
tolerant_job() {
    local name=$1 mode=$2
    shift 2
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=(-x "$1"); shift; done
    shift
    sc_job "$name" 8 -x STARCOLL_MODE="$mode" "${envs[@]}" "$prog" "$@"
    local rc=$?
    sc_adopt "$name" $rc "$name"
    sc_preloading || return
    case " $* " in
    *" --threads crossed "*) comm_rows "$name" "0 8 8; 1 8 8; 1@1 4 4; 2 4 4; " 1 1@1 2 ;;
    *" --two-comms "*) comm_rows "$name" "0 8 8; 1 4 4; 1@1 4 4; " 1 1@1 ;;
    esac
    local stale minf relaxed tm
    stale=$(sc_totals "$name" max_staleness) minf=$(sc_totals "$name" min_fresh)
    relaxed=$(sc_totals "$name" relaxed) tm=$(sc_totals "$name" "$mode")
    if [ -n "$stale" ] && [ "$stale" -le "${SC_BOUND:-4}" ]; then ok "$name: staleness $stale <= bound ${SC_BOUND:-4}"
    else fail "$name: staleness '$stale' over the bound ${SC_BOUND:-4}"; fi
    if [ "$mode" = quorum ]; then
        if [ -n "$minf" ] && [ "$minf" -ge "${SC_K:-7}" ]; then ok "$name: every quorum round had >= ${SC_K:-7} fresh buffers (fewest $minf)"
        else fail "$name: a quorum round closed with '$minf' fresh buffers, quorum ${SC_K:-7}"; fi
    fi
    if [ "${relaxed:-x}" = 0 ]; then ok "$name: no round forced below the quorum"
    else fail "$name: $relaxed rounds forced below the quorum"; fi
    [ "$mode" = auto ] && return   # auto: whichever mode the selector picks
    if [ -n "$tm" ] && [ "$tm" -gt 0 ]; then ok "$name: $tm calls ran in $mode"
    else fail "$name: no call ran in $mode"; fi
}

# sleep3_job NAME MODE: one rank asleep 3 s (below), staleness bound 2, quorum 5.
# It sleeps at step 22, a third of the way: after the step is learned (18
# steps where buffers are kept per tensor, as here), so in rounds.
sleep3_job() {
    SC_K=5 SC_BOUND=2 tolerant_job "$1" "$2" STARCOLL_STALENESS=2 STARCOLL_QUORUM=5 -- --pattern sleep3 --steps 66
}

for mode in $MODES; do
    for p in none persistent jitter burst onset; do
        tolerant_job "$mode-$p" "$mode" -- --pattern "$p"
    done
    if sc_preloading && [ "$mode" = auto ]; then
        # The report's straggler table: nobody without a straggler; the
        # last rank, slow from the start (a sleep: no resource signal) to
        # the end, with one.
        res_table_nobody auto-none
        res_table_check auto-persistent 7 none 0 12 end end
    fi
    tolerant_job "$mode-swap" "$mode" -- --pattern persistent --swap
    if [ "$mode" = groups ]; then
        # Rank 0 slow from the start: the coordinator goes elsewhere, so
        # rank 0 can be made a child like any straggler.
        tolerant_job groups-slow0 groups -- --pattern persistent --slow-rank 0 --steps 80
        if sc_preloading; then
            coord=$(sed -nE 's/^ *comm 0: coordinator rank ([0-9]+).*/\1/p' "$SC_WORK/groups-slow0.report" | head -n 1)
            if [ -n "$coord" ] && [ "$coord" != 0 ]; then ok "groups-slow0: the coordinator is rank $coord, not the slow rank 0"
            else fail "groups-slow0: the coordinator is '${coord:-not reported}', expected a rank other than the slow rank 0"; fi
            if grep -qE "^ *comm 0 step [0-9]+: groups k=[0-9]+ children=1: .*become children: rank 0$" "$SC_WORK/groups-slow0.report"; then
                ok "groups-slow0: rank 0 made a child"
            else
                fail "groups-slow0: no decision made rank 0 (alone) a child"
                sed -n '/^@--- Decisions/,/^@--- end/p' "$SC_WORK/groups-slow0.report"
            fi
        fi
    fi
    # Nonblocking calls (MPI_Iallreduce into fresh buffers), completed in
    # each of the ways codes do; a buffer is never written after its
    # request completed; the rounds complete the requests.  waitall and
    # test unfused (STARCOLL_FUSE_BYTES=0): a fused call completes when it
    # returns, and these two check that requests left open are completed
    # by the rounds later; wait and waitany, and the variants below, fused
    # (STARCOLL_FUSE_SHARE=1: this step's three tensors are all small).
    tolerant_job "$mode-nb-waitall" "$mode" STARCOLL_FUSE_BYTES=0 -- --pattern persistent --nonblocking waitall
    tolerant_job "$mode-nb-wait" "$mode" STARCOLL_FUSE_SHARE=1 -- --pattern jitter --nonblocking wait
    tolerant_job "$mode-nb-waitany" "$mode" STARCOLL_FUSE_SHARE=1 -- --pattern onset --nonblocking waitany
    SC_K=3 tolerant_job "$mode-nb-test" "$mode" STARCOLL_FUSE_BYTES=0 -- --pattern burst --nonblocking test --two-comms --in-place --double
    # ... each way also with no straggler, a persistent one or jitter
    tolerant_job "$mode-nb-waitall-none" "$mode" STARCOLL_FUSE_SHARE=1 -- --pattern none --nonblocking waitall
    tolerant_job "$mode-nb-waitall-jitter" "$mode" STARCOLL_FUSE_SHARE=1 -- --pattern jitter --nonblocking waitall
    tolerant_job "$mode-nb-wait-persistent" "$mode" STARCOLL_FUSE_SHARE=1 -- --pattern persistent --nonblocking wait
    tolerant_job "$mode-nb-test-persistent" "$mode" STARCOLL_FUSE_SHARE=1 -- --pattern persistent --nonblocking test
    # STARCOLL_INJECT slows the nonblocking calls of a communication
    # thread too: in auto, the selector sees rank 5 slow (a decision names
    # it).  Fresh receive buffers kept three steps come back every fourth
    # step: that must not make the step four steps long (a flush of one
    # step would reach a quarter of the slots; conservation shows it).
    tolerant_job "$mode-nb-thread-inject" "$mode" STARCOLL_INJECT=rank=5,delay=15ms -- --pattern none --nonblocking waitall \
        --threads comm
    if sc_preloading && [ "$mode" = auto ]; then
        if grep -qE "^ *comm 0 step [0-9]+: .*(slow: ([^|]*, )?|become children: |straggler.* \()rank 5 " "$SC_WORK/$mode-nb-thread-inject.report" ||
            grep -qE "^ *comm 0 step [0-9]+: .*become children: rank 5$" "$SC_WORK/$mode-nb-thread-inject.report"; then
            ok "$mode-nb-thread-inject: a decision names the injected rank 5"
        else
            fail "$mode-nb-thread-inject: no decision names the injected rank 5"
            sed -n '/^@--- Decisions/,/^@--- end/p' "$SC_WORK/$mode-nb-thread-inject.report"
        fi
    fi
    # The ranks STARCOLL_INJECT names are world ranks on every communicator:
    # rank=1 slows world rank 1 on the world and on the odd half (where it
    # is rank 0), never the even half's rank 1 (world rank 2).
    if [ "$mode" = auto ]; then
        SC_K=3 tolerant_job auto-inject-split auto STARCOLL_INJECT=rank=1,delay=15ms -- --pattern none --two-comms
        sc_preloading && inject_rows auto-inject-split 1 "0 1@1" 1 "3 5 7"
        # A child's deposits reach its parent summed over runs of calls; a
        # flush pending while another rank is behind once made a round claim
        # part of a run, and the topology change after it dropped that part
        # on both sides (a conservation failure seen once in CI).  World
        # rank 3 a child from step 30, a new topology every step after 33
        # (whichever step the flush falls on), rank 5 slow to the end: on
        # cb35191 this lost a step of rank 3's buffers in 4 runs of 10.
        tolerant_job auto-nb-child-flush auto STARCOLL_FUSE_SHARE=1 \
            STARCOLL_SCHEDULE=30:groups:3+7,33:groups:3,34:groups:3+7,35:groups:3,36:groups:3+7,37:groups:3,38:groups:3+7,39:groups:3,40:groups:3+7 \
            -- --pattern persistent --slow-rank 5 --nonblocking waitall
        # A parent's word for a child's deposit, sent just before a topology
        # change that kept the child its child, counted after it: the parent
        # had dropped what it held at the change, and the round claimed calls
        # nobody summed.  World rank 3 a child of rank 0 from step 8 on, a
        # new topology at every step, jitter: on 1feae2c a step was lost in
        # 5 runs of 10 (8 of 10 on cb35191).
        sched=$(awk 'BEGIN {for (i = 8; i <= 44; i++) printf "%s%d:groups:%s", (i > 8 ? "," : ""), i, (i % 2 ? "3" : "3+7")}')
        tolerant_job auto-nb-child-same-parent auto STARCOLL_FUSE_SHARE=1 STARCOLL_SCHEDULE="$sched" -- --pattern jitter \
            --nonblocking waitall
    fi
    if sc_preloading; then
        for l in waitall test; do
            o=$(sed -nE 's/^@ comm 0: ([0-9]+) MPI_Iallreduce calls; ([0-9]+) of them completed by the rounds.*/\2/p' \
                "$SC_WORK/$mode-nb-$l.report")
            if [ -n "$o" ] && [ "$o" -gt 0 ]; then ok "$mode-nb-$l: $o nonblocking calls completed by the rounds after returning"
            else fail "$mode-nb-$l: the report shows no nonblocking call completed by the rounds ('$o')"; fi
        done
    fi
    # Calls from a communication thread, not MPI_Init's (Horovod's way);
    # two threads, each on a communicator of its own at the same time.
    tolerant_job "$mode-thread" "$mode" -- --pattern persistent --threads comm
    SC_K=3 tolerant_job "$mode-threads2" "$mode" -- --pattern burst --threads two --two-comms
    SC_K=3 tolerant_job "$mode-crossed" "$mode" -- --pattern burst --threads crossed --two-comms
    # the split halves have 4 ranks: quorum 3 there
    SC_K=3 tolerant_job "$mode-mixed" "$mode" -- --pattern jitter --two-comms --in-place --stray --double
    SC_K=6 tolerant_job "$mode-k6" "$mode" STARCOLL_QUORUM=6 -- --pattern burst
    # One rank asleep 3 s: the others go on for exactly the bound, then wait
    # (quorum; the ring of groups is synchronous until the sleeper is found).
    # Quorum 5 of 8, not 7: with 7, a second rank one call behind when the
    # sleeper stops (a loaded machine) leaves 6 fresh buffers, and the rounds
    # rightly wait for the sleeper before it has missed the bound.
    sleep3_job "$mode-sleep3" "$mode"
    if sc_preloading && [ "$mode" = quorum ]; then
        s=$(sc_totals "$mode-sleep3" max_staleness)
        # Seen once in 14 CI runs and in 1 of 20 beside a one-core CPU hog
        # (staleness 1, 8 more rounds than usual, no stall rule): not
        # understood yet (README, "Limits").  Such a run's report goes to
        # the log, and the job gets one more attempt, which must reach it.
        if [ "$s" != 2 ]; then
            echo "    $mode-sleep3: staleness reached '$s', not the bound 2; its report, and one more attempt"
            sc_show "$mode-sleep3"
            sleep3_job "$mode-sleep3-again" "$mode"
            s=$(sc_totals "$mode-sleep3-again" max_staleness)
        fi
        if [ "$s" = 2 ]; then ok "$mode-sleep3: the others went on for the whole bound (2 rounds) before waiting"
        else fail "$mode-sleep3: staleness reached '$s', expected the bound 2"; fi
    fi
    # Ragged ends: rank r stops 3r steps early; the last rank ends with every buffer.
    dir="$SC_WORK/ragged-$mode"
    mkdir -p "$dir"
    sc_job "$mode-ragged" 8 -x STARCOLL_MODE="$mode" "$prog" --pattern jitter --ragged "$dir"
    rc=$?
    if [ $rc -eq 0 ] && [ "$(ls "$dir" | wc -l)" = 8 ]; then
        ok "$mode-ragged: ranks stopping at 8 different steps all exit 0"
        verdict=$(cat "$dir"/rank*.txt | awk '{d += $3} $1 == 0 {r = $4} END {print (d == r) ? "same" : d " deposited, " r " received"}')
        if [ "$verdict" = same ]; then ok "$mode-ragged: the last rank received every buffer of every rank"
        else fail "$mode-ragged: $verdict"; fi
    else
        fail "$mode-ragged: job status $rc, $(ls "$dir" | wc -l) of 8 ranks finished"
        sc_show "$mode-ragged"
    fi
done

# Two threads on one communicator at once (erroneous MPI): said in one
# line, passed through, counted in the report, nothing hangs.
sc_job clash 4 -x STARCOLL_MODE=sync "$prog" --threads clash
sc_adopt clash $? clash
if sc_preloading; then
    if grep -q "two threads call MPI_Allreduce on one communicator at once" "$SC_WORK/clash.err" 2>/dev/null ||
        grep -q "two threads call MPI_Allreduce on one communicator at once" "$SC_WORK/clash.out"; then
        ok "clash: two threads at once on one communicator are said"
    else fail "clash: no line says two threads called at once"; fi
    n=$(sed -nE 's/^@ comm 1: passed through: .*[^0-9]([0-9]+) two threads at once on one communicator.*/\1/p' "$SC_WORK/clash.report")
    if [ -n "$n" ] && [ "$n" -gt 0 ]; then ok "clash: the report counts $n such calls"
    else fail "clash: the report counts no call of two threads at once"; fi
fi

# Hot swaps at fixed steps (STARCOLL_SCHEDULE in place of the selector).
if [[ " $MODES " == *" auto "* ]]; then
    # A long quorum spell leaves the 2x straggler ~50 steps behind; the
    # switch to sync must not make it catch up alone (~1 s of waiting for
    # everybody else, measured so): no step of any rank may take 0.5 s
    # (a step is 10-40 ms).
    trace="$SC_WORK/auto-to-sync.trace"
    tolerant_job auto-to-sync auto STARCOLL_SCHEDULE=10:quorum:7,250:sync STARCOLL_TRACE="$trace" -- \
        --pattern persistent --steps 300
    if sc_preloading; then
        worst=$(cat "$trace".* 2>/dev/null | awk '$1 == "rank" { for (i = 1; i <= NF; i++) if ($i == "step_s") c = i; next }
            !/^#/ && c && $1 ~ /^[0-9]+$/ && $c > m {m = $c; at = "rank " $1 " step " $2} END {printf "%.3f s (%s)", m, at}')
        if [ -n "$worst" ] && awk -v w="${worst%% *}" 'BEGIN {exit !(w > 0 && w < 0.5)}'; then
            ok "auto-to-sync: no rank waited at the switch from quorum to sync (longest step $worst)"
        else
            fail "auto-to-sync: longest step ${worst:-not traced}, want under 0.5 s: the straggler was made to catch up"
        fi
        s=$(sc_totals auto-to-sync sync)
        if [ -n "$s" ] && [ "$s" -gt 0 ]; then ok "auto-to-sync: $s calls ran in sync after the switch"
        else fail "auto-to-sync: no call ran in sync"; fi
    fi
    # Every few steps a different mode, k or set of children: results stay
    # exact and conserved, nothing hangs, and the decisions are applied.
    sched=$(awk 'BEGIN {n = split("quorum:6 groups:7 sync groups:3+7 hier quorum:7 groups:5 quorum:5 sync groups:2+6 quorum:4 sync", m, " ");
                        for (i = 0; i < 90; i++) printf "%s%d:%s", i ? "," : "", 10 + 3 * i, m[i % n + 1]}')
    for p in persistent burst; do
        tolerant_job "auto-swaps-$p" auto STARCOLL_SCHEDULE="$sched" -- --pattern "$p" --steps 300
        if sc_preloading; then
            d=$(grep -c "STARCOLL_SCHEDULE: entry" "$SC_WORK/auto-swaps-$p.report")
            if [ "$d" -ge 20 ]; then ok "auto-swaps-$p: $d scheduled decisions applied"
            else fail "auto-swaps-$p: $d scheduled decisions applied, want at least 20 of 90"; fi
        fi
    done
fi
finish
