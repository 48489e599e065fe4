#!/usr/bin/env bash
# Checks the thread-safety annotations (ABSL_GUARDED_BY,
# ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...) with clang's -Wthread-safety: every
# .cc of the repository in BUILD_DIR/compile_commands.json is parsed by
# clang (-fsyntax-only, nothing is built) with thread-safety warnings as
# errors. GCC, which builds mentatd, ignores the annotations; this is what
# makes them rules the compiler checks. Needs clang-14 (Debian's clang-14,
# deploy/install-deps.sh) and a configured build directory (any build
# type; only its compile commands are read).
#
#   tools/thread_safety_check.sh [BUILD_DIR]   (default: build)
#   JOBS=N  parallel clang processes (default 2)
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
import concurrent.futures, json, os, shlex, subprocess, sys

build_dir, clang, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
source_dir = os.getcwd()
build_abs = os.path.realpath(build_dir)
entries = json.load(open(os.path.join(build_dir, "compile_commands.json")))


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


files = {}
for e in entries:
    path = os.path.realpath(os.path.join(e.get("directory", "."), e["file"]))
    # The repository's sources only: not gRPC's generated code in the
    # build directory. A file built for several targets is checked once.
    if not path.startswith(source_dir + "/") or path.startswith(build_abs + "/"):
        continue
    if not path.endswith(".cc") or path in files:
        continue
    files[path] = (e.get("directory", "."), clang_command(e))


def check(item):
    path, (directory, cmd) = item
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
print(f"thread_safety_check: {len(files)} files, {len(failed)} failed")
for f in failed:
    print(f"  {f}")
sys.exit(1 if failed else 0)
PY
echo "thread_safety_check: took $((SECONDS - start)) s"
exit "$status"
