#!/bin/bash
# start.sh: the xl import. BIN (mentatd, mentat-bench), DATA (mentat-bench gen --scale xl),
# DB (a fresh store) from the environment; run in the folder that gets the logs.
# mentatd at nice 10 with --import-memory 6G; mon.txt samples every 10 s:
# unix time, server CPU (clock ticks), RSS (kB), store size (MB). The server stays up.
set -u
rm -rf $DB; mkdir -p $DB
SOCK=$(mktemp -u)-xl.sock
nice -n 10 $BIN/mentatd --data-dir $DB --listen unix:$SOCK --http 127.0.0.1:9477 --import-memory 6G > server.log 2>&1 &
SPID=$!; echo $SPID > server.pid
for i in $(seq 100); do [ -S $SOCK ] && break; sleep 0.1; done
( while kill -0 $SPID 2>/dev/null; do
    echo "$(date +%s) $(awk '{print $14+$15}' /proc/$SPID/stat 2>/dev/null) $(awk '/VmRSS/{print $2}' /proc/$SPID/status 2>/dev/null) $(du -sm $DB 2>/dev/null | cut -f1)"
    sleep 10; done ) > mon.txt &
date -u > load.start
/usr/bin/time -v -o load-time.txt nice -n 10 $BIN/mentat-bench load --data $DATA --address unix:$SOCK > load.log 2>&1
echo "load rc $?" >> load.log
date -u > load.end
