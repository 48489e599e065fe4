"""Finds the Python code generated from proto/mentat/v1/mentat.proto.

The generated modules (mentat.v1.mentat_pb2 and mentat_pb2_grpc) are a
build product, never committed. They are looked for, in order:

1. on sys.path already (CMake generates them into
   <build>/client/python/stubs and the tests put that on PYTHONPATH);
2. in $MENTAT_PY_STUBS, if set;
3. generated now with protoc and grpc_python_plugin (Debian's
   protobuf-compiler and protobuf-compiler-grpc) from $MENTAT_PROTO_DIR or
   the repository's proto/ next to this package, into a cache directory
   ($XDG_CACHE_HOME or ~/.cache, then mentat_client/<digest of the proto>).
"""

import hashlib
import importlib
import os
import shutil
import subprocess
import sys

_PROTO = os.path.join("mentat", "v1", "mentat.proto")


def _proto_dir():
    d = os.environ.get("MENTAT_PROTO_DIR")
    if d:
        return d
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "proto"))


def generate(out_dir, proto_dir=None):
    """Runs protoc for the Python messages and gRPC stubs into out_dir.

    Raises RuntimeError naming what is missing (protoc, the plugin, the
    .proto) or protoc's own message.
    """
    proto_dir = proto_dir or _proto_dir()
    source = os.path.join(proto_dir, _PROTO)
    if not os.path.isfile(source):
        raise RuntimeError("mentat_client: %s not found (set MENTAT_PROTO_DIR "
                           "to the directory holding mentat/v1/mentat.proto)"
                           % source)
    protoc = shutil.which("protoc")
    plugin = shutil.which("grpc_python_plugin")
    if protoc is None or plugin is None:
        raise RuntimeError("mentat_client: generating the stubs needs protoc "
                           "and grpc_python_plugin (apt-get install "
                           "protobuf-compiler protobuf-compiler-grpc)")
    os.makedirs(out_dir, exist_ok=True)
    r = subprocess.run(
        [protoc, "--python_out=" + out_dir, "--grpc_out=" + out_dir,
         "--plugin=protoc-gen-grpc=" + plugin, "-I", proto_dir, source],
        capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("mentat_client: protoc failed: " + r.stderr.strip())


def _cache_dir(proto_dir):
    with open(os.path.join(proto_dir, _PROTO), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mentat_client", digest)


def _try_import():
    try:
        pb2 = importlib.import_module("mentat.v1.mentat_pb2")
        grpc_mod = importlib.import_module("mentat.v1.mentat_pb2_grpc")
        return pb2, grpc_mod
    except ImportError:
        return None


def _import_from(path):
    if path not in sys.path:
        sys.path.insert(0, path)
    # A failed import leaves a namespace package "mentat" cached without
    # the new path: forget it.
    for name in ("mentat.v1.mentat_pb2_grpc", "mentat.v1.mentat_pb2",
                 "mentat.v1", "mentat"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return _try_import()


def load():
    """Returns (mentat_pb2, mentat_pb2_grpc)."""
    found = _try_import()
    if found:
        return found
    env = os.environ.get("MENTAT_PY_STUBS")
    if env:
        if not os.path.isfile(os.path.join(env, "mentat", "v1",
                                           "mentat_pb2.py")):
            generate(env)
        found = _import_from(env)
        if found:
            return found
    proto_dir = _proto_dir()
    if not os.path.isfile(os.path.join(proto_dir, _PROTO)):
        raise ImportError(
            "mentat_client: the generated stubs (mentat.v1.mentat_pb2) are "
            "not importable and %s is missing; put the stubs on PYTHONPATH "
            "or set MENTAT_PROTO_DIR" % os.path.join(proto_dir, _PROTO))
    out = _cache_dir(proto_dir)
    if not os.path.isfile(os.path.join(out, "mentat", "v1",
                                       "mentat_pb2_grpc.py")):
        tmp = out + ".tmp%d" % os.getpid()
        generate(tmp, proto_dir)
        try:
            os.rename(tmp, out)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another process won
    found = _import_from(out)
    if not found:
        raise ImportError("mentat_client: cannot import the stubs generated "
                          "in " + out)
    return found


if __name__ == "__main__":
    # python3 -m mentat_client._stubs OUT_DIR
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m mentat_client._stubs OUT_DIR")
    generate(sys.argv[1])
