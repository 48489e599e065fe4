#!/bin/bash
# q3 by scan at l: old (76a6a4f) and new (SkipPrefix) interleaved, with a 2 GiB column cache and with the default
for round in 1 2; do
  for cc in 2048 default; do
    for b in old new; do
      args="--scale l --dir ${STORE:?} --only q3,q3_scan --seconds 5"
      [ $cc != default ] && args="$args --column-cache-mb $cc"
      echo "== round $round cache $cc build $b $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
      nice -n 5 ./qb-$b $args 2>&1 | grep -E '^q3|column cache|checks'
    done
  done
done
