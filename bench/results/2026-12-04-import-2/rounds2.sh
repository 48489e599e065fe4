#!/bin/bash
# usage: rounds2.sh TAG:BINDIR ... -- load.sh per argument in turn (fresh
# store each), then threadcpu.py's lines into summary.txt; the store is
# deleted after.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
for tb in "$@"; do
  tag=${tb%%:*}; bin=${tb#*:}
  start=$(date -u +%H:%M:%S)
  bash "$HERE/load.sh" "$bin" "$tag" > "$tag.out" 2>&1
  { echo "== $start $tag ($bin), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 "$HERE/threadcpu.py" "$tag" "$WORK/db-$tag"
    grep -h "import: merged" "$WORK"/db-$tag/*/LOG | sed -E 's/.*\[([a-z_]+)\].* in ([0-9.]+) s.*/  merged \1 in \2 s/'
    grep "^loaded" "$tag.load.log"; } >> summary.txt 2>&1
  rm -rf "$WORK/db-$tag"
done
