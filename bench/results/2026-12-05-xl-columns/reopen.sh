#!/bin/bash
# reopen xl with the 8G column cache: open time, then q4 (first after open, then warm)
B=${BIN:?}
mode=$1   # warm|cold
[ "$mode" = cold ] && { sync; echo 3 > /proc/sys/vm/drop_caches; }
$B/server/mentatd --data-dir ${DB:?} --listen unix:${SOCK:?} --column-cache 8G --query-timeout-ms=900000 > server-$mode.log 2>&1 &
echo $! > server.pid
for i in $(seq 100); do grep -q 'opened in' server-$mode.log && break; sleep 0.2; done
grep -o 'opened in [0-9.]* ms' server-$mode.log
for i in 1 2 3; do
  $B/bench/mentat-bench run --data ${DATA:?} --address unix:${SOCK:?} --out ./o-$mode-$i --scenarios predicate_scan --clients 1 --reps 1 --min-s 0 --min-samples 1 > o-$mode-$i.log 2>&1
  grep -h 'predicate_scan' o-$mode-$i.log | tail -1
done
grep -o 'slow query: [0-9]* ms' server-$mode.log | tr '\n' ' '; echo
grep VmRSS /proc/$(cat server.pid)/status
kill -INT $(cat server.pid); while kill -0 $(cat server.pid) 2>/dev/null; do sleep 0.5; done
