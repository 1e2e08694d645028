#!/bin/bash
# Training loops written the way other people write them
# (benchmarks/starcoll_loops.c, mpi_loops.py), 8 ranks, in quorum, groups
# and auto, with no straggler and with a persistent 2x one.  Each checks
# every return code, that no result mixes two tensors (tags), the per-step
# loss exact, and after a flush conservation per tensor and bitwise
# replicas.  Loops: fresh buffers every step (every rank, also from a
# communication thread; odd ranks only, in place), one staging buffer with tensors of different counts, one
# staging buffer of one count told apart by the per-step loss; mpi4py with
# fresh NumPy arrays and np.zeros_like receive buffers, blocking and with
# comm.Iallreduce per layer completed by MPI.Request.Waitall.  Then: one count
# through one staging buffer and no loss stays exact and the report says
# why; a rank making one call the others do not is refused with one line
# and nothing hangs; a rank that stops calling is named by the stall
# watchdog; mpi4py passing figures on point to point between steps does
# not stall; a metric vector over the size floor stays exact when
# STARCOLL_EXACT names it; gradients of one shape between a loss and a
# metric are not learned again every step, and one left out of a step
# loses nothing (with a loss; without one, where every rank keeps its
# buffers, and where some do it is said); two models trained in turn (a GAN) never share rounds
# where shapes or buffers of their own tell them apart, and where a step's
# calls line up with the other's until a call that no gradient left out
# explains (GPT-2's halves; Spinning Up's PPO actor and critic, in
# mpi4py), the communicator turns exact at the first such step; PowerSGD's
# steps of two patterns in turn stay exact; identical
# narrow layers whose biases are under the size floor, and GPT-2's
# blocks each with a one-number ReZero gate, are not each taken for a
# step; a validation pass between steps moves no tensor; a hybrid tensor-
# and data-parallel MLP keeps its activation sums exact when
# STARCOLL_EXACT_COMMS names their communicator; local SGD's averaged
# weights stay exact.
. "$(dirname "$0")/mpi_testlib.sh"
sc_need_library || finish
prog="$top_builddir/benchmarks/starcoll_loops"
sc_need_program "$prog" || finish
MODES=${SC_LOOPS_MODES:-quorum groups auto}
sc_python_loops

# loops_job NAME MODE [env...] -- args...: run, adopt its checks.
loops_job() {
    local name=$1 mode=$2
    shift 2
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=(-x "$1"); shift; done
    shift
    sc_job "$name" 8 -x STARCOLL_MODE="$mode" "${envs[@]}" "$@"
    sc_adopt "$name" $? "$name"
}

same="32768,32768,32768,32768"
for mode in $MODES; do
    for f in 1 2; do
        s=$([ $f = 1 ] && echo none || echo slow2x)
        loops_job "$mode-$s-fresh" "$mode" -- "$prog" --loop fresh --loss --slow-factor $f
        loops_job "$mode-$s-fresh-thread" "$mode" -- "$prog" --loop fresh --loss --slow-factor $f --comm-thread
        loops_job "$mode-$s-moving" "$mode" -- "$prog" --loop moving --in-place --loss --slow-factor $f
        loops_job "$mode-$s-staging" "$mode" -- "$prog" --loop staging --loss --slow-factor $f
        loops_job "$mode-$s-staging-same" "$mode" -- "$prog" --loop staging --counts "$same" --loss --slow-factor $f
        if [ $have_py = 1 ]; then
            loops_job "$mode-$s-mpi4py" "$mode" -- "$py" "$pyscript" --slow-factor $f
            loops_job "$mode-$s-mpi4py-nonblocking" "$mode" -- "$py" "$pyscript" --slow-factor $f --nonblocking
        fi
    done
    # tolerated: the calls ran in the tolerant mode (auto: whichever it picks)
    if [ "$mode" != auto ] && sc_preloading; then
        for l in fresh staging-same; do
            n=$(sc_totals "$mode-slow2x-$l" "$mode")
            if [ -n "$n" ] && [ "$n" -gt 0 ]; then ok "$mode-slow2x-$l: $n calls ran in $mode"
            else fail "$mode-slow2x-$l: no call ran in $mode"; fi
        done
    fi
done
[ $have_py = 1 ] || skip "mpi4py loops: $py cannot import mpi4py and numpy"
# mpi4py, no loss, a figure passed on point to point (iprobe polling too),
# a communicator split, a file of each rank's written and read back or a
# helper spawned (comm.Spawn; before it was seen, 32.8 s for 40 steps at 4
# ranks with two spawns, against 3.1 s plain) every 10 steps, the
# last rank 3x slow in quorum: the ranks blocked in those calls are away
# (plugin/blocking_p2p.c, blocking_setup_io.c), so no round waits for them.
# Before, each pass cost a stall of 10 s and more (the rule's line; 64 s for
# 60 steps at 4 ranks against 4.3).  The file's nonblocking calls once
# crashed the ranks in Open MPI's ompio (plugin/ompio_progress.c).
# At 4 ranks too: there a round more often needs the rank a pass blocks
# (before the iprobe master and the spawned helper were seen, the 4-rank
# job stalled in 3 of 4 runs here, the 8-rank one in 2 of 4).
if [ $have_py = 1 ]; then
    loops_job quorum-mpi4py-pass quorum -- "$py" "$pyscript" --slow-factor 3 --no-loss --pass-every 10 --steps 70
    sc_job quorum-mpi4py-pass-4ranks 4 -x STARCOLL_MODE=quorum "$py" "$pyscript" --slow-factor 3 --no-loss --pass-every 10 \
        --steps 70
    sc_adopt quorum-mpi4py-pass-4ranks $? quorum-mpi4py-pass-4ranks
    if sc_preloading; then
        for j in quorum-mpi4py-pass quorum-mpi4py-pass-4ranks; do
            said=$(grep -c "made no progress" "$SC_WORK/$j.err")
            if [ "$said" = 0 ]; then ok "$j: no round waited for a rank blocked in a point-to-point call or a split"
            else fail "$j: $said stall line(s): a round waited for a rank blocked in a pass"; sc_show "$j"; fi
        done
    fi
fi

# A hybrid tensor- and data-parallel MLP in mpi4py (mpi_tensor_parallel.py):
# its pairs' sums are activations, which the step computes with at once.
# Shapes tell them apart as well as gradients, so under quorum they were
# reshaped like gradients: 1510 of 2400 sums partial, and the loss rose
# from 2.3 to 11.8 (auto, 300 steps: 111 of 4800).  Now communicators that cross (the
# pairs and the replicas: neither holds the other) stay exact, said in one
# line; STARCOLL_EXACT_COMMS=1 (the pairs, as the report numbers them)
# keeps those exact and gives the replicas' gradients (communicator 2)
# rounds; STARCOLL_EXACT_COMMS=none gives both rounds, and the check of
# the pairs' sums must fail there.
if [ $have_py = 1 ]; then
    tpscript="$(cd "$(dirname "$0")" && pwd)/mpi_tensor_parallel.py"
    loops_job quorum-tensor-parallel quorum -- "$py" "$tpscript" --slow-factor 2
    # auto turns tolerant some way into the run (before: 111 of 4800 partial)
    loops_job auto-tensor-parallel auto -- "$py" "$tpscript" --slow-factor 2 --steps 300
    loops_job quorum-tensor-parallel-named quorum STARCOLL_EXACT_COMMS=1 -- "$py" "$tpscript" --slow-factor 2
    if sc_preloading; then
        n=$(grep -c "^starcoll: comm [12]: its ranks also sum over comm [12], and neither holds the other" \
            "$SC_WORK/quorum-tensor-parallel.err")
        if [ "$n" = 1 ]; then ok "quorum-tensor-parallel: one line says the communicators cross, and what to do"
        else fail "quorum-tensor-parallel: $n lines say the communicators cross (1 expected)"; sc_show quorum-tensor-parallel; fi
        r="$SC_WORK/quorum-tensor-parallel.report"
        why="passed through: .*its ranks also sum over a communicator that neither holds it"
        n1=$(grep -cE "^@ comm 1(@[0-9]+)?: $why" "$r")
        n2=$(grep -cE "^@ comm 2(@[0-9]+)?: $why" "$r")
        if [ "$n1" -ge 1 ] && [ "$n2" -ge 1 ] && grep -q "^starcoll: totals .* quorum=0 " "$r"; then
            ok "quorum-tensor-parallel: the report says why the pairs ($n1 rows) and the replicas ($n2) stayed exact; no call ran in quorum"
        else fail "quorum-tensor-parallel: the report gives the reason to $n1 pair and $n2 replica rows, or some call ran in quorum"; sc_show quorum-tensor-parallel; fi
        # its opening note says why most calls passed through: their
        # communicators, or a step not learned yet, not their size (before:
        # "below STARCOLL_MIN_BYTES").  Which of the two is the commonest
        # depends on how soon each communicator learned its step: the
        # replicas' step, marked only by a 10-float bias, takes 256 calls
        # (README, "A step, not a run inside one"), the pairs' a gap.
        if grep -qE "^@ Note .*changed nothing.* \(mostly: (their communicators were kept exact, each for the reason below|the step's pattern was never learned)\)" "$r"; then
            ok "quorum-tensor-parallel: the report's note says the communicators were kept exact, or their steps not learned"
        else fail "quorum-tensor-parallel: the report's note gives another reason"; sc_show quorum-tensor-parallel; fi
        r="$SC_WORK/quorum-tensor-parallel-named.report"
        if grep -q "^@ comm 1: passed through: [0-9]* named in STARCOLL_EXACT_COMMS" "$r"; then
            ok "quorum-tensor-parallel-named: the report says the pairs' calls stayed exact, named in STARCOLL_EXACT_COMMS"
        else fail "quorum-tensor-parallel-named: the report does not say the pairs were named"; sc_show quorum-tensor-parallel-named; fi
        q=$(awk '$1 == "2" && NF == 12 && $4 ~ /^[0-9]+$/ { print $11 }' "$r" | head -1)
        if [ "${q:-0}" -gt 0 ]; then ok "quorum-tensor-parallel-named: the data-parallel gradients ran in quorum ($q calls)"
        else fail "quorum-tensor-parallel-named: no data-parallel call ran in quorum"; sc_show quorum-tensor-parallel-named; fi
        sc_job quorum-tensor-parallel-none 8 -x STARCOLL_MODE=quorum -x STARCOLL_EXACT_COMMS=none "$py" "$tpscript" --slow-factor 2
        if grep -q "^FAIL - tensor-parallel: every tensor-parallel sum exact" "$SC_WORK/quorum-tensor-parallel-none.out"; then
            ok "quorum-tensor-parallel-none: with none named, the pairs' sums are reshaped, as README says (the check can fail)"
        else
            fail "quorum-tensor-parallel-none: the pairs' sums stayed exact with none named: the check could not fail"
            sc_show quorum-tensor-parallel-none
        fi
    fi
fi

# Local SGD in mpi4py (mpi_weight_average.py): each rank trains its own
# copy two steps, then the copies' weights are summed and divided by the
# ranks.  Tolerant rounds make an average of another number of copies:
# before, quorum left 1328 of 3200 sums partial, the replicas 0.013
# apart, and the loss 2.31 -> 2.07 (plain MPI: 1.29).  Now the values seen while
# the step is learned (each tensor about the last sum over the ranks) keep
# the communicator exact, said in one line; STARCOLL_EXACT_COMMS=none
# gives it rounds, and the check of the sums must fail there.
if [ $have_py = 1 ]; then
    wascript="$(cd "$(dirname "$0")" && pwd)/mpi_weight_average.py"
    loops_job quorum-weight-average quorum -- "$py" "$wascript" --slow-factor 2
    loops_job auto-weight-average auto -- "$py" "$wascript" --slow-factor 2 --steps 300
    if sc_preloading; then
        n=$(grep -c "^starcoll: comm 0: while its step was learned, 2 of its 2 tensors that changed were each about the last step's sum over the 8 ranks: weights being averaged" \
            "$SC_WORK/quorum-weight-average.err")
        if [ "$n" = 1 ]; then ok "quorum-weight-average: one line says the tensors look like averaged weights, and what to do"
        else fail "quorum-weight-average: $n lines say the tensors look like averaged weights (1 expected)"; sc_show quorum-weight-average; fi
        r="$SC_WORK/quorum-weight-average.report"
        if grep -qE "^@ comm 0: passed through: .*[0-9]+ its tensors were each about the last step's sum \(weights averaged" "$r" &&
            grep -q "^starcoll: totals .* quorum=0 " "$r"; then
            ok "quorum-weight-average: the report says why the communicator stayed exact; no call ran in quorum"
        else fail "quorum-weight-average: the report gives no reason, or some call ran in quorum"; sc_show quorum-weight-average; fi
        sc_job quorum-weight-average-none 8 -x STARCOLL_MODE=quorum -x STARCOLL_EXACT_COMMS=none "$py" "$wascript" --slow-factor 2
        if grep -q "^FAIL - weight-average: every averaging sum exact" "$SC_WORK/quorum-weight-average-none.out"; then
            ok "quorum-weight-average-none: with STARCOLL_EXACT_COMMS=none, the averages are reshaped, as README says (the check can fail)"
        else
            fail "quorum-weight-average-none: the averages stayed exact with STARCOLL_EXACT_COMMS=none: the check could not fail"
            sc_show quorum-weight-average-none
        fi
    fi
fi

if sc_preloading; then
    # One count through one staging buffer, no loss: one tensor per step
    # cannot be told from four, so it stays exact, and the report says why.
    loops_job quorum-staging-same-noloss quorum -- "$prog" --loop staging --counts "$same" --slow-factor 2
    n=$(sc_totals quorum-staging-same-noloss quorum)
    if [ "${n:-x}" = 0 ]; then ok "quorum-staging-same-noloss: no call ran tolerant"
    else fail "quorum-staging-same-noloss: ${n:-?} calls ran in quorum, though its tensors cannot be told apart"; fi
    if grep -q "stayed exact.*one shape" "$SC_WORK/quorum-staging-same-noloss.report"; then
        ok "quorum-staging-same-noloss: the report says why the calls stayed exact"
    else
        fail "quorum-staging-same-noloss: the report does not say why the calls stayed exact"
        sc_show quorum-staging-same-noloss
    fi

    # A metric vector over the size floor (100 floats: a per-class count)
    # reduced every step in fresh buffers, the last rank 2x slow, quorum.
    # By its size it is a tensor, and tolerant rounds bring its sums a step
    # late or partial; named in STARCOLL_EXACT it is exact at every step
    # (the loop checks each) and the report counts it; so is one between
    # MPI_Pcontrol(0) and MPI_Pcontrol(1).  Unnamed, the same
    # check must fail: it is no check otherwise.
    loops_job quorum-metric-named quorum STARCOLL_EXACT=100 -- "$prog" --loop fresh --loss --metric 100 --slow-factor 2
    n=$(grep -oE "[0-9]+ named in STARCOLL_EXACT" "$SC_WORK/quorum-metric-named.report" | head -n 1)
    # 60 steps and the flush's step of zeros, 8 ranks
    if [ "${n%% *}" = 488 ]; then ok "quorum-metric-named: the report counts the 488 metric calls kept exact by name"
    else fail "quorum-metric-named: the report says '${n:-nothing}' (488 calls named in STARCOLL_EXACT expected)"; fi
    sc_ran_in_quorum quorum-metric-named "the gradients"
    # the loss (1 float) waited for the straggler every step: the report
    # names its count and what would let small gradients ride
    if grep -q "^@ comm 0: of them, sums of 1 element stayed exact for being under STARCOLL_MIN_BYTES (256 bytes);.*STARCOLL_EXACT=1" \
        "$SC_WORK/quorum-metric-named.report"; then
        ok "quorum-metric-named: the report names the 1-element sum kept exact for its size, and the settings"
    else
        fail "quorum-metric-named: no report line names the 1-element sum kept exact for its size"
        sc_show quorum-metric-named
    fi
    # ... or the code brackets it with MPI_Pcontrol(0) and (1), no loss
    loops_job quorum-metric-pcontrol quorum -- "$prog" --loop fresh --metric 100 --metric-pcontrol --slow-factor 2
    sc_job quorum-metric-unnamed 8 -x STARCOLL_MODE=quorum "$prog" --loop fresh --loss --metric 100 --slow-factor 2
    if grep -q "^FAIL - fresh: the per-step metric of 100 floats is exact" "$SC_WORK/quorum-metric-unnamed.out" &&
        [ "$(grep -c '^FAIL' "$SC_WORK/quorum-metric-unnamed.out")" = 1 ]; then
        ok "quorum-metric-unnamed: unnamed, the metric's sums are not exact at every step (and nothing else fails)"
    else
        fail "quorum-metric-unnamed: the metric check did not fail alone without STARCOLL_EXACT"
        sc_show quorum-metric-unnamed
    fi

    # Gradients of one shape told apart by two per-step calls of shapes
    # of their own: a loss and a 3-float metric.  Each comes after the
    # gradients since the other, not after a whole step: before, one of
    # them read as a shifted step every step and the pattern was dropped
    # (15 times in 60 steps), 30 of 960 contributions were lost and the
    # replicas differed.
    for loop in own staging; do
        name=quorum-one-shape-loss-metric-$loop
        loops_job "$name" quorum -- "$prog" --loop $loop --counts 32768,32768,32768,32768 --loss --metric 3 --slow-factor 2
        n=$(sc_totals "$name" quorum)
        if ! grep -q "learned again" "$SC_WORK/$name.report" && [ "${n:-0}" -gt 0 ]; then
            ok "$name: the step was never learned again, and its gradients ran in quorum ($n calls)"
        else fail "$name: the step was learned again, or no call ran in quorum (${n:-0})"; sc_show "$name"; fi
    done

    # A step that leaves out one gradient (a parameter unused that step,
    # an expert no sample was routed to), gradients of one shape, a loss:
    # the loss shows the step moved, and the pattern is learned again.
    # The dropped pattern's late results go to the same tensors of the
    # new one, placed by the loss (before: never delivered, 31 of them;
    # conservation and replicas failed).
    for loop in fresh staging; do
        name=quorum-skip-one-shape-$loop
        loops_job "$name" quorum -- "$prog" --loop $loop --counts 32768,32768,32768,32768 --loss --skip-at 30 --slow-factor 2
        if grep -q "the calls' pattern changed 1 time(s)" "$SC_WORK/$name.report" &&
            ! grep -q "never delivered" "$SC_WORK/$name.report"; then
            ok "$name: the step was learned again once, and the dropped pattern's results were all delivered"
        else fail "$name: the report does not show one relearn with every result delivered"; sc_show "$name"; fi
    done

    # Gradients of distinct shapes, a loss, one left out: the next step's
    # calls come a place early, off the pattern in order, which no other
    # model's step does.  The communicator keeps its rounds (a version that
    # took the calls after such a gap for another model's turned it exact
    # and dropped what its rounds owed: conservation and replicas failed).
    for loop in own fresh; do
        name=quorum-skip-distinct-$loop
        loops_job "$name" quorum -- "$prog" --loop $loop --counts 65536,32768,16384,49152 --loss --skip-at 30 --slow-factor 2
        if grep -q "came in turn with this one" "$SC_WORK/$name.report"; then
            fail "$name: the communicator turned exact, as if another model's step had come"; sc_show "$name"
        else ok "$name: the communicator kept its rounds"; fi
    done

    # Eight identical narrow layers, each a weight and a 32-float bias
    # under STARCOLL_MIN_BYTES, then a loss (an MLP of 32-wide hidden
    # layers).  The bias is in every layer, so it marks no step: the first
    # step's run of layers was taken for a step of one layer, whose slot
    # then held all eight, and rounds summed one layer's weights into
    # another's (tags, conservation and replicas failed).  Now the loss
    # marks the step of all eight.  With a validation pass every 10 steps
    # (a loss per batch, then counts, no gradient): every value exact.
    narrow=$(printf '1024,32,%.0s' 1 2 3 4 5 6 7 8)
    # Their biases come eight times a step: the report's advice does not
    # offer STARCOLL_MIN_BYTES=4 (riding, no call tells such layers from
    # steps: README, Limits), as it did.  The step is learned, though the
    # validation pass breaks the run of steps (with fresh buffers that an
    # allocator gives back alike, a version never learned it).
    for loop in own fresh; do
        name=quorum-narrow-layers-$loop
        loops_job "$name" quorum -- "$prog" --loop $loop --counts "${narrow%,}" --loss --slow-factor 2 --eval-every 10
        if grep -q "^@ comm 0: of them, sums of 32, .* stayed exact .* sums of 32 (8 a step) come several times a step" \
            "$SC_WORK/$name.report" && ! grep -q "STARCOLL_MIN_BYTES=4 lets them ride" "$SC_WORK/$name.report"; then
            ok "$name: the report says the biases come 8 times a step, and offers no lower STARCOLL_MIN_BYTES"
        else fail "$name: the report does not say the biases come 8 times a step, or offers a lower STARCOLL_MIN_BYTES"
            sc_show "$name"; fi
        sc_ran_in_quorum "$name" "the layers' gradients"
    done

    # GPT-2 small with a ReZero gate (one number) in each of its twelve
    # blocks, then a loss.  The gate, under the size floor, read as the
    # loss: the first step's run of blocks was taken for a step of one
    # block, its slots held all twelve, and rounds summed one block's
    # gradients into another's (tags, conservation and replicas failed,
    # with fresh buffers, its own and one staging buffer).  Now the whole
    # step is learned, and runs in quorum.
    awk '/^h\.[0-9]+\.ln_1\.weight/ { split($1, p, "."); print "h." p[2] ".resweight 1" } { print }' \
        "$top_srcdir/benchmarks/models/gpt2-small.tensors" > "$SC_WORK/rezero.tensors"
    for loop in fresh own; do
        name=quorum-rezero-$loop
        loops_job "$name" quorum -- "$prog" --loop $loop --model "$SC_WORK/rezero.tensors" --scale 64 --loss \
            --slow-factor 2 --steps 40
        sc_ran_in_quorum "$name" "the blocks' gradients"
        if grep -q "sums of 1 (13 a step) come several times a step" "$SC_WORK/$name.report"; then
            ok "$name: the report says the one-number sums come 13 times a step"
        else fail "$name: the report does not say the one-number sums come 13 times a step"; sc_show "$name"; fi
    done

    # Gradients of one shape told apart by the loss, and a validation pass
    # every 10 steps (a loss per batch, no gradient between): those losses
    # move no tensor.  Each pass made every rank learn the step again, and
    # where buffers are fresh or one staging buffer, the results the
    # rounds owed were dropped (conservation and replicas failed).
    for loop in fresh staging; do
        name=quorum-validation-one-shape-$loop
        loops_job "$name" quorum -- "$prog" --loop $loop --counts "$same" --loss --slow-factor 2 --eval-every 10
        if grep -q "the calls' pattern changed" "$SC_WORK/$name.report"; then
            fail "$name: the step was learned again"; sc_show "$name"
        else ok "$name: the step was not learned again"; fi
    done

    # A tensor whose count changes every step (a sparse gradient sent
    # dense, the rows a batch touched): the step never repeats, so it is
    # never learned and every call stays exact and right (README, Limits).
    name=quorum-varying-count
    loops_job "$name" quorum -- "$prog" --loop fresh --loss --slow-factor 2 --vary-last
    if grep -q "mostly: the step's pattern was never learned" "$SC_WORK/$name.report"; then
        ok "$name: the report says the step was never learned"
    else fail "$name: the report does not say the step was never learned"; sc_show "$name"; fi

    # The same with no loss: no shape and no per-step call shows the step
    # moved.  Buffers of their own per tensor show it on each rank, at the
    # first call after the gap; where every rank's do, the ranks agree the
    # step moved and learn it again, and the dropped pattern's late results
    # go to each tensor's next call by its buffer (before: tags,
    # conservation and replicas failed, nothing said).  Where only some
    # ranks' buffers show it (fresh buffers on odd ranks), the call stays
    # on the pattern and a late rank's results of one tensor ride into
    # another's (README, Limits: the tag check must fail); each rank whose
    # buffers saw a whole step moved counts it, rank 0 says so once, and
    # the report counts the ranks.
    loops_job quorum-skip-one-shape-own-noloss quorum -- "$prog" --loop own --counts "$same" --skip-at 30 --slow-factor 2
    name=quorum-skip-one-shape-own-noloss
    if grep -q "the calls' pattern changed 1 time(s)" "$SC_WORK/$name.report" &&
        ! grep -q "never delivered" "$SC_WORK/$name.report"; then
        ok "$name: the step was learned again once, and the dropped pattern's results were all delivered"
    else fail "$name: the report does not show one relearn with every result delivered"; sc_show "$name"; fi
    sc_job quorum-skip-one-shape-moving-noloss 8 -x STARCOLL_MODE=quorum "$prog" --loop moving \
        --counts "$same" --skip-at 30 --slow-factor 2
    name=quorum-skip-one-shape-moving-noloss
    if grep -q "^FAIL - moving: every result of a tensor is made of that tensor's buffers" "$SC_WORK/$name.out"; then
        ok "$name: a step that left a gradient out, seen by some ranks only, mixes tensors, as README says (the tag check can fail)"
    else fail "$name: the tag check did not fail where only some ranks' buffers saw the step move"; sc_show "$name"; fi
    n=$(grep -c "^starcoll: comm 0: each tensor's buffer came 1 place(s) earlier in the step than it had.*STARCOLL_MODE=sync" \
        "$SC_WORK/$name.err")
    if [ "$n" = 1 ] && grep -q "^@ comm 0: on 4 rank(s) each tensor's buffer came earlier in the step" "$SC_WORK/$name.report"
    then ok "$name: one line says a step left a gradient out, and what to do; the report counts the 4 ranks"
    else fail "$name: $n lines say the step moved (1 expected), or the report does not count 4 ranks"; sc_show "$name"; fi

    # Two models trained in turn (a GAN: the critic 5 steps, then the
    # generator once), a persistent 2x straggler.  Tensors of other shapes:
    # told apart.  Of the same shapes in buffers of their own: every rank's
    # buffers show it while the step is learned, so the calls stay exact
    # and the report says why (before, the critic's and the generator's
    # tensors shared rounds: tags, conservation and replicas failed).  Of
    # the same shapes, the generator on a duplicate communicator (what the
    # report advises): told apart, and tolerated.  Fresh buffers of the same
    # shapes on one communicator show nothing: those results mix (README,
    # Limits), and the check must say so.
    gan=(--alternate 5 --loss --slow-factor 2 --steps 90)
    for mode in $MODES; do
        loops_job "$mode-gan-distinct" "$mode" -- "$prog" --loop fresh --counts 65536,32768,16384,8192 "${gan[@]}"
        loops_job "$mode-gan-same-own" "$mode" -- "$prog" --loop own --counts 65536,32768,65536,32768 "${gan[@]}"
        if grep -q "stayed exact because the step's tensors cannot be told apart: every rank's buffer .* in turn" \
            "$SC_WORK/$mode-gan-same-own.report"; then
            ok "$mode-gan-same-own: the calls stayed exact, and the report says two tensors came in turn"
        else
            fail "$mode-gan-same-own: the report does not say the step's tensors came in turn"
            sc_show "$mode-gan-same-own"
        fi
        loops_job "$mode-gan-same-comm" "$mode" -- "$prog" --loop fresh --counts 65536,32768,65536,32768 \
            --alternate-comm "${gan[@]}"
    done
    sc_ran_in_quorum quorum-gan-same-comm "the models' calls"
    sc_job quorum-gan-same-fresh 8 -x STARCOLL_MODE=quorum "$prog" --loop fresh --counts 65536,32768,65536,32768 "${gan[@]}"
    if grep -q "^FAIL - fresh: every result of a tensor is made of that tensor's buffers" \
        "$SC_WORK/quorum-gan-same-fresh.out"; then
        ok "quorum-gan-same-fresh: fresh buffers of one shape in turn mix, as README says (the tag check can fail)"
    else
        fail "quorum-gan-same-fresh: the tag check did not fail where two models' tensors share rounds"
        sc_show quorum-gan-same-fresh
    fi

    # The generator every 21st step, buffers of their own: the turns come
    # after the step was learned (18 steps), so rounds run and may mix the
    # two; rank 0 says so once, from the second turn on, and the report
    # counts the ranks that saw it.
    sc_job quorum-gan-late 8 -x STARCOLL_MODE=quorum "$prog" --loop own --counts 65536,32768,65536,32768 \
        --alternate 20 --loss --slow-factor 2 --steps 90
    n=$(grep -c "^starcoll: comm 0: tensor 0's buffer went to another one and came back, twice.*MPI_Comm_dup" \
        "$SC_WORK/quorum-gan-late.err")
    if [ "$n" = 1 ]; then ok "quorum-gan-late: one line says the two models came in turn after learning, and what to do"
    else fail "quorum-gan-late: $n lines say the two models came in turn (1 expected)"; sc_show quorum-gan-late; fi
    if grep -q "^@ comm 0: on 8 rank(s) a tensor's buffer went to another one and came back" \
        "$SC_WORK/quorum-gan-late.report"; then
        ok "quorum-gan-late: the report counts the 8 ranks that saw it"
    else
        fail "quorum-gan-late: the report does not count the ranks that saw two models in turn"
        sc_show quorum-gan-late
    fi

    # Two halves of ResNet-50 trained in turn (the first 3 steps, then the
    # second once), 2x straggler, quorum: the first half's step is learned,
    # dropped at the second's, and resumed where it left off once the calls
    # continue it for a step and 64 calls more; what its rounds owed at each
    # drop goes to the same
    # tensors.  Before, the step was taken for nine copies of one block (a
    # unit of 9 calls, gaps every 81), learned again at every turn, and 55 to
    # 7000 results owed at the drops never came back: conservation and
    # replicas failed with buffers kept per tensor and with fresh ones.
    # "staging": every tensor through one buffer, as Horovod's fusion
    # buffer or a flat gradient copy does; only shapes and gaps show where
    # the halves' steps are.
    for l in own fresh staging; do
        loops_job "quorum-halves-$l" quorum STARCOLL_VERBOSE=1 -- "$prog" --loop "$l" --model "$top_srcdir/benchmarks/models/resnet50.tensors" \
            --scale 16 --alternate 3 --loss --slow-factor 2 --steps 80
        n=$(grep -c "^starcoll: comm 0: learned a step of 80 eligible calls (resumed where it left off" \
            "$SC_WORK/quorum-halves-$l.err")
        if [ "${n:-0}" -ge 10 ]; then ok "quorum-halves-$l: the first half's step was resumed at $n of its turns"
        else fail "quorum-halves-$l: the first half's step was resumed ${n:-0} times (10 or more expected)"; sc_show "quorum-halves-$l"; fi
        if grep -q "not a whole step of it" "$SC_WORK/quorum-halves-$l.err" "$SC_WORK/quorum-halves-$l.report"; then
            fail "quorum-halves-$l: a step was said not to line up with the learned one"; sc_show "quorum-halves-$l"
        else ok "quorum-halves-$l: no step is said not to line up with the learned one"; fi
    done

    # GPT-2 small's halves in turn: the second half's first tensor has the
    # first slot's shape, and its layers line up with the first half's
    # slots, until a call off the pattern that no gradient left out
    # explains.  Before, rounds mixed the halves at every turn (the tag
    # check failed) and one line said so; now, at the loss after the first
    # such step, every rank turns the communicator exact, said in one line
    # and in the report's reason, and no tensor's sum holds another's.
    # What the rounds before still owed is not delivered (README, Limits):
    # conservation is not asked.
    for l in own fresh; do
        sc_job "quorum-halves-gpt2-$l" 8 -x STARCOLL_MODE=quorum "$prog" --loop "$l" \
            --model "$top_srcdir/benchmarks/models/gpt2-small.tensors" --scale 16 --alternate 3 --loss --slow-factor 2 --steps 80
        n=$(grep -c "^starcoll: comm 0: a step held calls on the learned step's pattern, then one off it that no gradient left out explains: another model's step in turn.*MPI_Comm_dup" \
            "$SC_WORK/quorum-halves-gpt2-$l.err")
        if [ "$n" = 1 ] && grep -q "^@ comm 0: [0-9]* stayed exact because the step's tensors cannot be told apart: another model's step came in turn" \
            "$SC_WORK/quorum-halves-gpt2-$l.report"; then
            ok "quorum-halves-gpt2-$l: one line says another model's step came in turn, and the report why the calls stayed exact"
        else fail "quorum-halves-gpt2-$l: $n lines say another model's step came in turn (1 expected), or the report gives no reason"; sc_show "quorum-halves-gpt2-$l"; fi
        if grep -q "^ok   - $l: every result of a tensor is made of that tensor's buffers" "$SC_WORK/quorum-halves-gpt2-$l.out"; then
            ok "quorum-halves-gpt2-$l: no tensor's sum holds the other half's (tags)"
        else fail "quorum-halves-gpt2-$l: a tensor's sum holds another's (the tag check failed)"; sc_show "quorum-halves-gpt2-$l"; fi
    done

    # An actor and a critic in turn on one communicator, as Spinning Up's
    # PPO trains them (mpi_actor_critic.py): the critic's first four tensors
    # have the actor's shapes, its last does not, and a per-step KL sum
    # marks the actor's steps.  Before, rounds summed one net's gradients
    # into the other's at every turn (from the third epoch, 10335 of 14064
    # gradient sums were not the exact sum, quorum) and the job ran 1.5x
    # plain MPI's time; now the communicator turns exact at the first turn
    # and every later sum is exact.
    if [ $have_py = 1 ]; then
        acscript="$(cd "$(dirname "$0")" && pwd)/mpi_actor_critic.py"
        loops_job quorum-actor-critic-own quorum -- "$py" "$acscript" --slow-factor 2 --grads own
        loops_job quorum-actor-critic-fresh quorum -- "$py" "$acscript" --slow-factor 2 --grads fresh
        loops_job auto-actor-critic-fresh auto -- "$py" "$acscript" --slow-factor 2 --grads fresh
        n=$(grep -c "^starcoll: comm 0: a step held calls on the learned step's pattern, then one off it" \
            "$SC_WORK/quorum-actor-critic-fresh.err")
        if [ "$n" = 1 ]; then ok "quorum-actor-critic-fresh: one line says another model's step came in turn"
        else fail "quorum-actor-critic-fresh: $n lines say another model's step came in turn (1 expected)"; sc_show quorum-actor-critic-fresh; fi
    fi

    # PowerSGD (mpi_powersgd.py): its packed Q factors summed one step, its
    # P factors the next, each computed at once from the last sum of the
    # other.  The step's unit holds the loss twice, so it was learned only
    # after about 690 steps, and then quorum rounds made 1496 of 7120 factor
    # sums partial, the loss ended at 0.80 (plain MPI: 0.19) and the
    # replicas 0.12 apart.  Now the two-pattern step stays exact, and the
    # report says why.
    if [ $have_py = 1 ]; then
        name=quorum-powersgd
        loops_job "$name" quorum -- "$py" "$(cd "$(dirname "$0")" && pwd)/mpi_powersgd.py" --slow-factor 2
        if grep -q "stayed exact because .*the step is two patterns in turn" "$SC_WORK/$name.report"; then
            ok "$name: the report says the step is two patterns in turn, kept exact"
        else fail "$name: the report does not say the step is two patterns in turn"; sc_show "$name"; fi
    fi

    # One extra eligible call on rank 7 at step 20: refused with one line, no
    # hang.  "fused": the four tensors in fused rounds, the extra call in a
    # direct step on a fused member (it hung once: the group's call count).
    for mode in quorum auto auto-fused; do
        fuse=64K share=0.125
        [ "$mode" = auto-fused ] && fuse=1M share=1
        for f in 1 2; do
            name="$mode-extra-call-$f"
            sc_job "$name" 8 -x STARCOLL_MODE="${mode%-fused}" -x STARCOLL_FUSE_BYTES=$fuse -x STARCOLL_FUSE_SHARE=$share \
                "$prog" --loop fresh \
                --extra-call 20 --slow-factor $f
            rc=$?
            if [ $rc = 124 ] || ! grep -q "^loops:" "$SC_WORK/$name.out"; then
                fail "$name: the job did not finish (status $rc)"
                sc_show "$name"
                continue
            fi
            if grep -q "rank 7: the extra call at step 20 returned an error" "$SC_WORK/$name.err"; then
                ok "$name: the call only rank 7 made was refused with an error, and the job went on to its end"
            else
                fail "$name: the call only rank 7 made was not refused"
                sc_show "$name"
            fi
            if grep -qE "^starcoll: rank 7: MPI_Allreduce on comm 0 .*disagree" "$SC_WORK/$name.err"; then
                ok "$name: rank 7 says why, naming the communicator and the call"
            else
                fail "$name: no line from rank 7 says why its call failed"
                sc_show "$name"
            fi
            if grep -q "^ok   - fresh: every result of a tensor is made of that tensor's buffers" "$SC_WORK/$name.out"; then
                ok "$name: no result mixed two tensors"
            else
                fail "$name: a result mixed two tensors"
            fi
        done
    done

    # Rank 7 stops calling for 7 s at step 25: the watchdog names it (2 s).
    for mode in quorum auto; do
        name="$mode-stall"
        loops_job "$name" "$mode" STARCOLL_STALL=2 -- "$prog" --loop own --stop-at 25 --stop-s 7
        if grep -qE "^starcoll: comm 0 stalled: rank [0-9]+ has waited [0-9]+ s .*waiting for.* rank 7 computing for" "$SC_WORK/$name.err"; then
            ok "$name: the stall watchdog named rank 7 and what it was doing"
        else
            fail "$name: no watchdog line named rank 7"
            sc_show "$name"
        fi
        n=$(grep -c "stalled: rank" "$SC_WORK/$name.err")
        if [ "$n" -ge 1 ] && [ "$n" -le 6 ]; then ok "$name: $n watchdog lines, at growing intervals"
        else fail "$name: $n watchdog lines"; fi
    done
fi
finish
