#!/bin/bash
# Smoke test of the time-to-accuracy benchmark at 4 ranks, without the
# preload: starcoll_train and train.py train, stop at the target on every
# rank, and end with the exact one-line result; budgets, labels, the CSV,
# --stop-via bcast and bad options behave; train.py --overlap trains, also
# under the preload in auto; the scenario runner writes its
# table and refuses a missing library with one clear line.
: "${top_builddir:=..}"
: "${top_srcdir:=..}"
. "${srcdir:-$(dirname "$0")}/mpi_env.sh"

trainer="$top_builddir/benchmarks/starcoll_train"
train_py="$top_srcdir/benchmarks/train.py"
scenarios="$top_srcdir/benchmarks/scenarios"
python=${PYTHON_MPI:-/usr/bin/python3}
[ -x "$python" ] || python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAILED: $*"; fail=$((fail + 1)); }
skipped() { echo "skipped: $*"; skip=$((skip + 1)); }
# Fast settings: 1 ms of emulated compute, a reachable target.
fast=(--compute-ms 1 --eval-every 5 --max-seconds 60)
final_re='^train: mode=[^ =]+ scenario=[^ =]+ ranks=[0-9]+ tta_s=(nan|[0-9]+\.[0-9]+) final_acc=[01]\.[0-9]{4} steps=[0-9]+$'

# mpi4 SECONDS CMD...: CMD on 4 ranks without the preload, killed after SECONDS
mpi4() { local limit=$1; shift; timeout "$limit" "$MPIRUN" $SC_MPIRUN_FLAGS -np 4 "$@"; }

# field NAME FILE: value of NAME= in the output's last line
field() { tail -n 1 "$2" | sed -nE "s/.* $1=([^ ]+).*/\1/p"; }

# check_format WHAT OUT RC: exit 0, last line in the exact format
check_format() {
    local what=$1 out=$2 rc=$3
    if [ "$rc" -ne 0 ]; then bad "$what: exit status $rc"; sed 's/^/    /' "$out" | tail -n 15; return 1; fi
    if tail -n 1 "$out" | grep -Eq "$final_re"; then ok "$what: last line '$(tail -n 1 "$out")'"
    else bad "$what: last line not in the result format: '$(tail -n 1 "$out")'"; return 1; fi
}

# train_checks NAME CMD...: the checks shared by the C and Python trainers
train_checks() {
    local name=$1; shift
    local out="$tmp/$name.out" csv="$tmp/$name.csv"

    # 1. Reaches a modest target: stops early, the same step on every rank.
    mpi4 120 "$@" "${fast[@]}" \
        --target 0.85 --max-steps 400 --csv "$csv" --verbose >"$out" 2>"$out.err"
    if check_format "$name reaches the target" "$out" $?; then
        local tta steps acc
        tta=$(field tta_s "$out"); steps=$(field steps "$out"); acc=$(field final_acc "$out")
        [ "$(field mode "$out")" = none ] && [ "$(field scenario "$out")" = none ] && [ "$(field ranks "$out")" = 4 ] \
            && ok "$name: default labels mode=none scenario=none ranks=4" \
            || bad "$name: labels wrong in '$(tail -n 1 "$out")'"
        if [ "$tta" != nan ] && [ "$steps" -lt 400 ]; then ok "$name: stopped at step $steps, tta_s=$tta"
        else bad "$name: target 0.85 not reached or no early stop (tta_s=$tta steps=$steps)"; fi
        awk -v a="$acc" 'BEGIN { exit !(a >= 0.80) }' && ok "$name: final accuracy $acc" \
            || bad "$name: final accuracy $acc too low after reaching 0.85"
        local ranks_at
        ranks_at=$(grep -Eo 'stopped after [0-9]+ steps' "$out.err" | sort -u)
        # count occurrences, not lines: the ranks' stderr lines can run together
        if [ "$(grep -o 'stopped after [0-9]* steps' "$out.err" | wc -l)" = 4 ] && [ "$(echo "$ranks_at" | wc -l)" = 1 ] \
           && [ "$ranks_at" = "stopped after $steps steps" ]; then
            ok "$name: all 4 ranks stopped at step $steps (stop vote in the gradient)"
        else
            bad "$name: ranks stopped at different steps or did not report: $(echo $ranks_at)"
        fi
        if [ "$(head -n 1 "$csv")" = "time_s,step,accuracy,loss" ] \
           && [ "$(tail -n 1 "$csv" | cut -d, -f2)" = "$steps" ] \
           && awk -F, 'NR > 2 && ($1 < t || $2 <= s) { exit 1 } NR > 1 { t = $1; s = $2 } END { exit NR < 4 }' "$csv"; then
            ok "$name: CSV has the header and $(($(wc -l <"$csv") - 1)) rows rising in time and step"
        else
            bad "$name: CSV malformed: $(head -n 3 "$csv" | tr '\n' '|')"
        fi
    fi

    # 2. Unreachable target: runs the step budget, tta_s=nan; labels and bcast.
    mpi4 120 "$@" "${fast[@]}" \
        --target 1.0 --max-steps 23 --stop-via bcast --straggler persistent,factor=2 \
        --mode-label lab --scenario-label slowone >"$out" 2>&1
    if check_format "$name unreachable target (bcast stop)" "$out" $?; then
        [ "$(field tta_s "$out")" = nan ] && [ "$(field steps "$out")" = 23 ] \
            && [ "$(field mode "$out")" = lab ] && [ "$(field scenario "$out")" = slowone ] \
            && ok "$name: tta_s=nan after the 23-step budget, labels passed through" \
            || bad "$name: expected tta_s=nan steps=23 mode=lab scenario=slowone: '$(tail -n 1 "$out")'"
    fi

    # 3. A bad option stops every rank with status 2 and one message.
    mpi4 60 "$@" --straggler persistent,rank=9 \
        >"$out" 2>&1
    local rc=$? msgs
    msgs=$(grep -c 'rank=9' "$out")
    if [ "$rc" -ne 0 ] && [ "$msgs" = 1 ]; then ok "$name: bad straggler rank refused once, exit $rc"
    else bad "$name: bad option gave exit $rc and $msgs messages"; sed 's/^/    /' "$out" | head -n 5; fi
}

if [ -x "$trainer" ]; then
    train_checks starcoll_train "$trainer"
else
    bad "no trainer at $trainer (make first)"
fi

# --shape: the gradients split into ResNet-50's 161 tensors (small ones
# fused under the preload, one step late): quorum with a 2x straggler still
# reaches the target.
if [ -x "$trainer" ] && [ -r "$SC_LIB" ]; then
    mpi4 180 -x "LD_PRELOAD=$SC_LIB" -x STARCOLL_MODE=quorum -x STARCOLL_REPORT="$tmp/shape.report" "$trainer" \
        "${fast[@]}" --shape "$top_srcdir/benchmarks/models/resnet50.tensors" --shape-scale 64 --target 0.85 \
        --max-steps 600 --straggler persistent,factor=2 >"$tmp/shape.out" 2>&1
    if check_format "starcoll_train --shape resnet50 (quorum)" "$tmp/shape.out" $?; then
        [ "$(field tta_s "$tmp/shape.out")" != nan ] && ok "starcoll_train --shape: reached 0.85 at step $(field steps "$tmp/shape.out")" \
            || bad "starcoll_train --shape: target 0.85 not reached: '$(tail -n 1 "$tmp/shape.out")'"
        grep -q "small-tensor calls per step rode in fused rounds" "$tmp/shape.report" \
            && ok "starcoll_train --shape: its small tensors rode in fused rounds" \
            || bad "starcoll_train --shape: the report counts no fused calls"
    fi
fi

if ! "$python" -c 'import mpi4py, numpy' 2>/dev/null; then
    skipped "train.py: $python lacks mpi4py or numpy (apt-get install python3-mpi4py python3-numpy)"
elif [ ! -r "$train_py" ]; then
    bad "no train.py at $train_py"
else
    train_checks train.py "$python" "$train_py"
    # The overlap mode (comm.Iallreduce per layer, Waitall): reaches the
    # target without the preload and, under it, in auto with a straggler.
    lib="$SC_LIB"
    for pre in none auto; do
        env=()
        [ $pre = auto ] && env=(-x "LD_PRELOAD=$lib" -x STARCOLL_MODE=auto -x STARCOLL_REPORT=none)
        [ $pre = auto ] && [ ! -r "$lib" ] && { skipped "train.py --overlap under the preload: no $lib"; continue; }
        mpi4 180 "${env[@]}" "$python" "$train_py" "${fast[@]}" --overlap --target 0.85 --max-steps 600 \
            --straggler persistent,factor=2 >"$tmp/overlap.out" 2>&1
        if check_format "train.py --overlap ($pre)" "$tmp/overlap.out" $?; then
            [ "$(field tta_s "$tmp/overlap.out")" != nan ] && ok "train.py --overlap ($pre): reached 0.85 at step $(field steps "$tmp/overlap.out")" \
                || bad "train.py --overlap ($pre): target 0.85 not reached: '$(tail -n 1 "$tmp/overlap.out")'"
        fi
    done
fi

# The scenario runner: a missing library is one clear error before any run.
out="$tmp/scen.out"
"$scenarios" --modes "sync none" --scenarios none --lib /nonexistent/libstarcoll.so \
    --trainer "$trainer" --out "$tmp/lab0" >"$out" 2>&1
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$out")" = 1 ] && grep -q '/nonexistent/libstarcoll.so' "$out"; then
    ok "scenarios: missing library refused in one line: $(cat "$out")"
else
    bad "scenarios: missing library gave exit $rc: $(head -n 3 "$out" | tr '\n' '|')"
fi

# ... and a tiny matrix without the preload writes its table.
if [ -x "$trainer" ]; then
    timeout 300 "$scenarios" -np 4 --modes none --scenarios "none persistent" --repeats 1 \
        --trainer "$trainer" --target 0.8 --train-args "--compute-ms 1 --max-steps 300" \
        --out "$tmp/lab" >"$out" 2>&1
    rc=$?
    rows=$(grep -cE '^\| (none|persistent) \| none \| [0-9.]+ \| - \| 0\.[0-9]{4} \|' "$tmp/lab/summary.md" 2>/dev/null)
    if [ "$rc" = 0 ] && [ "$rows" = 2 ] && [ -s "$tmp/lab/csv/persistent_none_r1.csv" ]; then
        ok "scenarios: 2-run matrix wrote summary.md with both rows"
    else
        bad "scenarios: exit $rc, $rows table rows"; tail -n 12 "$out" | sed 's/^/    /'
    fi
    if command -v gnuplot >/dev/null; then
        [ -s "$tmp/lab/tta.png" ] && [ -s "$tmp/lab/accuracy_persistent.png" ] \
            && ok "scenarios: plots tta.png and accuracy_persistent.png written" \
            || bad "scenarios: plots missing: $(ls "$tmp/lab" | tr '\n' ' ')"
    else
        skipped "scenarios plots: gnuplot not installed"
    fi
fi

if [ "$skip" -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"
else echo "$pass passed, $fail failed"; fi
[ "$fail" -eq 0 ]
