# Held-out accuracy against wall time, one line per run, one colour per mode:
# how fast each mode climbs to the target in one scenario.
# Called by benchmarks/scenarios as
#   gnuplot -e "files='a.csv b.csv ...'; titles='sync - auto ...'; colors='1 1 2 ...';
#               scenario='persistent'; target=0.95; out='accuracy_persistent.png'" plot_accuracy.gp
# files:  CSVs written by --csv (time_s,step,accuracy,loss)
# titles: key entry per file, '-' for none (repeats share their mode's entry)
# colors: line colour index per file (one per mode)
if (!exists("files") || !exists("out")) {
    print "plot_accuracy.gp: give -e \"files='...'; out='...png'\" (see the header)"
    exit status 2
}
if (!exists("titles")) titles = ""
if (!exists("colors")) colors = ""
if (!exists("scenario")) scenario = ""
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 900,560 font ",11"
} else {
    set terminal png size 900,560
}
set output out
set datafile separator ","
set key bottom right
set grid
set xlabel "wall time (s)"
set ylabel "held-out accuracy"
set yrange [0.5:1]  # the climb to the target is what differs between modes
set title sprintf("accuracy against time, scenario %s", scenario)
if (exists("target")) {
    set arrow 1 from graph 0, first target to graph 1, first target nohead dt 2 lc rgb "gray40"
    set label 1 sprintf("target %g", target) at graph 0.01, first target offset 0,0.7 tc rgb "gray40"
}
label(i) = (words(titles) >= i && word(titles, i) ne "-") ? word(titles, i) : ""
colour(i) = words(colors) >= i ? int(word(colors, i)) : i
plot for [i=1:words(files)] word(files, i) skip 1 using 1:3 with lines lw 2 \
     lc colour(i) title label(i)
