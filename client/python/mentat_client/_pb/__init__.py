"""The code protoc generates from proto/mentat/v1/mentat.proto (see
../../gen_proto.py). Committed, so the package needs no build step."""
