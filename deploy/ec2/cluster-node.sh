#!/usr/bin/env bash
# Makes this instance one node of a three-node (or larger) mentatd cluster:
# an etcd member and a mentatd that campaigns for the leader key
# (docs/deploy.md, section 10; docs/replication.md says what it
# guarantees). Run it on each node after user-data.yaml has prepared the
# instance, with the same --peers everywhere and the node's own --node-id:
#
#   deploy/ec2/cluster-node.sh --node-id a \
#       --peers a=10.0.1.10,b=10.0.2.10,c=10.0.3.10 [--cluster prod] \
#       [--durability semi-sync|async] [--lease-ttl 3] [--tls]
#
# It writes /etc/default/etcd (Debian's etcd-server reads it), adds the
# cluster's settings to /etc/mentatd/mentatd.env (replacing earlier ones,
# so it can be run again), installs etcd-server if it is missing, restarts
# etcd, waits until the etcd cluster is healthy (the other members may
# start later: it waits up to --wait seconds) and restarts mentatd.
#
# --root DIR writes every file under DIR instead, with the paths inside
# them under DIR too, and starts nothing: to look at what it would write,
# or for deploy/ec2/cluster_node_test.sh, which starts the result on
# loopback addresses. --ports ETCD_CLIENT,ETCD_PEER,GRPC,HTTP moves the
# ports from 2379,2380,7878,7879. mentatd and etcd listen on every address
# (the container's health check asks localhost); --listen-self binds them
# to this node's address only (several nodes on one machine's loopback).
set -euo pipefail

usage() {
  sed -n '9,11p' "$0" >&2
  echo "  (--root DIR, --ports C,P,G,H, --listen-self, --wait SECONDS: see the header)" >&2
  exit 2
}

node_id=""
peers=""
cluster="prod"
durability="semi-sync"
lease_ttl=3
semi_sync_timeout_ms=5000
tls=0
listen_self=0
root=""
ports="2379,2380,7878,7879"
wait_s=300
while [ $# -gt 0 ]; do
  case "$1" in
    --node-id) node_id=${2:?}; shift 2 ;;
    --peers) peers=${2:?}; shift 2 ;;
    --cluster) cluster=${2:?}; shift 2 ;;
    --durability) durability=${2:?}; shift 2 ;;
    --lease-ttl) lease_ttl=${2:?}; shift 2 ;;
    --semi-sync-timeout-ms) semi_sync_timeout_ms=${2:?}; shift 2 ;;
    --tls) tls=1; shift ;;
    --listen-self) listen_self=1; shift ;;
    --root) root=${2:?}; shift 2 ;;
    --ports) ports=${2:?}; shift 2 ;;
    --wait) wait_s=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
if [ -z "$node_id" ] || [ -z "$peers" ]; then usage; fi

fail() {
  echo "cluster-node.sh: $*" >&2
  exit 2
}
name_ok() { [[ "$1" =~ ^[A-Za-z0-9._-]+$ ]]; }
name_ok "$node_id" || fail "--node-id '$node_id': letters, digits, '.', '_', '-' only"
name_ok "$cluster" || fail "--cluster '$cluster': letters, digits, '.', '_', '-' only"
case "$durability" in semi-sync|async) ;; *) fail "--durability takes semi-sync or async, not '$durability'" ;; esac
[[ "$lease_ttl" =~ ^[1-9][0-9]*$ ]] || fail "--lease-ttl '$lease_ttl' is not a positive number of seconds"
IFS=, read -r etcd_client_port etcd_peer_port grpc_port http_port <<<"$ports"
for p in "$etcd_client_port" "$etcd_peer_port" "$grpc_port" "$http_port"; do
  if ! [[ "$p" =~ ^[0-9]+$ ]] || [ "$p" -eq 0 ] || [ "$p" -ge 65536 ]; then
    fail "--ports '$ports': four ports, comma-separated"
  fi
done

# --peers: name=address, comma-separated; names unique, this node among them.
declare -A address_of
initial_cluster=""
etcd_endpoints=""
for peer in ${peers//,/ }; do
  name=${peer%%=*}
  addr=${peer#*=}
  if [ "$name" = "$peer" ] || [ -z "$addr" ]; then
    fail "--peers: '$peer' is not name=address"
  fi
  name_ok "$name" || fail "--peers: node name '$name': letters, digits, '.', '_', '-' only"
  [[ "$addr" =~ ^[A-Za-z0-9.-]+$ ]] || fail "--peers: '$addr' is not a host name or IPv4 address"
  [ -z "${address_of[$name]:-}" ] || fail "--peers: node '$name' is named twice"
  address_of[$name]=$addr
  initial_cluster+="${initial_cluster:+,}$name=http://$addr:$etcd_peer_port"
  etcd_endpoints+="${etcd_endpoints:+,}$addr:$etcd_client_port"
done
[ "${#address_of[@]}" -ge 3 ] ||
  fail "--peers names ${#address_of[@]} node(s): a cluster needs three or more (etcd keeps a majority)"
self=${address_of[$node_id]:-}
[ -n "$self" ] || fail "--node-id '$node_id' is not one of --peers ($peers)"

etc_default="$root/etc/default"
etc_mentatd="$root/etc/mentatd"
mkdir -p "$etc_default" "$etc_mentatd"
if [ "$listen_self" = 1 ]; then
  listen_host=$self
  etcd_listen_clients=http://$self:$etcd_client_port
else
  listen_host=0.0.0.0
  etcd_listen_clients=http://$self:$etcd_client_port,http://127.0.0.1:$etcd_client_port
fi

# etcd: one member per node; clients (mentatd) on this node's address and
# on loopback.
cat >"$etc_default/etcd" <<EOF
# Written by deploy/ec2/cluster-node.sh for node $node_id of cluster $cluster.
ETCD_NAME=$node_id
ETCD_DATA_DIR=$root/var/lib/etcd/mentat-$cluster
ETCD_LISTEN_PEER_URLS=http://$self:$etcd_peer_port
ETCD_INITIAL_ADVERTISE_PEER_URLS=http://$self:$etcd_peer_port
ETCD_LISTEN_CLIENT_URLS=$etcd_listen_clients
ETCD_ADVERTISE_CLIENT_URLS=http://$self:$etcd_client_port
ETCD_INITIAL_CLUSTER=$initial_cluster
ETCD_INITIAL_CLUSTER_STATE=new
ETCD_INITIAL_CLUSTER_TOKEN=mentat-$cluster
EOF

# mentatd: the single-node settings user-data.yaml wrote stay; the
# cluster's lines are replaced.
env_file="$etc_mentatd/mentatd.env"
touch "$env_file"
cluster_keys="CLUSTER|ETCD|NODE_ID|ADVERTISE|LEASE_TTL|DURABILITY|SEMI_SYNC_TIMEOUT_MS|PRIMARY_TOKEN_FILE|PRIMARY_TLS_CA|LISTEN|HTTP"
grep -Ev "^MENTATD_($cluster_keys)=|^# cluster:" "$env_file" >"$env_file.new" || true
{
  echo "# cluster: written by deploy/ec2/cluster-node.sh (node $node_id)"
  echo "MENTATD_LISTEN=$listen_host:$grpc_port"
  echo "MENTATD_HTTP=$listen_host:$http_port"
  echo "MENTATD_CLUSTER=$cluster"
  echo "MENTATD_ETCD=$etcd_endpoints"
  echo "MENTATD_NODE_ID=$node_id"
  echo "MENTATD_ADVERTISE=$self:$grpc_port"
  echo "MENTATD_LEASE_TTL=$lease_ttl"
  echo "MENTATD_DURABILITY=$durability"
  echo "MENTATD_SEMI_SYNC_TIMEOUT_MS=$semi_sync_timeout_ms"
  # Replicas reach the primary with the token and TLS clients use.
  echo "MENTATD_PRIMARY_TOKEN_FILE=$etc_mentatd/token"
  if [ "$tls" = 1 ]; then echo "MENTATD_PRIMARY_TLS_CA=$etc_mentatd/tls/ca.crt"; fi
} >>"$env_file.new"
mv "$env_file.new" "$env_file"

if [ -n "$root" ]; then
  echo "cluster-node.sh: wrote $etc_default/etcd and $env_file (nothing started)"
  exit 0
fi

[ "$(id -u)" = 0 ] || fail "run as root (or with --root DIR)"
if ! command -v etcd >/dev/null; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server etcd-client
fi
systemctl enable etcd
systemctl restart etcd
echo "cluster-node.sh: waiting for etcd's members ($etcd_endpoints)"
deadline=$((SECONDS + wait_s))
until ETCDCTL_API=3 etcdctl --endpoints="$etcd_endpoints" endpoint health >/dev/null 2>&1; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "etcd is not healthy after ${wait_s} s: run this script on the other nodes, and check the security group opens $etcd_client_port-$etcd_peer_port between them"
  sleep 2
done
systemctl restart mentatd
echo "cluster-node.sh: node $node_id of cluster $cluster is up; mentat-cli --addr ${etcd_endpoints//:$etcd_client_port/:$grpc_port} -c .cluster"
