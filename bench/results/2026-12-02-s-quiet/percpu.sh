#!/usr/bin/env bash
# Reads per server CPU-second: the read mix against a primary and against its replica, alternately.
set -uo pipefail
B=${BUILD:-build}
rm -rf /tmp/pc-p /tmp/pc-r; cp -r ${DATA:-data}/s-db /tmp/pc-p; mkdir -p /tmp/pc-r
$B/server/mentatd --data-dir=/tmp/pc-p --listen=127.0.0.1:7991 --http= --log-level=warn > /tmp/pc-p.log 2>&1 &
P=$!
sleep 3
$B/server/mentatd --data-dir=/tmp/pc-r --listen=127.0.0.1:7992 --http= --log-level=warn --replica-of 127.0.0.1:7991 > /tmp/pc-r.log 2>&1 &
R=$!
trap "kill $P $R 2>/dev/null" EXIT
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
tck=$(getconf CLK_TCK)
sleep 15
for round in 1 2; do
  for node in primary replica; do
    if [ $node = primary ]; then PID=$P; PORT=7991; else PID=$R; PORT=7992; fi
    c0=$(cpu $PID)
    $B/bench/mentat-bench run --data ${DATA:-data}/s --address 127.0.0.1:$PORT --out /tmp/pc-out-$node-$round \
      --scenarios concurrency_sweep --clients 8 --reps 1 --min-s 15 > /tmp/pc-$node-$round.log 2>&1
    c1=$(cpu $PID)
    line=$(grep "read_mix" /tmp/pc-$node-$round.log | tail -1)
    n=$(echo "$line" | sed -E 's/.* n +([0-9]+) .*/\1/')
    secs=$(echo "scale=2; ($c1-$c0)/$tck" | bc)
    echo "round $round $node: reads $n, server CPU $secs s, reads per CPU-second $(echo "scale=0; $n/$secs" | bc) | $line"
  done
done
