#!/usr/bin/env bash
# A short end-to-end run of mentat-bench (about 20 s): gen xs
# (deterministic whatever --jobs), start mentatd, load by import, run ping,
# two read scenarios and a short mixed run for 1 s each, the read mix at 4
# clients, paired with the engine beside it, report, compare a
# run with itself (exit 0) and with a doctored slower copy (exit 1); a
# dataset of the older format is refused.
#   suite_test.sh MENTAT_BENCH MENTATD
set -euo pipefail
bench=$1
mentatd=$2
tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$bench" gen --scale xs --out "$tmp/data" --jobs 1
"$bench" gen --scale xs --out "$tmp/data3" --jobs 3
diff -r "$tmp/data" "$tmp/data3"

sock="$tmp/mentatd.sock"
start_server() {
  rm -f "$sock"
  "$mentatd" --data-dir="$tmp/db" --listen="unix:$sock" --http= \
    --create-default=true --sync-commits=false --log-level=warn &
  server_pid=$!
  for _ in $(seq 1 300); do
    [[ -S $sock ]] && return
    kill -0 "$server_pid" || { echo "mentatd did not start" >&2; exit 1; }
    sleep 0.1
  done
  echo "mentatd did not listen" >&2
  exit 1
}
start_server

"$bench" load --address "unix:$sock" --data "$tmp/data" --method import
"$bench" run --address "unix:$sock" --data "$tmp/data" \
  --scenarios bulk_load,ping,point_lookup,pull,paired,mixed --min-s 1 --reps 1 \
  --mixed-rates 300 --mixed-queries pull,since,q3 --out "$tmp/run"
grep -q "^PASS point_lookup" "$tmp/run/checks.txt"
grep -q "^PASS ping" "$tmp/run/checks.txt"
grep -q "^PASS paired" "$tmp/run/checks.txt"
grep -q '^paired,mentatd,xs,[0-9]*,1,ping@q1,' "$tmp/run/timings.csv"
grep -q "^PASS mixed since@300" "$tmp/run/checks.txt"
grep -q "^PASS mixed: pool members as recorded, after" "$tmp/run/checks.txt"
if grep -q "^FAIL" "$tmp/run/checks.txt"; then exit 1; fi
grep -q '^mixed,mentatd,xs,[0-9]*,1,q3@300,' "$tmp/run/timings.csv"
grep -q '^mixed,mentatd,xs,[0-9]*,[0-9]*,write@300,' "$tmp/run/timings.csv"
test "$(wc -l < "$tmp/run/mixed.csv")" -eq 4
# A second run on the same database knows what the first one's writer
# changed (since counts it).
"$bench" run --address "unix:$sock" --data "$tmp/data" --scenarios since \
  --min-s 0.2 --reps 1 --out "$tmp/run2"
grep -q "^PASS since" "$tmp/run2/checks.txt"
# The read mix above one client keeps its calls in flight (--read-drive
# calls: QueryFirstAsync), every answer checked as the waiting calls' are.
"$bench" run --address "unix:$sock" --data "$tmp/data" \
  --scenarios concurrency_sweep --clients 4 --min-s 0.5 --reps 1 \
  --out "$tmp/run3"
grep -q "^PASS concurrency_sweep" "$tmp/run3/checks.txt"
if grep -q "^FAIL" "$tmp/run3/checks.txt"; then exit 1; fi
grep -q '^concurrency_sweep,mentatd,xs,[0-9]*,4,read_mix,' "$tmp/run3/timings.csv"
head -1 "$tmp/run/timings.csv" | grep -q \
  '^scenario,system,scale,n_datoms,clients,op,count,p50_ms,p95_ms,p99_ms,max_ms,throughput_ops_s,errors,reps$'
"$bench" report "$tmp/run"
test -s "$tmp/run/summary.md"
grep -q '^\*\*Floor:\*\* `ping`' "$tmp/run/summary.md"
grep -q '^## Reads under a writer (mixed)' "$tmp/run/summary.md"

# A dataset of the older format (t_since before the last history batch).
cp -r "$tmp/data" "$tmp/old"
sed -i '/"format"/d' "$tmp/old/meta.json"
if "$bench" run --address "unix:$sock" --data "$tmp/old" --scenarios since \
  --min-s 0.2 --reps 1 --out "$tmp/oldrun" 2> "$tmp/old.err"; then
  echo "an old dataset was not refused" >&2
  exit 1
fi
grep -q "regenerate it with mentat-bench gen" "$tmp/old.err"

"$bench" compare "$tmp/run" "$tmp/run" --threshold 10
cp -r "$tmp/run" "$tmp/slow"
# Twice the latency, half the throughput.
awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next }
  { $8 *= 2; $9 *= 2; $10 *= 2; $12 /= 2; print }' "$tmp/run/timings.csv" \
  > "$tmp/slow/timings.csv"
if "$bench" compare "$tmp/run" "$tmp/slow" --threshold 10; then
  echo "compare missed a regression" >&2
  exit 1
fi
# paired with the engine beside it: the reads run in this process too, on
# a copy of the database taken while the server is stopped (its lock keeps
# the store from being opened twice), and their rows match the served ones.
kill "$server_pid"
wait "$server_pid" || true
server_pid=
cp -a "$tmp/db/default" "$tmp/engine"
start_server
"$bench" run --address "unix:$sock" --data "$tmp/data" --scenarios paired \
  --min-s 0.3 --reps 1 --engine-data "$tmp/engine" --out "$tmp/run4"
grep -q "^PASS paired" "$tmp/run4/checks.txt"
if grep -q "^FAIL" "$tmp/run4/checks.txt"; then exit 1; fi
grep -q '^paired,mentatd,xs,[0-9]*,1,engine@q2,' "$tmp/run4/timings.csv"
if "$bench" run --address "unix:$sock" --data "$tmp/data" --scenarios paired \
  --min-s 0.3 --reps 1 --engine-data "$tmp/db/default" --out "$tmp/run5" \
  2> "$tmp/locked.err"; then
  echo "paired ran its engine on the server's own store" >&2
  exit 1
fi
grep -q -- "--engine-data $tmp/db/default: opening the store" "$tmp/locked.err"
echo "bench suite test passed"
