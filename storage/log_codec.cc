#include "internal/log_codec.h"

#include "internal/coding.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {

namespace {

constexpr char kV2Marker = 0x00;
constexpr char kV2Version = 0x02;

void EncodeBody(const std::vector<Datom>& datoms, std::string* out) {
  PutVarint64(datoms.size(), out);
  for (const Datom& d : datoms) {
    PutFixed64BE(static_cast<uint64_t>(d.e), out);
    PutFixed64BE(static_cast<uint64_t>(d.a), out);
    out->push_back(d.added ? 1 : 0);
    EncodeValue(d.v, out);
  }
}

// Reads the header off the front of *in (v2), or leaves *in alone (v1).
[[nodiscard]] absl::Status ReadHeader(EntityId tx, std::string_view* in,
                                      LogEntryHeader* header) {
  *header = LogEntryHeader();
  if (in->empty() || (*in)[0] != kV2Marker) return absl::OkStatus();  // v1
  if (in->size() < 2 || (*in)[1] != kV2Version) {
    return absl::DataLossError(StrCat(
        "log entry of tx ", tx, ": unknown entry format ",
        in->size() < 2
            ? std::string("(truncated)")
            : StrCat(static_cast<int>(static_cast<unsigned char>((*in)[1])))));
  }
  in->remove_prefix(2);
  uint64_t term = 0;
  if (!GetVarint64(in, &term)) {
    return absl::DataLossError(
        StrCat("log entry of tx ", tx, ": truncated term"));
  }
  header->term = static_cast<int64_t>(term);
  for (size_t i = 0; i < header->next_counter.size(); ++i) {
    uint64_t c = 0;
    if (!GetVarint64(in, &c)) {
      return absl::DataLossError(
          StrCat("log entry of tx ", tx, ": truncated partition counters"));
    }
    header->next_counter[i] = static_cast<int64_t>(c);
  }
  header->has_counters = true;
  return absl::OkStatus();
}

}  // namespace

void EncodeLogEntry(const LogEntryHeader& header,
                    const std::vector<Datom>& datoms, std::string* out) {
  out->push_back(kV2Marker);
  out->push_back(kV2Version);
  PutVarint64(static_cast<uint64_t>(header.term), out);
  for (int64_t c : header.next_counter) {
    PutVarint64(static_cast<uint64_t>(c), out);
  }
  EncodeBody(datoms, out);
}

void EncodeLogEntryV1(const std::vector<Datom>& datoms, std::string* out) {
  EncodeBody(datoms, out);
}

absl::Status DecodeLogEntryHeader(EntityId tx, std::string_view in,
                                  LogEntryHeader* header) {
  return ReadHeader(tx, &in, header);
}

absl::Status DecodeLogEntry(EntityId tx, std::string_view in,
                            LogEntryHeader* header, std::vector<Datom>* out) {
  LogEntryHeader ignored;
  absl::Status h = ReadHeader(tx, &in, header != nullptr ? header : &ignored);
  if (!h.ok()) return h;
  uint64_t count = 0;
  if (!GetVarint64(&in, &count)) {
    return absl::DataLossError(
        StrCat("log entry of tx ", tx, ": truncated datom count"));
  }
  for (uint64_t i = 0; i < count; ++i) {
    if (in.size() < 17) {
      return absl::DataLossError(
          StrCat("log entry of tx ", tx, ": truncated datom ", i));
    }
    Datom d;
    d.e = static_cast<EntityId>(DecodeFixed64BE(in));
    d.a = static_cast<EntityId>(DecodeFixed64BE(in.substr(8)));
    d.added = in[16] != 0;
    d.tx = tx;
    in.remove_prefix(17);
    absl::Status s = DecodeValue(&in, &d.v);
    if (!s.ok()) {
      return absl::DataLossError(
          StrCat("log entry of tx ", tx, ", datom ", i, ": ", s.message()));
    }
    out->push_back(std::move(d));
  }
  if (!in.empty()) {
    return absl::DataLossError(
        StrCat("log entry of tx ", tx, ": trailing bytes"));
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
