#!/bin/bash
# quiet.sh: issue 18's served figures, old and new builds interleaved, quiet machine.
# OLD, NEW: folders holding mentatd, mentat-bench, query-bench. OUT: output folder.
set -u
S_DATA=${S_DATA:?}; S_DB=${S_DB:?}; M_DATA=${M_DATA:?}; M_DB=${M_DB:?}
reads() {  # build scale round
  local B=$1 sc=$2 r=$3 data db
  if [ $sc = s ]; then data=$S_DATA; db=$S_DB; else data=$M_DATA; db=$M_DB; fi
  rm -rf $OUT/run-db; cp -r $db $OUT/run-db
  local O=$OUT/reads-$sc-$(basename $B)-$r
  $B/mentat-bench run --data $data --mentatd $B/mentatd --server-data $OUT/run-db --out $O --scenarios ping,point_lookup,pull,ref_traversal,as_of,input_bindings --clients 1 --reps 1 --min-s 4 --warmup-s 5 > $O.log 2>&1
  echo "$sc $(basename $B) $r: $(tail -n +2 $O/timings.csv | awk -F, '{printf "%s %s; ", $1,$8}')"
}
writes() {  # build round
  local B=$1 r=$2
  rm -rf $OUT/run-db; cp -r $S_DB $OUT/run-db
  local O=$OUT/writes-$(basename $B)-$r
  $B/mentat-bench run --data $S_DATA --mentatd $B/mentatd --server-data $OUT/run-db --out $O --scenarios write --write-clients 1,64 --min-s 5 > $O.log 2>&1
  echo "writes $(basename $B) $r: $(grep -E '^write' $O.log | tr -s ' ' | cut -c1-150 | tr '\n' '|')"
}
mixed() {  # build round
  local B=$1 r=$2
  rm -rf $OUT/run-db $OUT/mix-data; cp -r $S_DB $OUT/run-db; cp -r $S_DATA $OUT/mix-data; rm -f $OUT/mix-data/mixed-*.state
  local O=$OUT/mixed-$(basename $B)-$r
  $B/mentat-bench run --data $OUT/mix-data --mentatd $B/mentatd --server-data $OUT/run-db --out $O --scenarios mixed --mixed-rates 1000 --mixed-queries q3,q4,since --min-s 6 > $O.log 2>&1
  echo "mixed $(basename $B) $r:"; grep '^mixed q' $O.log
}
firstq4() {  # build round
  local B=$1 r=$2
  echo "firstq4 $(basename $B) $r: $($B/query-bench --scale s --dir ${QB_DIR:?} --only q4 --first-q4 1 --seconds 2 2>&1 | grep -E '^q4' | tr -s ' ' | tr '\n' '|')"
}
reads $NEW s 1; reads $NEW m 1; reads $NEW m 2
for r in 1 2; do for B in $OLD $NEW; do writes $B $r; done; done
for r in 1 2; do mixed $NEW $r; done
for r in 1 2 3; do firstq4 $NEW $r; done
