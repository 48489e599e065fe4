#!/usr/bin/env python3
"""Generates mentat_client/_pb/ (the protobuf messages and gRPC stubs of
proto/mentat/v1/mentat.proto) and checks that the committed copy matches the
proto.

The generated code is committed so that `pip install ./client/python` and a
plain `import mentat_client` need neither protoc, grpc_tools, the CMake build
tree nor a network. Run this after every change to the proto:

    /usr/bin/python3 client/python/gen_proto.py          # rewrite _pb/
    /usr/bin/python3 client/python/gen_proto.py --check  # CTest: in sync?

It uses Debian's protoc (protobuf-compiler, 3.21) and grpc_python_plugin
(protobuf-compiler-grpc). protoc 3.21's Python code embeds the serialized
descriptor and runs on every protobuf runtime from 3.20 on, so one committed
copy serves Debian's python3-protobuf and a newer one from PyPI alike.

--check compares descriptors, not text, so that a developer whose protoc is
another version still sees "in sync" when the proto and the copy agree.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "proto"))
PROTO = "mentat/v1/mentat.proto"
OUT = os.path.join(HERE, "mentat_client", "_pb")

HEADER = ("# Generated from proto/mentat/v1/mentat.proto by "
          "client/python/gen_proto.py.\n# Do not edit; rerun it after "
          "changing the proto.\n")


def tool(name):
    path = shutil.which(name)
    if path is None:
        sys.exit("gen_proto.py: %s not found (apt-get install "
                 "protobuf-compiler protobuf-compiler-grpc)" % name)
    return path


def generate(out_dir):
    """Writes mentat_pb2.py (with its type stub, .pyi) and mentat_pb2_grpc.py
    into out_dir, the stub's
    absolute import of `mentat.v1` made relative so the pair lives inside
    the mentat_client package."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [tool("protoc"), "--python_out=" + tmp, "--pyi_out=" + tmp,
             "--grpc_out=" + tmp,
             "--plugin=protoc-gen-grpc=" + tool("grpc_python_plugin"),
             "-I", PROTO_DIR, os.path.join(PROTO_DIR, PROTO)], check=True)
        os.makedirs(out_dir, exist_ok=True)
        for name in ("mentat_pb2.py", "mentat_pb2.pyi", "mentat_pb2_grpc.py"):
            with open(os.path.join(tmp, "mentat", "v1", name)) as f:
                text = f.read()
            text = re.sub(r"^from mentat\.v1 import mentat_pb2 as",
                          "from . import mentat_pb2 as", text, flags=re.M)
            with open(os.path.join(out_dir, name), "w") as f:
                f.write(HEADER + text)


def descriptor_from_protoc():
    from google.protobuf import descriptor_pb2
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "set.pb")
        subprocess.run([tool("protoc"), "--descriptor_set_out=" + out, "-I",
                        PROTO_DIR, os.path.join(PROTO_DIR, PROTO)],
                       check=True)
        files = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            files.ParseFromString(f.read())
    return files.file[0]


def without_json_names(fd):
    # protoc fills json_name in a descriptor set but not in the copy the
    # Python code embeds; it is derived from the field name anyway.
    def strip(message):
        for field in message.field:
            field.ClearField("json_name")
        for nested in message.nested_type:
            strip(nested)
    for message in fd.message_type:
        strip(message)
    return fd


def check():
    from google.protobuf import descriptor_pb2
    sys.path.insert(0, HERE)
    from mentat_client._pb import mentat_pb2, mentat_pb2_grpc
    committed = descriptor_pb2.FileDescriptorProto()
    committed.ParseFromString(mentat_pb2.DESCRIPTOR.serialized_pb)
    if without_json_names(committed) != without_json_names(
            descriptor_from_protoc()):
        sys.exit("gen_proto.py: client/python/mentat_client/_pb is older "
                 "than proto/mentat/v1/mentat.proto: run "
                 "client/python/gen_proto.py and commit the result")
    service = mentat_pb2.DESCRIPTOR.services_by_name["Mentat"]
    stub_methods = set(dir(mentat_pb2_grpc.MentatServicer))
    missing = [m.name for m in service.methods if m.name not in stub_methods]
    if missing:
        sys.exit("gen_proto.py: the committed gRPC stubs lack %s: run "
                 "client/python/gen_proto.py" % ", ".join(missing))
    print("gen_proto.py: mentat_client/_pb matches %s" % PROTO)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that the committed copy is current")
    parser.add_argument("--out", default=OUT, help="output directory")
    args = parser.parse_args()
    if args.check:
        check()
    else:
        generate(args.out)


if __name__ == "__main__":
    main()
