set terminal svg size 900,500 dynamic font 'sans,11'
set output 'latency.svg'
set title 'Latency by scenario, 1 client, scale m'
set style data histograms
set style histogram clustered
set style fill solid 0.8 border -1
set logscale y
set ylabel 'ms (log)'
set xtics rotate by -30
set grid ytics
plot 'latency.dat' using 2:xtic(1) title 'p50', '' using 3 title 'p95', '' using 4 title 'p99'
unset logscale y
set style data lines
set xtics norotate
set output 'sweep.svg'
set title 'Read mix (q1, q2, pull): throughput and p99 by clients, scale m'
set logscale x 2
set xlabel 'clients'
set ylabel 'ops/s'
set y2label 'p99 ms'
set ytics nomirror
set y2tics
plot 'sweep.dat' using 1:2 with linespoints title 'ops/s' axes x1y1, '' using 1:3 with linespoints title 'p99 ms' axes x1y2
