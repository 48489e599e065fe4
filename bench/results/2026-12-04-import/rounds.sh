#!/bin/bash
# usage: rounds.sh TAG:BINDIR ...  -- one load.sh run per argument, in order,
# each on a fresh store; appends one line per run to summary.txt: server CPU
# (user+sys), peak RSS, both for the whole run and up to the import's end
# (importcpu.py), the merge lines of the store's LOG, the load's line.
# Run it in the directory that holds the BINDIRs; DATA as for load.sh,
# WORK (where stores go) defaults to the current directory.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export WORK=${WORK:-.}
for tb in "$@"; do
  tag=${tb%%:*}; bin=${tb#*:}
  start=$(date -u +%H:%M:%S)
  bash "$HERE/load.sh" "$bin" "$tag" > "$tag.out" 2>&1
  cpu=$(awk -F': ' '/User time/{u=$2}/System time/{s=$2}END{print u+s}' "$tag.server-time")
  rss=$(awk -F': ' '/Maximum resident/{print int($2/1024)}' "$tag.server-time")
  imp=$(python3 "$HERE/importcpu.py" "$tag" 2>&1)
  merge=$(grep -rh "import: merged" "$WORK/db-$tag/" | sed -E 's/.*\[([a-z]+)\].* in ([0-9.]+) s.*/\1 \2/' | tr '\n' ' ')
  line=$(grep "^loaded" "$tag.load.log" | head -1)
  echo "$start $tag cpu=${cpu}s rss=${rss}MB $imp merge: $merge | $line" >> summary.txt
  rm -rf "$WORK/db-$tag"
done
