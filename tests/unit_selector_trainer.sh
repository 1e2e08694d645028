#!/bin/bash
# starcoll-train's command line: help, usage errors, bad files, and a model
# built from traces given by prefix and by name (the same model both ways).
: "${top_builddir:=..}"
train="$top_builddir/selector/starcoll-train"
pass=0 fail=0
check() { # check NAME CONDITION...
    local name=$1; shift
    if "$@"; then echo "  ok   $name"; pass=$((pass + 1)); else echo "  FAIL $name"; fail=$((fail + 1)); fi
}
if [ ! -x "$train" ]; then
    echo "starcoll-train not built at $train"
    echo "0 passed, 1 failed"
    exit 1
fi
dir=$(mktemp -d /tmp/unit_selector_trainer.XXXXXX) || { echo "0 passed, 1 failed"; exit 1; }
trap 'rm -rf "$dir"' EXIT

out=$("$train" -h 2>&1); rc=$?
check "-h prints usage and exits 0" test "$rc" -eq 0 -a -n "$(echo "$out" | grep -- '-p PREFIX')"
out=$("$train" 2>&1); rc=$?
check "no input: usage error, exit 2" test "$rc" -eq 2 -a -n "$(echo "$out" | grep 'give either')"
out=$("$train" -e zero x 2>&1); rc=$?
check "bad -e: one clear line, exit 2" test "$rc" -eq 2 -a -n "$(echo "$out" | grep -- '-e zero: give a whole number')"
out=$("$train" -o "$dir/m" "$dir/missing.trace" 2>&1); rc=$?
check "missing trace: cannot open, exit 1" test "$rc" -eq 1 -a -n "$(echo "$out" | grep 'missing.trace: cannot open')"
out=$("$train" -p "$dir/none." 2>&1); rc=$?
check "prefix with no traces: exit 1" test "$rc" -eq 1 -a -n "$(echo "$out" | grep 'no trace files start with')"

# Two ranks, 40 steps: sync epochs, then faster hier epochs.
for r in 0 1; do
    awk -v r="$r" 'BEGIN {
        print "# starcoll-trace 1"; print "# rank " r; print "# nranks 2"; print "# epoch 10"
        print "rank step mode step_s compute_s wait_s"
        for (t = 0; t < 40; t++) {
            mode = (int(t / 10) % 2) ? "hier" : "sync"
            step = (mode == "hier") ? 0.12 : 0.16
            c = 0.1 + 0.001 * r
            printf "%d %d %s %.4f %.4f %.4f\n", r, t, mode, step, c, step - c
        }
    }' > "$dir/job.$r"
done
echo "not a trace" > "$dir/job.notes"
out=$("$train" -o "$dir/by-prefix.model" -p "$dir/job." 2>&1); rc=$?
echo "$out" | sed 's/^/    /'
check "prefix: model written, exit 0" test "$rc" -eq 0 -a -s "$dir/by-prefix.model"
check "prefix: the non-trace file is skipped with a note" test -n "$(echo "$out" | grep 'skipping .*job.notes: not a starcoll trace')"
check "summary counts ranks, steps and epochs" test -n "$(echo "$out" | grep '2 ranks, 40 steps in 4 epochs')"
check "model starts with its magic line" test "$(head -n 1 "$dir/by-prefix.model")" = "starcoll-model 1"
check "model ends with end" test "$(tail -n 1 "$dir/by-prefix.model")" = "end"
check "model holds sync and hier cells" test "$(grep -c '^cell [0-9]* \(sync\|hier\) ' "$dir/by-prefix.model")" -ge 2
"$train" -q -o "$dir/by-name.model" "$dir/job.1" "$dir/job.0"; rc=$?
check "by name (any order): exit 0" test "$rc" -eq 0
check "same model either way" cmp -s "$dir/by-prefix.model" "$dir/by-name.model"
out=$("$train" -o /nonexistent/dir/m.model "$dir/job.0" "$dir/job.1" 2>&1); rc=$?
check "unwritable model path: exit 1, clear line" test "$rc" -eq 1 -a -n "$(echo "$out" | grep 'cannot write')"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
