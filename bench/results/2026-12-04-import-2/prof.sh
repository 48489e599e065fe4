#!/bin/bash
# usage: prof.sh BINDIR TAG -- as load.sh, with mentatd under perf record
# (all threads, cpu-clock at 49 Hz, dwarf stacks); after the load, the
# checked reads of mentat-bench run against the loaded store.
set -u
BIN=$1; TAG=$2; DATA=${DATA:-./m}
DB=${WORK:-./stores}/db-$TAG
rm -rf $DB; mkdir -p $DB
SOCK=$(mktemp -u)-$TAG.sock  # a short path: unix sockets take 108 bytes
perf record -e cpu-clock -F 49 --call-graph dwarf,16384 -o $TAG.perf.data -- $BIN/mentatd --data-dir $DB --listen unix:$SOCK --http "" > $TAG.server.log 2>&1 &
PERF=$!
for i in $(seq 200); do [ -S $SOCK ] && break; sleep 0.1; done
/usr/bin/time -v -o $TAG.load-time $BIN/mentat-bench load --data $DATA --address unix:$SOCK > $TAG.load.log 2>&1
echo "load rc $?" >> $TAG.load.log
$BIN/mentat-bench run --data $DATA --address unix:$SOCK --scenarios point_lookup,pull,ref_traversal,since,aggregate --clients 1 --reps 1 --min-s 2 > $TAG.checks.log 2>&1
echo "checks rc $?" >> $TAG.checks.log
kill -INT $(pgrep -P $PERF -x mentatd); wait $PERF
tail -2 $TAG.load.log; tail -5 $TAG.checks.log
