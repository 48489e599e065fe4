#!/bin/bash
# reads.sh: after start.sh's load (its server still up): sizes, then every read
# scenario through a mentatd that mentat-bench starts (and restarts for
# cold_vs_warm, which drops the page cache), then q4. BIN, DATA, DB, OUT from
# the environment.
set -u
python3 $(dirname $0)/cfsizes.py $DB/default 301083344 > sizes-after-load.txt
du -sb $DB/default/columns $DB > du-after-load.txt
kill -INT $(cat server.pid); while kill -0 $(cat server.pid) 2>/dev/null; do sleep 1; done
$BIN/mentat-bench run --data $DATA --mentatd $BIN/mentatd --server-data $DB --out $OUT/reads1 \
  --scenarios ping,point_lookup,pull,ref_traversal,as_of,input_bindings,since,aggregate,concurrency_sweep,cold_vs_warm \
  --clients 1,8,32,64,128 --reps 1 --min-s 3 --min-samples 5 --server-arg --query-timeout-ms=900000 > reads1.log 2>&1
$BIN/mentat-bench run --data $DATA --mentatd $BIN/mentatd --server-data $DB --out $OUT/q4 \
  --scenarios predicate_scan --clients 1 --reps 1 --min-s 1 --min-samples 1 --server-arg --query-timeout-ms=900000 > q4.log 2>&1
