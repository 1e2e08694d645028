# Time to accuracy per scenario and mode: bars at the median over the
# repeats, error bars from the fastest to the slowest repeat.  A missing bar
# means the mode never reached the target in that scenario.
# Called by benchmarks/scenarios as
#   gnuplot -e "data='tta.dat'; modes='sync auto'; out='tta.png'" plot_tta.gp
# data: whitespace table, one row per scenario: the scenario name, then for
# each mode in order its median, min and max TTA in seconds (NaN when unknown).
if (!exists("data") || !exists("modes") || !exists("out")) {
    print "plot_tta.gp: give -e \"data='tta.dat'; modes='sync auto'; out='tta.png'\""
    exit status 2
}
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 900,560 font ",11"
} else {
    set terminal png size 900,560
}
set output out
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.75 border -1
set boxwidth 0.9
set key top left
set grid ytics
set yrange [0:*]
set ylabel "time to target accuracy (s), median; bars: min to max"
set title "time to accuracy per scenario and mode"
plot for [m=1:words(modes)] data using (column(3*m-1)):(column(3*m)):(column(3*m+1)):xtic(1) \
     title word(modes, m)
