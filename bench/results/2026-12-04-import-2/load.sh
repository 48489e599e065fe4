#!/bin/bash
# usage: load.sh BINDIR TAG  -- fresh store, mentatd started here, load m, time it
# DATA: the dataset of `mentat-bench gen --scale m` (default ./m); WORK: where
# the stores go (default ./stores), both outside the repository.
# TAG.mon: the server's CPU (utime+stime, clock ticks) and RSS every second;
# TAG.io: its rchar, wchar, read_bytes, write_bytes (/proc/PID/io);
# TAG.threads: every thread's CPU (tid, name, ticks) every second, so that
# importcpu.py can say where each thread's CPU went and how many cores the
# import's apply phase kept busy.
set -u
BIN=$1; TAG=$2; DATA=${DATA:-./m}
DB=${WORK:-./stores}/db-$TAG
rm -rf $DB; mkdir -p $DB
SOCK=$(mktemp -u)-$TAG.sock  # a short path: unix sockets take 108 bytes
/usr/bin/time -v -o $TAG.server-time $BIN/mentatd --data-dir $DB --listen unix:$SOCK --http "" ${SERVER_ARGS:-} > $TAG.server.log 2>&1 &
SPID=$!
for i in $(seq 100); do [ -S $SOCK ] && break; sleep 0.1; done
MPID=$(pgrep -P $SPID)
( while kill -0 $MPID 2>/dev/null; do
    now=$(date +%s.%N)
    echo "$now $(awk '{print $14+$15}' /proc/$MPID/stat 2>/dev/null) $(awk '/VmRSS/{print $2}' /proc/$MPID/status 2>/dev/null)" >> $TAG.mon
    echo "$now $(awk '/^(rchar|wchar|read_bytes|write_bytes)/{printf "%s ", $2}' /proc/$MPID/io 2>/dev/null)" >> $TAG.io
    for t in /proc/$MPID/task/*; do
      # comm may hold spaces: fields after the closing parenthesis.
      s=$(cat $t/stat 2>/dev/null) || continue
      rest=${s##*) }; name=${s#*(}; name=${name%%)*}
      echo "$now ${t##*/} ${name// /_} $(echo $rest | awk '{print $12+$13}')"
    done >> $TAG.threads
    sleep 0.5; done ) &
MON=$!
: > $TAG.mon; : > $TAG.threads; : > $TAG.io
/usr/bin/time -v -o $TAG.load-time $BIN/mentat-bench load --data $DATA --address unix:$SOCK > $TAG.load.log 2>&1
echo "load rc $?" >> $TAG.load.log
if [ -n "${CHECKS:-}" ]; then
  $BIN/mentat-bench run --data $DATA --address unix:$SOCK --scenarios point_lookup,pull,ref_traversal,since,aggregate --clients 1 --reps 1 --min-s 2 > $TAG.checks.log 2>&1
  echo "checks rc $?" >> $TAG.checks.log
fi
kill -INT $MPID; wait $SPID; wait $MON
grep -h "Maximum resident" $TAG.server-time
tail -2 $TAG.load.log
