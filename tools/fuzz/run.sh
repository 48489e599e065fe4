#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz, clang-14, MENTAT_FUZZ=ON) and
# fuzzes every target for SECONDS each, one after the other:
#
#   tools/fuzz/run.sh [SECONDS] [TARGET...]      (default: 60, all)
#
# Environment: BUILD_DIR (build-fuzz), JOBS (2), FORK (libFuzzer -fork=N
# workers per target; default 1, i.e. no fork), LOG_DIR (BUILD_DIR/fuzz-logs;
# give a second run.sh on the same BUILD_DIR its own). Each target's corpus grows
# in BUILD_DIR/fuzz-corpus/<target>; crashing inputs land in
# BUILD_DIR/fuzz-artifacts/<target>/ (copy them into
# <module>/fuzz/regressions/<target>/ once fixed). Logs: BUILD_DIR/fuzz-logs.
# Exits non-zero if any target found something.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
build=${BUILD_DIR:-build-fuzz}
jobs=${JOBS:-2}
all=(edn_reader_fuzz tx_data_fuzz query_parser_fuzz pull_pattern_fuzz
     transact_query_fuzz json_edn_fuzz)
targets=("${all[@]}")
if [ $# -gt 0 ]; then targets=("$@"); fi

CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 \
  -DMENTAT_WERROR=OFF -DMENTAT_FUZZ=ON >/dev/null
cmake --build "$build" -j "$jobs" --target fuzz_corpus "${targets[@]}"

logs=${LOG_DIR:-$build/fuzz-logs}
mkdir -p "$logs"
failed=0
for t in "${targets[@]}"; do
  module=query
  case "$t" in edn_reader_fuzz | json_edn_fuzz) module=edn ;; esac
  dict=tools/fuzz/edn.dict
  [ "$t" = json_edn_fuzz ] && dict=tools/fuzz/json.dict
  inputs=()
  for d in "$module/fuzz/regressions/$t" "$module/fuzz/seeds/$t"; do
    [ -d "$d" ] && inputs+=("$d")
  done
  mkdir -p "$build/fuzz-corpus/$t" "$build/fuzz-artifacts/$t"
  fork=()
  [ "${FORK:-1}" -gt 1 ] && fork=(-fork="$FORK" -ignore_crashes=1)
  echo "== $t: ${seconds}s"
  # The CPU the target got (max_total_time is wall time; on a shared
  # machine, or under nice, it gets less).
  TIMEFORMAT="   cpu: %0U s user + %0S s sys in %0R s wall"
  rc=0
  time "$build/$module/fuzz/$t" -max_total_time="$seconds" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "${fork[@]}" \
      -dict="$dict" -artifact_prefix="$build/fuzz-artifacts/$t/" \
      "$build/fuzz-corpus/$t" "${inputs[@]}" >"$logs/$t.log" 2>&1 \
    || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "   FOUND SOMETHING: see $logs/$t.log and $build/fuzz-artifacts/$t/"
    failed=1
  fi
  grep -E '^(#[0-9]+\s+(DONE|INITED)|stat::number_of_executed_units)' \
    "$logs/$t.log" | tail -3 | sed 's/^/   /'
done
exit $failed
