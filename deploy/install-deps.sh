#!/usr/bin/env bash
# Installs what building and testing mentatd needs on Debian 12, from
# Debian's own packages. Idempotent: it installs only what is missing, so
# `make run` and `make test` can call it every time at almost no cost.
#
#   install-deps.sh run    what building mentatd and mentat-cli needs
#   install-deps.sh test   that, and what the tests need (the default)
set -euo pipefail

what="${1:-test}"
case "$what" in
  run | test) ;;
  *)
    echo "usage: $0 [run|test]" >&2
    exit 2
    ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config git
  librocksdb-dev libzstd-dev liblz4-dev libsnappy-dev libbz2-dev zlib1g-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libabsl-dev libboost-dev libboost-system-dev libsimdjson-dev libspdlog-dev
  libfmt-dev libnuma-dev libreadline-dev libjemalloc-dev
  # Fulltext search: ICU's word breaking and case folding, Snowball's
  # English stemmer (storage/fulltext_tokens.cc).
  libicu-dev libstemmer-dev
  # :db.type/uri values are checked with uriparser's RFC 3986 parser.
  liburiparser-dev
  # The top-level CMakeLists.txt finds doctest (header-only, small) even
  # when only mentatd is built.
  doctest-dev
  # mentatd checks its TLS files with OpenSSL (gRPC links it too).
  libssl-dev
  python3
)

# Test-only packages: `make run` never waits for these.
test_packages=(
  # The Python client's tests (client/python; pip and setuptools install
  # it in a test, mypy checks its type hints) and the metrics scrape test.
  python3-grpcio python3-protobuf python3-pip python3-setuptools mypy
  prometheus
  # The cluster tests start a real etcd (issue 19's leader election;
  # server/testing/etcd_process.h); etcdctl is handy to look at its keys.
  etcd-server etcd-client
  # Fuzz targets (libFuzzer) are built with clang, and clang checks the
  # thread-safety annotations (tools/thread_safety_check.sh).
  clang-14 libclang-rt-14-dev
)
if [ "$what" = test ]; then packages+=("${test_packages[@]}"); fi

# The Node client's tests (client/node; its own dependencies come from the
# npm registry through `npm ci`): Debian's node and npm, unless a node is
# installed already (NodeSource's brings its own npm, which Debian's npm
# package would conflict with).
if [ "$what" = test ] && ! command -v node >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "deploy/install-deps.sh: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
