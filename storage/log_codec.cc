#include "internal/log_codec.h"

#include "internal/coding.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {

void EncodeLogEntry(const std::vector<Datom>& datoms, std::string* out) {
  PutVarint64(datoms.size(), out);
  for (const Datom& d : datoms) {
    PutFixed64BE(static_cast<uint64_t>(d.e), out);
    PutFixed64BE(static_cast<uint64_t>(d.a), out);
    out->push_back(d.added ? 1 : 0);
    EncodeValue(d.v, out);
  }
}

absl::Status DecodeLogEntry(EntityId tx, std::string_view in,
                            std::vector<Datom>* out) {
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
