#!/usr/bin/env bash
# Checks the thread-safety annotations (ABSL_GUARDED_BY,
# ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...) with clang's -Wthread-safety: every
# .cc of the repository in BUILD_DIR/compile_commands.json that uses a
# mutex or an annotation, or includes a repository header that does, is
# parsed by clang (-fsyntax-only, nothing is built) with thread-safety
# warnings as errors. GCC, which builds mentatd, ignores the annotations; this is what
# makes them rules the compiler checks. Needs clang-14 (Debian's clang-14,
# deploy/install-deps.sh) and a configured build directory (any build
# type; only its compile commands are read).
#
#   tools/thread_safety_check.sh [BUILD_DIR]   (default: build)
#   JOBS=N  parallel clang processes (default 2)
#   ALL=1   every .cc, whether or not it touches a lock
#   ONLY=RE only the files whose path matches the regular expression RE
#   COMPILE_COMMANDS=FILE  read the compile commands from FILE instead of
#           BUILD_DIR's (a copy, while a configure may rewrite the original)
#
# Exit status 0 when every file passes; else the files that failed and
# their diagnostics. Prints the wall time it took.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
clang="${CLANG:-clang++-14}"
if [ ! -f "$build_dir/compile_commands.json" ]; then
  echo "thread_safety_check: no $build_dir/compile_commands.json;" \
       "configure first (cmake -S . -B $build_dir)" >&2
  exit 2
fi
if ! command -v "$clang" >/dev/null; then
  echo "thread_safety_check: $clang not found (bash deploy/install-deps.sh)" >&2
  exit 2
fi
start=$SECONDS
status=0
python3 - "$build_dir" "$clang" "${JOBS:-2}" <<'PY' || status=$?
import concurrent.futures, json, os, re, shlex, subprocess, sys

build_dir, clang, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
source_dir = os.getcwd()
build_abs = os.path.realpath(build_dir)
entries = json.load(open(os.environ.get("COMPILE_COMMANDS") or
                         os.path.join(build_dir, "compile_commands.json")))


def pch_headers(hxx):
    flags = []
    for line in open(hxx):
        line = line.strip()
        if line.startswith("#include"):
            flags += ["-include", line[len("#include"):].strip()[1:-1]]
    return flags


def clang_command(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out = [clang]
    i = 1
    while i < len(args):
        a = args[i]
        # CMake's precompiled headers are GCC's (cmake_pch.hxx.gch beside
        # the header): clang cannot read them. The headers they stand for
        # are included one by one instead.
        if a == "-include" and args[i + 1].endswith("cmake_pch.hxx"):
            out += pch_headers(os.path.join(entry.get("directory", "."),
                                            args[i + 1]))
            i += 2
            continue
        if a == "-Xclang" and i + 1 < len(args) and args[i + 1] in (
                "-include-pch", "-include"):
            i += 4  # -Xclang -include-pch -Xclang <file>
            continue
        if a.startswith("-fpch-") or a == "-Winvalid-pch":
            i += 1
            continue
        # The output and the build's own warnings: this run reports
        # thread safety only (GCC's flags are not all clang's).
        if a in ("-o", "-MF", "-MT", "-MQ"):
            i += 2
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-W") or a == "-w":
            i += 1
            continue
        out.append(a)
        i += 1
    out += ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety"]
    return out


# Only files where a lock rule can be broken: those that use a mutex or an
# annotation, or include (directly) a repository header that does (a
# class's guarded members are used by its own .cc, which includes its
# header). A full parse of every file, gRPC's headers and all, took over
# ten minutes on 2 cores; ALL=1 checks every file anyway.
MARKERS = ("absl/synchronization/mutex.h", "ABSL_GUARDED_BY",
           "ABSL_PT_GUARDED_BY", "ABSL_EXCLUSIVE_LOCKS_REQUIRED",
           "ABSL_SHARED_LOCKS_REQUIRED", "ABSL_LOCKS_EXCLUDED",
           "ABSL_ACQUIRED_BEFORE", "ABSL_ACQUIRED_AFTER")
check_all = os.environ.get("ALL") == "1"
only = os.environ.get("ONLY", "")
headers = {}
for root, dirs, names in os.walk(source_dir):
    dirs[:] = [d for d in dirs if not d.startswith(".") and
               os.path.realpath(os.path.join(root, d)) != build_abs and
               d not in ("node_modules", "build")]
    for n in names:
        if n.endswith(".h"):
            headers.setdefault(n, []).append(os.path.join(root, n))


def mentions_locks(path, seen=None):
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return False
    if any(m in text for m in MARKERS):
        return True
    if seen is not None:
        return False
    for inc in re.findall(r'^#include "([^"]+)"', text, re.M):
        for h in headers.get(os.path.basename(inc), []):
            if h.endswith(inc) and mentions_locks(h, seen=True):
                return True
    return False


files = {}
for e in entries:
    path = os.path.realpath(os.path.join(e.get("directory", "."), e["file"]))
    # The repository's sources only: not gRPC's generated code in the
    # build directory. A file built for several targets is checked once.
    if not path.startswith(source_dir + "/") or path.startswith(build_abs + "/"):
        continue
    if not path.endswith(".cc") or path in files:
        continue
    if only and not re.search(only, path):
        continue
    if not check_all and not mentions_locks(path):
        continue
    files[path] = (e.get("directory", "."), clang_command(e), e["file"])


# Most of each file's parse is the same third-party headers (gRPC,
# protobuf, RocksDB, abseil, Boost): parsed once per compile-flag set into
# a precompiled header, the check takes a third of the time. The header
# holds every <...> include reachable from the group's files through the
# repository's own headers; included first, a superset of what a file
# names is harmless (every header has include guards). A group whose
# precompiled header does not build, and any file that fails with one, is
# checked again without it, so the result never depends on this shortcut.
def outside_includes(path, seen):
    if path in seen:
        return []
    seen.add(path)
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return []
    found = []
    for kind, inc in re.findall(r'^#include ([<"])([^>"]+)[>"]', text, re.M):
        if kind == "<":
            found.append(f"<{inc}>")
            continue
        ours = [h for h in headers.get(os.path.basename(inc), [])
                if h.endswith(inc)]
        for h in ours:
            found += outside_includes(h, seen)
        if not ours:  # generated in the build directory: gRPC's stubs
            found.append(f'"{inc}"')
    return found


def without_source(cmd, source):
    return tuple(a for a in cmd if a != source)


pch_dir = os.path.join(build_abs, "thread_safety_pch")
os.makedirs(pch_dir, exist_ok=True)
groups = {}
for path, (directory, cmd, source) in files.items():
    groups.setdefault((directory, without_source(cmd, source)), []).append(path)
pch_jobs = []
for n, ((directory, base), paths) in enumerate(sorted(groups.items())):
    if len(paths) < 2 or os.environ.get("NO_PCH") == "1":
        continue
    includes = []
    for p in sorted(paths):
        for inc in outside_includes(p, set()):
            if inc not in includes:
                includes.append(inc)
    header = os.path.join(pch_dir, f"group{n}.h")
    with open(header, "w") as out:
        out.writelines(f"#include {inc}\n" for inc in includes)
    pch = header + ".pch"
    build = [a for a in base if a != "-fsyntax-only"]
    build += ["-x", "c++-header", header, "-o", pch]
    pch_jobs.append((directory, build, pch, paths))


def build_pch(job):
    directory, cmd, pch, paths = job
    r = subprocess.run(cmd, cwd=directory, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return pch if r.returncode == 0 else None, paths


pch_of = {}
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for pch, paths in pool.map(build_pch, pch_jobs):
        for p in paths:
            if pch:
                pch_of[p] = pch


def check(item):
    path, (directory, cmd, _) = item
    if path in pch_of:
        r = subprocess.run(cmd + ["-include-pch", pch_of[path]], cwd=directory,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if r.returncode == 0:
            return path, 0, ""
    r = subprocess.run(cmd, cwd=directory, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return path, r.returncode, r.stdout


failed = []
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for path, rc, output in pool.map(check, sorted(files.items())):
        if rc != 0:
            failed.append(os.path.relpath(path, source_dir))
            sys.stdout.write(output)
            sys.stdout.flush()
print(f"thread_safety_check: {len(files)} files ({len(pch_of)} with one of "
      f"{len(pch_jobs)} precompiled headers), {len(failed)} failed")
for f in failed:
    print(f"  {f}")
sys.exit(1 if failed else 0)
PY
echo "thread_safety_check: took $((SECONDS - start)) s"
exit "$status"
