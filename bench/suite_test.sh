#!/usr/bin/env bash
# A short end-to-end run of mentat-bench (a few seconds): gen xs
# (deterministic whatever --jobs), start mentatd, load by import, run two
# scenarios for 1 s, report, compare a run with itself (exit 0) and with a
# doctored slower copy (exit 1).
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
"$mentatd" --data-dir="$tmp/db" --listen="unix:$sock" --http= \
  --create-default=true --sync-commits=false --log-level=warn &
server_pid=$!
for _ in $(seq 1 300); do
  [[ -S $sock ]] && break
  kill -0 "$server_pid" || { echo "mentatd did not start" >&2; exit 1; }
  sleep 0.1
done

"$bench" load --address "unix:$sock" --data "$tmp/data" --method import
"$bench" run --address "unix:$sock" --data "$tmp/data" \
  --scenarios bulk_load,point_lookup,pull --min-s 1 --reps 1 --out "$tmp/run"
grep -q "^PASS point_lookup" "$tmp/run/checks.txt"
if grep -q "^FAIL" "$tmp/run/checks.txt"; then exit 1; fi
head -1 "$tmp/run/timings.csv" | grep -q \
  '^scenario,system,scale,n_datoms,clients,op,count,p50_ms,p95_ms,p99_ms,max_ms,throughput_ops_s,errors,reps$'
"$bench" report "$tmp/run"
test -s "$tmp/run/summary.md"

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
echo "bench suite test passed"
