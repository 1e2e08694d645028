#!/bin/bash
# starcoll-plot on a recorded trace (fixtures/trace_groups): a PNG of the
# size asked for, by prefix and by file names; a clear error on a truncated
# trace (and a plot of its complete lines with --allow-partial), on files
# that are not traces, and on a prefix that names none.
: "${top_builddir:=..}" "${srcdir:=.}"
plot="$top_builddir/benchmarks/starcoll-plot"
fixture="$srcdir/fixtures/trace_groups"
pass=0 fail=0
check() { # check NAME CONDITION...
    local name=$1; shift
    if "$@"; then echo "  ok   $name"; pass=$((pass + 1)); else echo "  FAIL $name"; fail=$((fail + 1)); fi
}
if [ ! -x "$plot" ] || ! command -v gnuplot >/dev/null; then
    echo "starcoll-plot not built at $plot, or no gnuplot (apt-get install gnuplot-nox)"
    echo "0 passed, 1 failed"
    exit 1
fi
dir=$(mktemp -d /tmp/plot_check.XXXXXX) || { echo "0 passed, 1 failed"; exit 1; }
trap 'rm -rf "$dir"' EXIT

# png_size FILE: "WIDTH HEIGHT" from the IHDR chunk, or nothing when FILE is no PNG.
png_size() {
    [ "$(od -An -c -j1 -N3 "$1" 2>/dev/null | tr -d ' ')" = PNG ] || return 0
    od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8 }'
}

out=$("$plot" -o "$dir/a.png" -p "$fixture/tr" 2>&1); rc=$?
check "by prefix: exit 0, says what it wrote" test "$rc" -eq 0 -a -n "$(echo "$out" | grep 'wrote .*a.png (4 ranks)')"
check "by prefix: a 1200x800 PNG" test "$(png_size "$dir/a.png")" = "1200 800"
check "by prefix: not a blank image" test "$(stat -c %s "$dir/a.png" 2>/dev/null || echo 0)" -gt 20000
out=$("$plot" -o "$dir/b.png" -s 800x500 "$fixture"/tr.* 2>&1); rc=$?
check "by names, -s 800x500: an 800x500 PNG" test "$rc" -eq 0 -a "$(png_size "$dir/b.png")" = "800 500"
out=$("$plot" -o "$dir/c.png" -s 10x10 -p "$fixture/tr" 2>&1); rc=$?
check "-s 10x10: one clear line, exit 2, no file" test "$rc" -eq 2 -a ! -e "$dir/c.png" -a "$(echo "$out" | wc -l)" -eq 1

# A job killed while writing: the last line of rank 2's trace cut in half.
mkdir "$dir/cut"
cp "$fixture"/tr.* "$dir/cut/"
size=$(stat -c %s "$dir/cut/tr.2")
truncate -s $((size - 40)) "$dir/cut/tr.2"
out=$("$plot" -o "$dir/d.png" -p "$dir/cut/tr" 2>&1); rc=$?
check "truncated trace: exit 1, names the file and the partial line" \
    test "$rc" -eq 1 -a -n "$(echo "$out" | grep 'tr.2 ends in a partial line')"
check "truncated trace: no PNG" test ! -e "$dir/d.png"
out=$("$plot" --allow-partial -o "$dir/e.png" -p "$dir/cut/tr" 2>&1); rc=$?
check "truncated, --allow-partial: the complete lines plotted" test "$rc" -eq 0 -a "$(png_size "$dir/e.png")" = "1200 800"

echo "not a trace" >"$dir/junk.0"
out=$("$plot" -o "$dir/f.png" "$dir/junk.0" 2>&1); rc=$?
check "not a trace: exit 1, says so" test "$rc" -eq 1 -a -n "$(echo "$out" | grep 'not a starcoll trace')"
out=$("$plot" -o "$dir/g.png" -p "$dir/none" 2>&1); rc=$?
check "a prefix with no traces: exit 1, says so" test "$rc" -eq 1 -a -n "$(echo "$out" | grep 'no trace files')"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
