#ifndef MENTAT_CLIENT_RESPONSE_PARSER_H_
#define MENTAT_CLIENT_RESPONSE_PARSER_H_

#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>

namespace mentat::client {

// Parses a response the client received raw into *out (on the heap or an
// arena, whichever *out is on). False for bytes that do not parse (nested
// deeper than protobuf's limit of 100, or corrupt): the client's calls
// report that as INTERNAL, where gRPC's typed calls would not (a unary
// call said UNIMPLEMENTED "No message returned", a stream simply ended).
inline bool ParseResponse(grpc::ByteBuffer* buffer,
                          google::protobuf::Message* out) {
  grpc::ProtoBufferReader reader(buffer);
  return out->ParseFromZeroCopyStream(&reader);
}

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_RESPONSE_PARSER_H_
