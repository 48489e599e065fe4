#!/usr/bin/env bash
# Builds ThreadSanitizer-instrumented copies of Debian's abseil shared
# libraries (the same source package, version and patches as the installed
# libabsl20220623) into OUT/lib, for TSan runs through LD_LIBRARY_PATH.
#
#   tools/sanitizers/absl-tsan.sh [OUT]     (default: build-tsan/absl-tsan)
#
# Why: absl::Mutex, absl::CondVar and absl::Notification synchronise with
# futexes inside libabsl_synchronization.so; Debian's build of it is not
# instrumented, so TSan sees none of the happens-before edges they create
# and reports every access they guard (in our code and in gRPC's) as a
# race. The same holds for absl::Status's reference count (its last Unref
# is out of line, in libabsl_status.so). Abseil annotates its primitives for TSan when built with
# -fsanitize=thread, so an instrumented build of the same version fixes
# that at run time without relinking anything.
#
# The source comes from Debian through apt-get with a private sources list
# (deb-src, nothing in /etc is changed); dpkg-source applies Debian's
# patches (sonames, options.h), so the libraries are ABI-identical.
set -euo pipefail
out=$(realpath -m "${1:-build-tsan/absl-tsan}")
jobs=${JOBS:-2}
if compgen -G "$out/lib/libabsl_status.so.*" >/dev/null; then
  echo "absl-tsan: $out/lib is already built"
  exit 0
fi
mkdir -p "$out/apt/lists/partial" "$out/src"
cat >"$out/apt/sources.list" <<LIST
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian-security bookworm-security main
LIST
apt_opts=(-o "Dir::Etc::SourceList=$out/apt/sources.list"
          -o "Dir::Etc::SourceParts=/nonexistent"
          -o "Dir::State::Lists=$out/apt/lists")
src=$(find "$out/src" -mindepth 1 -maxdepth 1 -type d -name 'abseil-*' | head -1)
if [ -z "$src" ]; then
  version=$(dpkg-query -W -f='${source:Version}' libabsl20220623)
  apt-get "${apt_opts[@]}" update >/dev/null
  (cd "$out/src" && apt-get "${apt_opts[@]}" source "abseil=$version")
  src=$(find "$out/src" -mindepth 1 -maxdepth 1 -type d -name 'abseil-*' | head -1)
fi
cmake -S "$src" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_STANDARD=17 \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DBUILD_SHARED_LIBS=ON \
  -DABSL_ENABLE_INSTALL=ON -DBUILD_TESTING=OFF
# The synchronisation primitives and what they depend on (base,
# spinlock_wait, time, stacktrace, symbolize, ...), and absl::Status, whose
# out-of-line Unref is an atomic TSan must see (it is shared across threads
# by every future that carries a Status).
cmake --build "$out/build" -j "$jobs" --target synchronization status statusor
mkdir -p "$out/lib"
find "$out/build" -name 'libabsl_*.so.*' -exec cp -a {} "$out/lib/" \;
echo "absl-tsan: $(ls "$out/lib" | wc -l) files in $out/lib"
