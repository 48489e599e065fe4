#!/bin/bash
# q4 at xl with an 8G column cache: rounds of predicate_scan, sampling column cache bytes
B=${BIN:?}/bench/mentat-bench
for i in 1 2 3 4 5 6; do
  date -u +%T >> rounds.txt
  $B run --data ${DATA:?} --address unix:${SOCK:?} --out ./r$i --scenarios predicate_scan --clients 1 --reps 1 --min-s 1 --min-samples 2 > r$i.log 2>&1
  echo "round $i rc $?" >> rounds.txt
  grep -h -i -E 'column' server.log | tail -5 >> rounds.txt
  curl -s localhost:7879/metrics | grep -E '^mentat_column_cache_bytes' >> rounds.txt
  grep VmRSS /proc/$(cat server.pid)/status >> rounds.txt
done
