#!/usr/bin/env bash
# Checks deploy/ec2/cluster-node.sh by starting what it writes: three
# nodes on loopback addresses 127.0.0.11-13 (--root, --listen-self), each
# an etcd member started from the /etc/default/etcd it wrote and a mentatd
# started from the mentatd.env it completed. The etcd members must form a
# cluster, the mentatds must elect one primary and two replicas, a write
# through the primary must be read on every node, and the shell's .cluster
# must show the three. Bad arguments must be refused without writing.
#
#   deploy/ec2/cluster_node_test.sh MENTATD MENTAT_CLI
#
# Exit 77 (ctest: skipped) when etcd is not installed.
set -euo pipefail

mentatd=${1:?usage: cluster_node_test.sh MENTATD MENTAT_CLI}
cli=${2:?usage: cluster_node_test.sh MENTATD MENTAT_CLI}
script="$(cd "$(dirname "$0")" && pwd)/cluster-node.sh"
etcd_bin=$(command -v etcd || true)
if [ -z "$etcd_bin" ] && [ -x /usr/bin/etcd ]; then etcd_bin=/usr/bin/etcd; fi
if [ -z "$etcd_bin" ]; then
  echo "etcd is not installed (deploy/install-deps.sh test installs etcd-server): skipped"
  exit 77
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${keep:-0}" = 1 ]; then
    echo "logs kept in $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
fail() {
  keep=1
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do
    echo "== $f" >&2
    tail -n 15 "$f" >&2
  done
  exit 1
}

# Bad arguments: refused with a reason, nothing written.
expect_refused() {
  local want=$1
  shift
  local out
  if out=$("$script" --root "$work/bad" "$@" 2>&1); then
    fail "cluster-node.sh $* succeeded"
  fi
  [[ "$out" == *"$want"* ]] || fail "cluster-node.sh $*: '$out' does not say '$want'"
  [ ! -e "$work/bad" ] || fail "cluster-node.sh $* wrote $work/bad"
}
expect_refused "not one of --peers" --node-id d --peers a=10.0.0.1,b=10.0.0.2,c=10.0.0.3
expect_refused "three or more" --node-id a --peers a=10.0.0.1,b=10.0.0.2
expect_refused "named twice" --node-id a --peers a=10.0.0.1,a=10.0.0.2,c=10.0.0.3
expect_refused "durability" --node-id a --peers a=10.0.0.1,b=10.0.0.2,c=10.0.0.3 --durability sometimes
expect_refused "four ports" --node-id a --peers a=10.0.0.1,b=10.0.0.2,c=10.0.0.3 --ports 1,2,3

# Ports: one random block per run (two runs on one machine rarely meet).
base=$((20000 + (RANDOM % 400) * 100))
ports="$base,$((base + 1)),$((base + 2)),$((base + 3))"
peers="a=127.0.0.11,b=127.0.0.12,c=127.0.0.13"
token=cluster-node-test-token
declare -A ip=([a]=127.0.0.11 [b]=127.0.0.12 [c]=127.0.0.13)
for n in a b c; do
  root="$work/$n"
  mkdir -p "$root/etc/mentatd" "$root/var/lib/mentatd"
  printf '%s\n' "$token" >"$root/etc/mentatd/token"
  # What user-data.yaml writes, scaled down for a test machine.
  cat >"$root/etc/mentatd/mentatd.env" <<EOF
MENTATD_DATA_DIR=$root/var/lib/mentatd
MENTATD_LISTEN=0.0.0.0:7878
MENTATD_AUTH_TOKEN_FILE=$root/etc/mentatd/token
MENTATD_BLOCK_CACHE=16M
MENTATD_READERS_PER_NODE=1
MENTATD_SYNC_COMMITS=false
EOF
  "$script" --root "$root" --node-id "$n" --peers "$peers" --ports "$ports" \
    --listen-self --lease-ttl 2 --cluster cntest >/dev/null
  grep -q "^MENTATD_DATA_DIR=$root/var/lib/mentatd$" "$root/etc/mentatd/mentatd.env" ||
    fail "the single-node settings were not kept"
  [ "$(grep -c '^MENTATD_LISTEN=' "$root/etc/mentatd/mentatd.env")" = 1 ] ||
    fail "MENTATD_LISTEN is not replaced"
done
# Run again: the cluster's lines are replaced, not added twice.
"$script" --root "$work/a" --node-id a --peers "$peers" --ports "$ports" \
  --listen-self --lease-ttl 2 --cluster cntest >/dev/null
[ "$(grep -c '^MENTATD_CLUSTER=' "$work/a/etc/mentatd/mentatd.env")" = 1 ] ||
  fail "a second run added the cluster's lines twice"

# Start each node from its files alone.
vars() { grep -v '^#' "$1"; }
for n in a b c; do
  # shellcheck disable=SC2046 # one NAME=value word per line
  env -i PATH="$PATH" $(vars "$work/$n/etc/default/etcd") "$etcd_bin" \
    >"$work/etcd-$n.log" 2>&1 &
  pids+=($!)
done
for n in a b c; do
  # shellcheck disable=SC2046
  env -i PATH="$PATH" $(vars "$work/$n/etc/mentatd/mentatd.env") "$mentatd" \
    >"$work/mentatd-$n.log" 2>&1 &
  pids+=($!)
done

addrs="127.0.0.11:$((base + 2)),127.0.0.12:$((base + 2)),127.0.0.13:$((base + 2))"
cli_at() { "$cli" --addr "$1" --token "$token" --no-pager "${@:2}"; }

# One primary and two replicas (polled: elections take about a lease).
deadline=$((SECONDS + 120))
until out=$(cli_at "$addrs" --format csv -c .cluster 2>&1) &&
  [ "$(grep -c '^[^,]*,primary,' <<<"$out")" = 1 ] &&
  [ "$(grep -c '^[^,]*,replica,' <<<"$out")" = 2 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "no primary and two replicas within 120 s; .cluster: $out"
  sleep 0.5
done
echo "$out"

# A write through the cluster's addresses is read on every node.
cli_at "$addrs" -c '[{:db/ident :deploy/check :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]' \
  -c '[{:deploy/check 42}]' >/dev/null || fail "the write was refused"
for n in a b c; do
  deadline=$((SECONDS + 60))
  until got=$(cli_at "${ip[$n]}:$((base + 2))" --format csv -t \
    -c '[:find ?v :where [_ :deploy/check ?v]]' 2>&1) && [ "$got" = 42 ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "node $n does not read the write: $got"
    sleep 0.2
  done
done
echo "cluster_node_test: three nodes from cluster-node.sh's files: one primary, two replicas, the write read on each"
