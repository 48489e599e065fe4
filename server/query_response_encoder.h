#ifndef MENTAT_SERVER_QUERY_RESPONSE_ENCODER_H_
#define MENTAT_SERVER_QUERY_RESPONSE_ENCODER_H_

// A query's answer written as mentat.v1.QueryResponse bytes as its rows
// come: the engine's plain rows (storage values) are encoded straight into
// the message, with the bytes the EDN path would write, so no EDN value
// nor protobuf object is built per cell (wire_encoding_test.cc checks both
// paths against protobuf's own encoding).

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/edn/edn_value.h"
#include "mentat/storage/value.h"

namespace mentat::server {

// A mentat.v1.QueryResponse built as bytes: rows are encoded as they
// come, and Render writes the message into one ByteBuffer. Reused from
// message to message. One thread at a time.
class QueryResponseEncoder {
 public:
  void AddColumn(std::string_view name);
  void set_find_kind(int kind) { find_kind_ = kind; }

  // Appends a Row of `values`; returns the bytes the row took.
  size_t AddRow(const std::vector<edn::EdnValue>& values);

  // Appends `values` encoded as a QueryResponse's rows field (a Row).
  static void EncodeRow(const std::vector<edn::EdnValue>& values,
                        std::string* out);

  // The same for a row of plain storage values (`width` of them), with
  // the bytes EncodeRow writes for the EDN values query::ValueToEdn makes
  // of them: the engine's rows go to the wire without an EDN value per
  // cell.
  size_t AddValueRow(const storage::Value* const* cells, size_t width);
  static void EncodeValueRow(const storage::Value* const* cells, size_t width,
                             std::string* out);

  int rows() const { return rows_count_; }
  bool empty() const { return rows() == 0 && columns_.empty(); }
  // The encoded bytes of row `i` (its Row message). Walks the rows before
  // it (for tests: a row's end is not kept per row).
  std::string_view row(int i) const;
  // Every row's encoded bytes, back to back (to fingerprint).
  std::string_view rows_bytes() const {
    return std::string_view(rows_.get(), rows_used_);
  }

  // The message with the rows and columns so far and these fields, into
  // `*out`; then forgets the rows and columns (find_kind stays). `more`:
  // a QueryFirst reply that the client continues with Query.
  void Render(int64_t basis_tx, std::string_view resume_token,
              int64_t rows_so_far, bool more, grpc::ByteBuffer* out);

 private:
  std::string columns_;  // the encoded columns fields
  // Room for n more bytes of rows, at the end of those so far.
  char* ExtendRows(size_t n);
  // The same room, not yet counted as rows (the caller adds what it
  // wrote to rows_used_).
  char* ReserveRows(size_t n);

  // The encoded rows fields, in the first rows_used_ of rows_capacity_
  // bytes; grown by doubling, never zero-filled (every byte handed out by
  // ExtendRows is written before it is read).
  std::unique_ptr<char[]> rows_;
  size_t rows_capacity_ = 0;
  size_t rows_used_ = 0;
  int rows_count_ = 0;
  int find_kind_ = 0;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_QUERY_RESPONSE_ENCODER_H_
