#ifndef MENTAT_CLIENT_RESPONSE_PARSER_H_
#define MENTAT_CLIENT_RESPONSE_PARSER_H_

#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "mentat/client/query_batch.h"

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

// A unary answer parsed into *response; INTERNAL when it cannot be.
[[nodiscard]] absl::Status ParseAnswer(grpc::ByteBuffer* raw,
                                       google::protobuf::Message* response);

// The primary a node names when it refuses a write: "... send writes to
// the primary at HOST:PORT"; "" when the message names none.
std::string NamedPrimary(const absl::Status& status);

// Decodes a QueryResponse the client received raw into *batch, reading
// the buffer's own bytes when they are one slice (`*slice` then holds a
// reference to them; gRPC hands a message of up to several KB so), else
// from a copy in *scratch. The batch is valid while *buffer, *slice and
// *scratch are unchanged.
inline absl::Status DecodeResponse(const grpc::ByteBuffer& buffer,
                                   grpc::Slice* slice, std::string* scratch,
                                   QueryBatch* batch) {
  std::string_view bytes;
  if (buffer.TrySingleSlice(slice).ok()) {
    bytes = std::string_view(reinterpret_cast<const char*>(slice->begin()),
                             slice->size());
  } else {
    std::vector<grpc::Slice> slices;
    if (!buffer.Dump(&slices).ok()) {
      return absl::InternalError("a QueryResponse that cannot be read");
    }
    scratch->clear();
    for (const grpc::Slice& s : slices) {
      scratch->append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    bytes = *scratch;
  }
  absl::Status s = batch->Decode(bytes);
  if (!s.ok()) return absl::InternalError(s.message());
  return absl::OkStatus();
}

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_RESPONSE_PARSER_H_
