#ifndef MENTAT_SERVER_WIRE_ENCODING_H_
#define MENTAT_SERVER_WIRE_ENCODING_H_

// EDN values written straight into protobuf's wire format as
// mentat.v1.Value messages, without building the message objects: the
// bytes are those EdnToProto and SerializeToString give (value_convert.h;
// checked byte for byte in wire_encoding_test.cc), so every client parses
// them as before. Pull answers are encoded here; query answers by
// query_response_encoder.h.

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/edn/edn_value.h"

namespace mentat::server {

// The bytes `v` takes as a mentat.v1.Value message (its body, without a
// tag or length).
size_t ValueWireSize(const edn::EdnValue& v);
// Appends `v` as a mentat.v1.Value message body.
void AppendValueWire(const edn::EdnValue& v, std::string* out);

// A mentat.v1.PullResponse of `result`, or a PullManyResponse of `results`
// (both: the Value field 1, basis_tx field 2), into `*out`.
void EncodePullResponse(const edn::EdnValue& result, int64_t basis_tx,
                        grpc::ByteBuffer* out);
void EncodePullManyResponse(const std::vector<edn::EdnValue>& results,
                            int64_t basis_tx, grpc::ByteBuffer* out);

// A Row message of EDN values, sized once (each value's tree of sizes, on
// the thread's scratch) and then written as a length-delimited field of
// exactly FieldSize bytes. One per thread at a time: it holds the thread's
// scratch until destroyed. `values` outlives it.
class EdnRowWire {
 public:
  explicit EdnRowWire(const std::vector<edn::EdnValue>& values);
  ~EdnRowWire();
  EdnRowWire(const EdnRowWire&) = delete;
  EdnRowWire& operator=(const EdnRowWire&) = delete;

  // The bytes of the row as field `field`: its tag, length and body.
  size_t FieldSize(uint32_t field) const;
  // Writes those bytes at `p`; returns the end.
  char* Write(uint32_t field, char* p) const;

 private:
  const std::vector<edn::EdnValue>& values_;
  std::vector<size_t>* tree_;
  size_t body_ = 0;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_WIRE_ENCODING_H_
