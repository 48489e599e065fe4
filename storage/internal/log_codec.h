#ifndef MENTAT_STORAGE_INTERNAL_LOG_CODEC_H_
#define MENTAT_STORAGE_INTERNAL_LOG_CODEC_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "mentat/storage/datom.h"

namespace mentat::storage::internal {

// The value of a `log` entry (key: the tx, 8 bytes BE): the datoms of the
// transaction in order, as varint count, then per datom e(8 BE) a(8 BE)
// added(1) and the encoded value.
void EncodeLogEntry(const std::vector<Datom>& datoms, std::string* out);

// Decodes a log entry of transaction `tx`; DataLoss on malformed bytes.
[[nodiscard]] absl::Status DecodeLogEntry(EntityId tx, std::string_view in,
                                          std::vector<Datom>* out);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_LOG_CODEC_H_
