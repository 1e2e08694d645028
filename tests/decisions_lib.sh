# Sourced by mpi_resources.sh and decision_latency.sh: reading the auto
# selector's decisions from a starcoll report and a straggler's onset and
# end from a STARCOLL_TRACE file, on one common step count.  Not a test.
#
# Step counts.  The report numbers a decision by the coordinator's steps:
# "step D" means the selector decided after it had seen the coordinator's
# steps 0..D-1.  Those steps are counted from when the engine starts, after
# pattern learning, so they lag the application's own step numbers by a few
# steps; a trace row's step is the same count (row t is the engine's t-th
# step).  The onset is therefore found in the straggler's own trace, not
# from the application's step number: a decision at step D reacts to an
# onset at row O after D - O slow steps.

# res_decisions REPORT: the report's decision lines, one per decision,
# as "STEP MODE K CHILDREN | the rest of the line".
res_decisions() {
    [ -f "$1" ] || return 0
    sed -n '/^@--- Decisions/,/^@--- end/p' "$1" |
        sed -nE 's/^ *comm [0-9]+ step ([0-9]+): ([a-z]+) k=([0-9]+) children=([0-9]+): (.*)$/\1 \2 \3 \4 | \5/p'
}

# res_show_decisions REPORT: the decisions, indented, to say what auto did.
res_show_decisions() {
    local lines
    lines=$(sed -n '/^@--- Decisions/,/^@--- end/p' "$1" 2>/dev/null | grep -E '^ *comm ' | cut -c1-600)
    if [ -z "$lines" ]; then
        echo "    (no decision in the report: auto kept its initial mode, sync, throughout)"
    else
        echo "    decisions in the report (step: mode k children: reason | signals):"
        sed 's/^ */      /' <<<"$lines"
    fi
}

# res_trace_column FILE COLUMN: "STEP VALUE" for every row of a trace,
# the column found by its name on the column line (TRACE.md).
res_trace_column() {
    awk -v want="$2" '
        /^#/ { next }
        !have { for (i = 1; i <= NF; i++) { if ($i == "step") s = i; if ($i == want) c = i }
                have = 1; next }
        s && c { print $s, $c }' "$1" 2>/dev/null
}

# res_onset_end FILE: "O E", the trace rows where this rank's compute time
# first stays at least 1.5x its early level for 3 rows (onset) and then
# first stays under 1.25x of it for 3 rows (end); -1 for one not found.
# The early level is the median of the first 10 rows.
res_onset_end() {
    res_trace_column "$1" compute_s | awk '
        { step[NR] = $1; c[NR] = $2 }
        END {
            if (NR < 13) { print -1, -1; exit }
            for (i = 1; i <= 10; i++) v[i] = c[i]
            for (i = 1; i <= 10; i++) for (j = i + 1; j <= 10; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            base = (v[5] + v[6]) / 2
            o = -1; e = -1
            for (i = 11; i + 2 <= NR && o < 0; i++)
                if (c[i] >= 1.5 * base && c[i + 1] >= 1.5 * base && c[i + 2] >= 1.5 * base) o = i
            if (o > 0)
                for (i = o + 3; i + 2 <= NR && e < 0; i++)
                    if (c[i] < 1.25 * base && c[i + 1] < 1.25 * base && c[i + 2] < 1.25 * base) e = i
            print (o > 0 ? step[o] : -1), (e > 0 ? step[e] : -1)
        }'
}

# res_trace_rank_means PREFIX NP: per rank, the means the cause rules look
# at (TRACE.md columns), to show why a rank was or was not classed.
res_trace_rank_means() {
    local r
    echo "    per-rank means over the trace (compute and step in ms; cpu, runq per wall second; nvcsw per s; NIC MB/s of speed MB/s):"
    for ((r = 0; r < $2; r++)); do
        [ -f "$1.$r" ] || { echo "      rank $r: no trace"; continue; }
        awk -v r="$r" '
            /^#/ { next }
            !have { for (i = 1; i <= NF; i++) col[$i] = i; have = 1; next }
            { n++; st += $col["step_s"]; c += $col["compute_s"]; cpu += $col["cpu_s"]; q += $col["runq_s"]
              v += $col["nvcsw"]; tx += $col["nic_tx_bps"]; rx += $col["nic_rx_bps"]; sp = $col["nic_speed_bps"] }
            END {
                if (!n || st <= 0) { printf "      rank %d: no steps\n", r; exit }
                printf "      rank %d: step %.1f compute %.1f cpu %.2f runq %.2f nvcsw %.0f nic %.1f/%.1f of %.0f (%d steps)\n",
                       r, 1e3 * st / n, 1e3 * c / n, cpu / st, q / st, v / st, tx / n / 1e6, rx / n / 1e6, sp / 1e6, n
            }' "$1.$r"
    done
}

# res_mode_changes DECISIONS_TEXT O E: from res_decisions output, with the
# onset row O and end row E, prints "M0 EARLY D1 M1 D2": the mode in force
# when the onset began (sync unless an earlier decision changed it), how many
# decisions changed the mode before the onset (false alarms), the first
# decision while the straggler was slow (O < D1 <= E) that changed the mode
# (to M1), and the first decision after the end that brought M0 back (D2);
# -1 and "-" when absent.
res_mode_changes() {
    awk -v o="$2" -v e="$3" '
        BEGIN { m0 = "sync"; early = 0; d1 = -1; m1 = "-"; d2 = -1 }
        { d = $1 + 0; m = $2
          if (d <= o) { if (m != m0) early++; m0 = m; next }
          if (d1 < 0) { if (d <= e && m != m0) { d1 = d; m1 = m } next }
          if (d2 < 0 && e >= 0 && d > e && m == m0) d2 = d }
        END { print m0, early, d1, m1, d2 }' <<<"$1"
}

# res_reaction DECISIONS_TEXT O E RANK: the first decision while the
# straggler was slow (O < D <= E) that names RANK as slow and changes the
# mode, k or the number of children: "D MODE K", or "-1 - -".
res_reaction() {
    awk -v o="$2" -v e="$3" -v who="rank $4 [0-9.]+x" '
        BEGIN { state = "sync 0 0"; found = 0 }
        { d = $1 + 0; now = $2 " " $3 " " $4
          if (d > o && d <= e && !found && now != state && $0 ~ who) {
              print d, $2, $3; found = 1 }
          state = now }
        END { if (!found) print -1, "-", "-" }' <<<"$1"
}

# ---- the report's straggler table (its CSV beside the report) -----------------
# A verdict failure: vfail where the caller gives verdicts another attempt
# (mpi_resources.sh), fail elsewhere.
res_verdict_fail() { if declare -F vfail >/dev/null; then vfail "$@"; else fail "$@"; fi; }

# res_table_show NAME: the table as the report prints it, indented.
res_table_show() {
    sed -n '/^@--- Stragglers/,/^@--- /p' "$SC_WORK/$1.report" 2>/dev/null | sed '$d' | cut -c1-220 | sed 's/^/      /'
}

# res_table_check NAME RANK CAUSE FROM_LO FROM_HI TO_LO TO_HI: the CSV beside
# NAME's report, its episodes summed per rank as the table does, lists world
# rank RANK with cause CAUSE ("-": any; its costliest episode's), first slow
# in FROM_LO..FROM_HI and last slow in TO_LO..TO_HI (TO_LO "end": still
# slow when the run ended), and no other rank cost more waiting under sync.
# An episode of RANK that ended before FROM_LO is a false alarm before the
# straggler appeared (this machine's own noise, as other ranks' are): it
# counts towards the cost and is named in the verdict, not in the span.
res_table_check() {
    local name=$1 rank=$2 cause=$3 flo=$4 fhi=$5 tlo=$6 thi=$7 csv="$SC_WORK/$1.report.stragglers.csv"
    local per top row from to until_end got slower early what
    if [ ! -s "$csv" ]; then
        fail "$name: no straggler CSV beside the report ($csv)"
        return
    fi
    # per rank: rank cost from to until_end cause slowdown early-episodes
    per=$(awk -F, -v flo="$flo" 'NR > 1 { r = $2; cost[r] += $13
                            if ($7 < flo && $8 != 1) { early[r]++; next }
                            if (!(r in from) || $6 < from[r]) from[r] = $6
                            if ($7 > to[r]) to[r] = $7; if ($8 == 1) end[r] = 1
                            if (!(r in best) || $13 > best[r]) { best[r] = $13; cause[r] = $10; slow[r] = $5 } }
                   END { for (r in cost) if (r in from) print r, cost[r], from[r], to[r], (r in end) ? 1 : 0, cause[r], slow[r], early[r] + 0
                                         else print r, cost[r] }' "$csv")
    # the costliest other rank, if it cost more than RANK (an equal cost,
    # as the CSV rounds it, does not rank above it); ranks slow for under
    # 10 steps in all are left out, as the report's table leaves them out
    # ("slow only briefly": a pause on this 2-core machine, once 7 steps
    # of a rank costing more than a persistent 2x straggler's 35)
    brief=$(awk -F, 'NR > 1 { n[$2] += $9 } END { for (r in n) if (n[r] < 10) printf "%s ", r }' "$csv")
    top=$(awk -v r="$rank" -v brief=" $brief" '$1 == r { mine = $2 } index(brief, " " $1 " ") { next }
                            $1 != r && (!n++ || $2 > most) { most = $2; who = $1 }
                            END { if (n && most > mine + 0) print who; else print r }' <<<"$per")
    row=$(awk -v r="$rank" '$1 == r && NF > 2 { print $3, $4, $5, $6, $7, $8 }' <<<"$per")
    read -r from to until_end got slower early <<<"$row"
    what="rank $rank$([ "$cause" != - ] && echo " ($cause)") from a step in $flo..$fhi to $([ "$tlo" = end ] && echo "the end" || echo "a step in $tlo..$thi")"
    if [ -z "$row" ]; then
        res_verdict_fail "$name: the straggler table does not list rank $rank; wanted $what"
    elif [ "$top" != "$rank" ]; then
        res_verdict_fail "$name: the straggler table's costliest rank is $top, not rank $rank"
    elif [ "$cause" != - ] && [ "$got" != "$cause" ]; then
        res_verdict_fail "$name: the straggler table gives rank $rank the cause $got; wanted $cause"
    elif [ "$from" -lt "$flo" ] || [ "$from" -gt "$fhi" ]; then
        res_verdict_fail "$name: the straggler table has rank $rank slow from step $from; wanted $what"
    elif [ "$tlo" = end ] && [ "$until_end" != 1 ]; then
        res_verdict_fail "$name: the straggler table has rank $rank slow until step $to, not to the end"
    elif [ "$tlo" != end ] && { [ "$until_end" = 1 ] || [ "$to" -lt "$tlo" ] || [ "$to" -gt "$thi" ]; }; then
        res_verdict_fail "$name: the straggler table has rank $rank slow until $([ "$until_end" = 1 ] && echo "the end" || echo "step $to"); wanted $what"
    else
        ok "$name: the straggler table names rank $rank, ${slower}x, cause $got, steps $from-$([ "$until_end" = 1 ] && echo end || echo "$to")$([ "${early:-0}" -gt 0 ] && echo " (and $early false alarm(s) of it before step $flo)")"
        return
    fi
    res_table_show "$name"
    # the decisions too: a mode change is where a rank's reading changes
    sed -n '/^@--- Decisions/,/^@--- end/p' "$SC_WORK/$name.report" 2>/dev/null | cut -c1-220 | sed 's/^/      /'
}

# res_table_nobody NAME: the report's table says nobody straggled (brief
# slow spells may be listed below it).
res_table_nobody() {
    local name=$1
    if grep -q '^@ Nobody straggled' "$SC_WORK/$name.report" 2>/dev/null; then
        ok "$name: the straggler table names nobody"
    else
        res_verdict_fail "$name: the straggler table names a straggler in a run without one"
        res_table_show "$name"
    fi
}
