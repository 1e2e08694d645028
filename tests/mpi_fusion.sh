#!/bin/bash
# Fused rounds (issue 16, README "Fused rounds"): a tolerant step's small
# tensors ride in a few group rounds, one step late.  8 ranks, ResNet-50's
# and GPT-2 small's tensors (benchmarks/models/), a 1-element loss every
# step.  Each run checks every return code, that no result mixes two
# tensors (tags), the loss exact at every step, and after a flush
# conservation per tensor and bitwise replicas.  Here:
#   - the small tensors are fused (the report counts them per step), and
#     with STARCOLL_FUSE_BYTES=0 they are not, and still pass; a step of
#     small tensors alone is not fused by default (STARCOLL_FUSE_SHARE),
#     and STARCOLL_VERBOSE=1 says how many the share fused;
#   - modes swapped every few steps (exact, tolerant, children) over fused
#     steps: leftovers of a tolerant spell are drained, nothing lost;
#   - flushes and MPI_Pcontrol(0) spells inside the run (--soak);
#   - a step of small tensors alone and no loss (nothing else paces it):
#     a rank never runs more than a step ahead of its group rounds, and
#     with a quorum of all every rank gets the same result at every call.
. "$(dirname "$0")/mpi_testlib.sh"
sc_need_library || finish
prog="$top_builddir/benchmarks/starcoll_loops"
sc_need_program "$prog" || finish
models="$top_srcdir/benchmarks/models"

# fused_per_step NAME MIN: the report's small-tensor calls per step in fused
# rounds is at least MIN (0: the report has no such line).
fused_per_step() {
    local name=$1 want=$2 got
    sc_preloading || return
    got=$(sed -nE 's/^@ comm 0: ([0-9.]+) small-tensor calls per step rode in fused rounds.*/\1/p' "$SC_WORK/$name.report" | head -n 1)
    if [ "$want" = 0 ]; then
        if [ -z "$got" ]; then ok "$name: no call rode in fused rounds"
        else fail "$name: $got calls per step rode in fused rounds, want none"; fi
    elif [ -n "$got" ] && awk -v g="$got" -v w="$want" 'BEGIN {exit !(g >= w)}'; then
        ok "$name: $got small-tensor calls per step rode in fused rounds (want >= $want)"
    else
        fail "$name: ${got:-no} small-tensor calls per step in fused rounds, want >= $want"
        sc_show "$name"
    fi
}

# share_line NAME TEXT: STARCOLL_VERBOSE=1's line on what the fusion share
# left out (an ERE), and no other such line.
share_line() {
    local name=$1 want=$2 lines
    sc_preloading || return
    lines=$(grep -E "^starcoll: [0-9]+ of the step's [0-9]+ tensors under STARCOLL_FUSE_BYTES" "$SC_WORK/$name.err" | sort -u)
    if [ -n "$lines" ] && ! grep -qvE "^starcoll: $want" <<<"$lines"; then
        ok "$name: STARCOLL_VERBOSE=1 says: ${lines#starcoll: }"
    else
        fail "$name: want the line \"starcoll: $want\" alone, got: ${lines:-none}"
        sc_show "$name"
    fi
}

# ResNet-50 has 109 tensors under 64 KiB, GPT-2 small 98: most steps fuse them.
sc_mode_job resnet50-quorum-fused quorum -- "$prog" --model "$models/resnet50.tensors" --scale 64 --loss \
    --steps 14 --warmup 6 --compute-ms 20 --slow-factor 2
fused_per_step resnet50-quorum-fused 60
sc_mode_job gpt2-groups-fused groups -- "$prog" --model "$models/gpt2-small.tensors" --scale 64 --loss \
    --steps 14 --warmup 6 --compute-ms 20 --slow-factor 2
fused_per_step gpt2-groups-fused 50
sc_mode_job resnet50-quorum-unfused quorum -- -x STARCOLL_FUSE_BYTES=0 "$prog" --model "$models/resnet50.tensors" \
    --scale 64 --loss --steps 14 --warmup 6 --compute-ms 20 --slow-factor 2
fused_per_step resnet50-quorum-unfused 0

# Every 3 steps another mode, quorum, or set of children.
sched=$(awk 'BEGIN {n = split("quorum:6 sync groups:7 hier quorum:7 groups:3+7 sync quorum:5 groups:2+6", m, " ");
                    for (i = 0; i < 12; i++) printf "%s%d:%s", i ? "," : "", 4 + 3 * i, m[i % n + 1]}')
sc_mode_job resnet50-swaps auto -- -x STARCOLL_SCHEDULE="$sched" "$prog" --model "$models/resnet50.tensors" \
    --scale 64 --loss --steps 44 --warmup 4 --compute-ms 5 --slow-factor 2
if sc_preloading; then
    d=$(grep -c "STARCOLL_SCHEDULE: entry" "$SC_WORK/resnet50-swaps.report")
    if [ "$d" -ge 6 ]; then ok "resnet50-swaps: $d scheduled decisions applied"
    else fail "resnet50-swaps: $d scheduled decisions applied, want at least 6 of 12"; fi
fi

# Flushes at steps 17 and 70, MPI_Pcontrol(0) from step 30 to 40, random compute.
sc_mode_job resnet50-soak quorum -- "$prog" --model "$models/resnet50.tensors" --scale 64 --loss --soak \
    --steps 80 --warmup 4 --compute-ms 5
fused_per_step resnet50-soak 30

# A step whose tensors are all small (a small MLP's three weight
# matrices), no loss, a quorum of all: every round holds every rank's
# buffer, so every rank must get the same result at every call, one step
# late.  A member call that came while its group's round was under way
# once returned zeros on some ranks and that round a step later: replicas
# drifted apart with no straggler at all.
sc_mode_job mlp-quorum-all quorum -- -x STARCOLL_QUORUM=8 -x STARCOLL_FUSE_SHARE=1 "$prog" --counts 100480,16512,1290 \
    --steps 40 --warmup 10 --compute-ms 5 --same-results
fused_per_step mlp-quorum-all 2
# ... and by default they are not fused at all: together they are the
# whole step, and fused they would all come a step late on every rank
# (STARCOLL_FUSE_SHARE, 1/8 of the step's bytes by default).
sc_mode_job mlp-quorum-default quorum -- -x STARCOLL_VERBOSE=1 "$prog" --counts 100480,16512,1290 --steps 30 \
    --warmup 10 --compute-ms 5 --slow-factor 2
fused_per_step mlp-quorum-default 0
# ... and STARCOLL_VERBOSE=1 says so, counting the plan as made: the share
# picks the 1290 floats alone, and a group of one is a round of its own.
share_line mlp-quorum-default "0 of the step's 3 tensors under STARCOLL_FUSE_BYTES are fused, 0.0% of its bytes \(STARCOLL_FUSE_SHARE=0.125\)"
# A fifth of the bytes: the two smaller ones (71208 of 473128 bytes) ride
# in one group round (the report's mean over the run's steps was 1.9 here,
# not 2: not every step of the run fuses).
sc_mode_job mlp-quorum-share quorum -- -x STARCOLL_VERBOSE=1 -x STARCOLL_FUSE_SHARE=0.2 "$prog" \
    --counts 100480,16512,1290 --steps 30 --warmup 10 --compute-ms 5 --slow-factor 2
fused_per_step mlp-quorum-share 1.5
share_line mlp-quorum-share "2 of the step's 3 tensors under STARCOLL_FUSE_BYTES are fused, 15.1% of its bytes \(STARCOLL_FUSE_SHARE=0.2\)"

# Small tensors alone, no loss, a 2x straggler.
counts=$(awk 'BEGIN { for (i = 0; i < 200; i++) printf "%s%d", i ? "," : "", 64 + (i * 37) % 937 }')
sc_mode_job small-only quorum -- -x STARCOLL_FUSE_SHARE=1 "$prog" --counts "$counts" --steps 20 --warmup 4 --compute-ms 5 \
    --slow-factor 2
fused_per_step small-only 100
finish
