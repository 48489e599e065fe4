#!/bin/bash
# usage: load.sh BINDIR TAG  -- fresh store, mentatd started here, load m, time it
# DATA: the dataset of `mentat-bench gen --scale m` (default ./m); WORK: where
# the stores go (default ./stores), both outside the repository.
# TAG.mon: the server's CPU (utime+stime, clock ticks) and RSS every second,
# so that the import's own CPU and peak RSS can be read apart from the
# history phase and what follows (column builds, compactions).
set -u
BIN=$1; TAG=$2; DATA=${DATA:-./m}
DB=${WORK:-./stores}/db-$TAG
rm -rf $DB; mkdir -p $DB
SOCK=$(mktemp -u)-$TAG.sock  # a short path: unix sockets take 108 bytes
/usr/bin/time -v -o $TAG.server-time $BIN/mentatd --data-dir $DB --listen unix:$SOCK --http "" > $TAG.server.log 2>&1 &
SPID=$!
for i in $(seq 100); do [ -S $SOCK ] && break; sleep 0.1; done
MPID=$(pgrep -P $SPID)
( while kill -0 $MPID 2>/dev/null; do
    echo "$(date +%s.%N) $(awk '{print $14+$15}' /proc/$MPID/stat 2>/dev/null) $(awk '/VmRSS/{print $2}' /proc/$MPID/status 2>/dev/null)"
    sleep 1; done ) > $TAG.mon &
/usr/bin/time -v -o $TAG.load-time $BIN/mentat-bench load --data $DATA --address unix:$SOCK > $TAG.load.log 2>&1
echo "load rc $?" >> $TAG.load.log
kill -INT $MPID; wait $SPID
grep -h "Maximum resident" $TAG.server-time
tail -2 $TAG.load.log
