#!/bin/bash
# sample the server every 30 s: time, load, datoms written, tx, rss, hwm, disk, writes stopped, pending compaction
PID=$1; OUT=$2
while kill -0 $PID 2>/dev/null; do
  m=$(curl -s -m 5 127.0.0.1:${HTTP_PORT:-17920}/metrics | grep -v '^#')
  g(){ echo "$m" | grep "^$1" | head -1 | awk '{print $NF}'; }
  echo "$(date -u +%T) load=$(cut -d' ' -f1 /proc/loadavg) datoms=$(g mentat_datoms_written_total) tx=$(g mentat_transactions_total) basis=$(g mentat_basis_tx) rss=$(grep VmRSS /proc/$PID/status|awk '{print $2}') hwm=$(grep VmHWM /proc/$PID/status|awk '{print $2}') disk=$(du -sm ${DB:-./db}|cut -f1) stopped=$(g mentat_writes_stopped) pend=$(g mentat_compaction_pending_bytes) cpu=$(g process_cpu_seconds_total)" >> $OUT
  sleep 30
done
