#!/usr/bin/env bash
# Prints, one per line, the Debian packages that hold the shared libraries
# the given binaries load (ldd, then dpkg -S), so the runtime image installs
# exactly those. Used by the Dockerfile's build stage. (mentatd's fulltext
# search loads libicu72 and libstemmer0d; ldd finds both, so they need no
# line here.)
set -euo pipefail

libs=$(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
for lib in $libs; do
  real=$(readlink -f "$lib")
  # Debian 12 merges /lib into /usr/lib; dpkg knows each file under one of
  # the two names.
  for candidate in "$lib" "$real" "${lib#/usr}" "${real#/usr}" \
                   "/usr$lib" "/usr$real"; do
    if pkg=$(dpkg -S "$candidate" 2>/dev/null | head -n 1) && [ -n "$pkg" ]; then
      echo "${pkg%%:*}"
      continue 2
    fi
  done
  echo "runtime-packages.sh: no package holds $lib" >&2
  exit 1
done | sort -u
