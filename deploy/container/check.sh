#!/usr/bin/env bash
# Builds the mentatd image without a Docker engine and checks that what is
# inside runs:
#
#   1. debootstrap a Debian 12 (bookworm) root from the mirror apt already
#      uses, and `podman import` it as localhost/debian-base:12 (once;
#      reused afterwards, --rebase makes it again);
#   2. `podman build --isolation chroot` the top-level Dockerfile from the
#      committed tree (git archive HEAD; --worktree takes the working tree
#      instead), with that base for both stages;
#   3. export the image's root file system and, inside it with chroot:
#      `mentatd --version`, mentatd as the image's non-root user started
#      through tini as PID 1 of a new PID namespace, `mentat-cli health`,
#      a transaction and a query, SIGTERM, exit status 0.
#
# `podman run` needs cgroups, which some build machines (ours) do not give;
# the chroot checks stand in for it. Run as root. Takes a while: the build
# stage installs the build dependencies and compiles the project.
#
#   deploy/container/check.sh [--worktree] [--rebase] [--base-only] [--jobs N]
#
# Environment: WORK (scratch directory, default /var/tmp/mentatd-image),
# MIRROR (Debian mirror; default: the one in apt's sources).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${WORK:-/var/tmp/mentatd-image}
jobs=2
use_worktree=0
rebase=0
base_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --worktree) use_worktree=1 ;;
    --rebase) rebase=1 ;;
    --jobs) jobs=$2; shift ;;
    --base-only) base_only=1 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "== $(date -u +%H:%M:%S) $*"; }
fail() { echo "check.sh: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap, chroot, podman)"
for tool in debootstrap podman chroot unshare git; do
  command -v "$tool" >/dev/null ||
    fail "$tool is missing (apt-get install debootstrap podman)"
done

base_image=localhost/debian-base:12
version=$(sed -n 's/^project(mentatd VERSION \([0-9.]*\).*/\1/p' \
  "$repo/CMakeLists.txt")
revision=$(git -C "$repo" rev-parse --short HEAD)
image=localhost/mentatd:$version
mkdir -p "$work"

# --- 1. the base image ------------------------------------------------------
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  if [ -z "$MIRROR" ]; then
    MIRROR=$(sed -n 's/^deb \(\[[^]]*\] \)*\(http[^ ]*\/debian\)\/* bookworm .*/\2/p' \
      /etc/apt/sources.list 2>/dev/null | head -n 1)
  fi
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
if [ "$rebase" -eq 1 ] || ! podman image exists "$base_image"; then
  say "debootstrap bookworm from $MIRROR"
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$MIRROR" \
    > "$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log"; fail "debootstrap"; }
  # As in Debian's official images: no recommends, no docs, no caches.
  cat > "$work/rootfs/etc/apt/apt.conf.d/90container" <<'APT'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT
  chroot "$work/rootfs" apt-get clean
  rm -rf "$work/rootfs/var/lib/apt/lists/"*
  say "podman import as $base_image"
  tar -C "$work/rootfs" -c . |
    podman import --change 'CMD ["/bin/bash"]' - "$base_image" >/dev/null
  rm -rf "$work/rootfs"
fi
podman image inspect --format '{{.Size}}' "$base_image" |
  awk '{printf "base image: %.0f MB\n", $1 / 1e6}'
[ "$base_only" -eq 1 ] && exit 0

# --- 2. the image -------------------------------------------------------------
context="$work/context"
rm -rf "$context"
mkdir -p "$context"
if [ "$use_worktree" -eq 1 ]; then
  say "context: the working tree of $repo"
  tar -C "$repo" --exclude-vcs --exclude='./build*' --exclude='./data' -c . |
    tar -C "$context" -x
else
  say "context: git archive HEAD ($revision)"
  git -C "$repo" archive --format=tar HEAD | tar -C "$context" -x
fi
say "podman build $image (logs: $work/build.log)"
start=$(date +%s)
if ! podman build --isolation chroot --format docker \
    --build-arg BASE_IMAGE="$base_image" \
    --build-arg RUNTIME_IMAGE="$base_image" \
    --build-arg VERSION="$version" --build-arg REVISION="$revision" \
    --build-arg JOBS="$jobs" \
    -t "$image" "$context" > "$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  fail "podman build"
fi
say "built in $(( $(date +%s) - start )) s"
podman image inspect --format \
  'size {{.Size}} bytes; user {{.Config.User}}; entrypoint {{.Config.Entrypoint}}; ports {{.Config.ExposedPorts}}; volumes {{.Config.Volumes}}' \
  "$image"
podman image inspect --format '{{json .Config.Labels}}' "$image"
podman image inspect --format '{{json .Config.Healthcheck}}' "$image"
podman image inspect --format '{{.Config.Labels}}' "$image" |
  grep -q "org.opencontainers.image.version:$version" ||
  fail "the image has no version label $version"

# --- 3. run what is inside ----------------------------------------------------
root="$work/image-root"
cleanup() {
  set +e
  [ -n "${server_pid:-}" ] && kill -KILL "$server_pid" 2>/dev/null
  for m in dev/pts dev proc sys; do
    mountpoint -q "$root/$m" && umount -l "$root/$m"
  done
  [ -n "${container:-}" ] && podman rm -f "$container" >/dev/null 2>&1
}
trap cleanup EXIT
rm -rf "$root"
mkdir -p "$root"
container=$(podman create "$image")
podman export "$container" | tar -C "$root" -x
podman rm "$container" >/dev/null
container=

mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

say "mentatd --version"
chroot "$root" /usr/local/bin/mentatd --version
chroot "$root" /usr/local/bin/mentat-cli --help | head -n 1
ls -l "$root/usr/local/bin"
if chroot "$root" ldd /usr/local/bin/mentatd /usr/local/bin/mentat-cli |
    grep 'not found'; then
  fail "a shared library is missing from the image"
fi

# The image's own environment and user, its entrypoint as PID 1.
port=$(( 20000 + RANDOM % 20000 ))
http=$(( port + 1 ))
# The image listens on all interfaces, where mentatd requires a token.
token="check-$RANDOM$RANDOM"
in_image() {
  chroot --userspec=mentatd:mentatd "$root" env -i PATH=/usr/local/bin:/usr/bin:/bin \
    HOME=/var/lib/mentatd MENTATD_DATA_DIR=/var/lib/mentatd \
    MENTATD_LISTEN="0.0.0.0:$port" MENTATD_HTTP="127.0.0.1:$http" \
    MENTAT_ADDR="127.0.0.1:$port" MENTAT_TOKEN="$token" "$@"
}
say "mentatd as PID 1 (tini) of a new PID namespace, user mentatd, port $port"
unshare --pid --fork --mount-proc="$root/proc" \
  chroot --userspec=mentatd:mentatd "$root" env -i \
    PATH=/usr/local/bin:/usr/bin:/bin HOME=/var/lib/mentatd \
    MENTATD_DATA_DIR=/var/lib/mentatd MENTATD_LISTEN="0.0.0.0:$port" \
    MENTATD_HTTP="127.0.0.1:$http" MENTATD_AUTH_TOKEN="$token" \
    /usr/bin/tini -- /usr/local/bin/mentatd > "$work/mentatd.log" 2>&1 &
server_pid=$!
healthy=0
for _ in $(seq 1 100); do
  if in_image mentat-cli health > /dev/null 2>&1; then healthy=1; break; fi
  sleep 0.1
done
[ "$healthy" -eq 1 ] || { cat "$work/mentatd.log"; fail "mentat-cli health"; }
in_image mentat-cli health
in_image mentat-cli \
  -c '.t [{:db/ident :check/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]' \
  -c '.t [{:check/name "inside the image"}]' \
  -c '[:find ?n :where [_ :check/name ?n]]' | tee "$work/query.out"
grep -q "inside the image" "$work/query.out" || fail "query"
if command -v curl >/dev/null; then
  curl -fsS "http://127.0.0.1:$http/healthz" && echo
  curl -fsS "http://127.0.0.1:$http/metrics" | grep -c '^mentat_' |
    sed 's/^/metric samples: /'
fi
pid1=$(pgrep -P "$server_pid" | head -n 1)
[ -n "$pid1" ] || fail "no PID 1 in the namespace"
say "SIGTERM to PID 1 (host pid $pid1: $(cat /proc/$pid1/comm))"
kill -TERM "$pid1"
status=0
wait "$server_pid" || status=$?
server_pid=
tail -n 3 "$work/mentatd.log"
[ "$status" -eq 0 ] || fail "mentatd exited $status after SIGTERM"
[ -z "$(ls -A "$root/var/lib/mentatd/default" 2>/dev/null)" ] &&
  fail "no database files in the volume"
[ "$(stat -c %u "$root/var/lib/mentatd/default")" = \
  "$(chroot "$root" id -u mentatd)" ] ||
  fail "the database files do not belong to mentatd"
say "OK: $image ($revision) builds, and its binaries run"
