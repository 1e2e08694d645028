#!/bin/bash
# Decision latency of STARCOLL_MODE=auto: runs mpi_tolerant --pattern onset
# (rank 1 computes 2x from half the steps to --onset-end) a few times at 8
# ranks and prints, per run, how many steps after the straggler's onset the
# selector changed the mode, when the change took effect, and how many steps
# after the straggler went away the mode came back.  A measurement for the
# closing note, not part of make check.
#
#   decision_latency.sh [RUNS]        (default 5; about 10 s a run)
#
# Run from the build tree's tests/ folder, as make check does, or set
# top_builddir.  Step counts are the coordinator's (decisions_lib.sh says
# how they line up with the application's steps and the trace rows).
. "$(dirname "$0")/mpi_testlib.sh"
. "$(dirname "$0")/decisions_lib.sh"
runs=${1:-5}
case $runs in ''|*[!0-9]*|0) echo "usage: decision_latency.sh [RUNS >= 1]"; exit 2 ;; esac
sc_preloading || { echo "decision_latency.sh measures the library: unset SC_NO_PRELOAD"; exit 2; }
sc_need_library || finish
prog="$top_builddir/tests/mpi_tolerant"
sc_need_program "$prog" || finish

np=8 steps=260 end=160 compute_ms=30
echo "auto at $np ranks: mpi_tolerant --pattern onset --steps $steps --onset-end $end --compute-ms $compute_ms"
echo "rank 1 computes 2x from application step $((steps / 2)) to $((end - 1)); steps below are the coordinator's"
echo
printf '%-4s %-6s %-5s %-8s %-6s %-16s %-8s %-7s %-8s %-9s %s\n' run onset end at-onset early reaction latency effect "back at" recovery conservation
lat=() eff=() rec=() clean=()
for ((i = 1; i <= runs; i++)); do
    name="latency$i"
    sc_job "$name" "$np" -x STARCOLL_MODE=auto -x "STARCOLL_TRACE=$SC_WORK/$name.trace" \
        "$prog" --pattern onset --steps "$steps" --onset-end "$end" --compute-ms "$compute_ms"
    rc=$?
    cons=ok
    sc_program_passed "$name" "$rc" || cons="FAILED (status $rc)"
    read -r o e <<<"$(res_onset_end "$SC_WORK/$name.trace.1")"
    if [ "$o" -lt 0 ]; then
        printf '%-4s %s\n' "$i" "no onset found in rank 1's trace; $cons"
        continue
    fi
    decisions=$(res_decisions "$SC_WORK/$name.report")
    read -r m0 early _ _ d2 <<<"$(res_mode_changes "$decisions" "$o" "$e")"
    read -r d1 m1 k1 <<<"$(res_reaction "$decisions" "$o" "$e" 1)"
    reaction="-" latency="-" effect="-" back="-" recovery="-"
    if [ "$d1" -ge 0 ]; then
        reaction="$m1 k=$k1 @$d1"
        latency=$((d1 - o))
        lat+=("$latency")
        [ "$m0" = sync ] && clean+=("$latency")
        # The first row at or after the onset that ran in the new mode.
        if [ "$m1" != "$m0" ]; then
            row=$(awk -v o="$o" -v m="$m1" '/^#/ { next } !h { for (i = 1; i <= NF; i++) if ($i == "mode") c = i; h = 1; next }
                  $2 + 0 >= o && $c == m { print $2; exit }' "$SC_WORK/$name.trace.0")
            if [ -n "$row" ]; then effect=$((row - o)); eff+=("$effect"); fi
        fi
    fi
    if [ "$d2" -ge 0 ]; then
        back=$d2 recovery=$((d2 - e))
        [ "$m0" = sync ] && rec+=("$recovery")   # back from a false alarm's mode says little
    fi
    printf '%-4s %-6s %-5s %-8s %-6s %-16s %-8s %-7s %-8s %-9s %s\n' "$i" "$o" "$e" "$m0" "$early" "$reaction" "$latency" "$effect" "$back" "$recovery" "$cons"
done

# stats VALUES...: "median min max" (n=0: "-").
stats() {
    [ $# -gt 0 ] || { echo "- (none)"; return; }
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
        med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %s, min %s, max %s over %d run(s)\n", med, v[1], v[NR], NR }'
}
echo
echo "onset, end: the first slow and the first fast-again row of rank 1's trace (coordinator steps)"
echo "at-onset:  the mode in force at the onset; early: mode changes before it (false alarms)"
echo "reaction:  the first decision while rank 1 was slow that names it and changes mode, k or children"
echo "latency:   slow steps the coordinator had seen when it so decided (decision step - onset row)"
echo "effect:    steps from the onset to the first step run in the new mode (rank 0's trace)"
echo "recovery:  steps from the end of the slowdown to the decision that restored the at-onset mode"
echo
echo "decision latency (steps): $(stats "${lat[@]}")"
echo "  from sync at the onset: $(stats "${clean[@]}")"
echo "effect latency (steps):   $(stats "${eff[@]}")"
echo "recovery to sync (steps): $(stats "${rec[@]}")"
