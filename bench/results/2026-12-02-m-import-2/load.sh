#!/bin/bash
# usage: load.sh BINDIR TAG  -- fresh store, mentatd started here, load m, time it
# DATA: the dataset of `mentat-bench gen --scale m` (default ./m); WORK: where
# the stores go (default ./stores), both outside the repository.
set -u
BIN=$1; TAG=$2; DATA=${DATA:-./m}
DB=${WORK:-./stores}/db-$TAG
rm -rf $DB; mkdir -p $DB
SOCK=/tmp/scale20-$TAG.sock; rm -f $SOCK
/usr/bin/time -v -o $TAG.server-time $BIN/mentatd --data-dir $DB --listen unix:$SOCK --http "" > $TAG.server.log 2>&1 &
SPID=$!
for i in $(seq 100); do [ -S $SOCK ] && break; sleep 0.1; done
/usr/bin/time -v -o $TAG.load-time $BIN/mentat-bench load --data $DATA --address unix:$SOCK > $TAG.load.log 2>&1
echo "load rc $?" >> $TAG.load.log
# a write right after: the history phase did that; now the L0 summary from LOG
kill -INT $(pgrep -P $SPID); wait $SPID
grep -h "Maximum resident" $TAG.server-time
tail -2 $TAG.load.log
