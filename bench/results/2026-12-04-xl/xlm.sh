#!/bin/bash
# xlm.sh ROUNDS: one client's ping, q1, pull, q2, as_of and input bindings at xl
# and at m, interleaved, the same binary. BIN, XL_DATA, XL_DB, M_DATA, M_DB,
# OUT from the environment (M_DB is copied before each m run).
set -u
for r in $(seq 1 $1); do
  O=$OUT/xlm-xl-$r
  $BIN/mentat-bench run --data $XL_DATA --mentatd $BIN/mentatd --server-data $XL_DB --out $O --scenarios ping,point_lookup,pull,ref_traversal,as_of,input_bindings --clients 1 --reps 1 --min-s 4 --warmup-s 5 > $O.log 2>&1
  echo "xl $r: $(tail -n +2 $O/timings.csv | awk -F, '{printf "%s %s; ", $1,$8}')"
  rm -rf $OUT/m-run; cp -r $M_DB $OUT/m-run
  O=$OUT/xlm-m-$r
  $BIN/mentat-bench run --data $M_DATA --mentatd $BIN/mentatd --server-data $OUT/m-run --out $O --scenarios ping,point_lookup,pull,ref_traversal,as_of,input_bindings --clients 1 --reps 1 --min-s 4 --warmup-s 5 > $O.log 2>&1
  echo "m  $r: $(tail -n +2 $O/timings.csv | awk -F, '{printf "%s %s; ", $1,$8}')"
done
