#!/bin/bash
# abl.sh ROUNDS: q4 at l, old and new mentatd interleaved. Env: DB (the l store),
# DATA (the l dataset), SOCK; mentatd.old, mentatd.new, mentat-cli and
# mentat-bench beside this script.
cd "$(dirname "$0")"
Q='[:find ?i ?title ?priority :where [?i :issue/state :state/open] [?i :issue/priority ?priority] [?i :issue/title ?title] [(>= ?priority 4)]]'
FR=../2026-12-03-l/firstrow.py
for r in $(seq 1 $1); do
  for b in old new; do
    rm -f $SOCK
    ./mentatd.$b --data-dir $DB --listen unix:$SOCK --http 127.0.0.1:17921 > srv-ab-$b-$r.log 2>&1 &
    P=$!
    for j in $(seq 1 100); do grep -q "serving gRPC" srv-ab-$b-$r.log && break; sleep 0.2; done
    t() { awk '{print $14+$15}' /proc/$P/stat; }
    rss() { grep VmRSS /proc/$P/status | awk '{print $2}'; }
    echo "== $b round $r rss_start_kb=$(rss)"
    c0=$(t); f1=$(python3 $FR ./mentat-cli --addr unix:$SOCK --format csv -t -c "$Q"); c1=$(t)
    echo "first cli: $f1 server_cpu_s=$(echo "($c1-$c0)/100" | bc -l | cut -c1-6) rss_kb=$(rss)"
    c0=$(t); f2=$(python3 $FR ./mentat-cli --addr unix:$SOCK --format csv -t -c "$Q"); c1=$(t)
    echo "second cli: $f2 server_cpu_s=$(echo "($c1-$c0)/100" | bc -l | cut -c1-6) rss_kb=$(rss)"
    c0=$(t); s0=$(date +%s.%N)
    ./mentat-bench run --data $DATA --address unix:$SOCK --out ./ab-$b-$r --scenarios predicate_scan --clients 1 --min-s 3 --min-samples 3 > ab-$b-$r.log 2>&1
    c1=$(t)
    echo "bench: $(grep q4 ab-$b-$r/timings.csv) server_cpu_s=$(echo "($c1-$c0)/100" | bc -l | cut -c1-6) rss_kb=$(rss) hwm_kb=$(grep VmHWM /proc/$P/status | awk '{print $2}')"
    grep "slow query" srv-ab-$b-$r.log | grep -o "slow query: [0-9]* ms" | tr '\n' ' '; echo
    kill $P; wait $P
  done
done
