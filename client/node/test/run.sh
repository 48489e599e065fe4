#!/usr/bin/env bash
# CTest's entry for the Node client's tests: node's built-in runner over
# test/*.test.js against a live mentatd ($1). Exits 77 (skipped) when node
# is not installed; installs the pinned dependencies (npm ci, from
# package-lock.json) when node_modules is missing or older than the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
node=$(command -v node || command -v nodejs || true)
if [ -z "$node" ]; then
  echo "client/node: node is not installed (apt-get install nodejs npm): skipped"
  exit 77
fi
if [ ! -d node_modules/@grpc/grpc-js ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    echo "client/node: npm is not installed and node_modules is missing: skipped"
    exit 77
  fi
  npm ci --no-audit --no-fund --loglevel=error
fi
export MENTATD="$1"
exec "$node" --test test/values.test.js test/client.test.js test/types.test.js
