#include "with_tx_data.h"

#include "mentat/base/str_cat.h"
#include "mentat/query/tx_data_parser.h"
#include "value_limit.h"

namespace mentat::server {

absl::StatusOr<std::shared_ptr<const storage::Db>> ApplyWithTxData(
    std::shared_ptr<const storage::Db> db, const WithTxData& with) {
  if (with.empty()) return db;
  if (with.entries->size() > kMaxWithTxData) {
    return absl::InvalidArgumentError(StrCat(
        "with_tx_data holds ", with.entries->size(), " transactions; at most ",
        kMaxWithTxData, " are applied per request (join them into fewer)"));
  }
  for (int i = 0; i < with.entries->size(); ++i) {
    auto where = [i](const absl::Status& s) {
      return absl::Status(s.code(),
                          StrCat("with_tx_data[", i, "]: ", s.message()));
    };
    auto parsed = query::ParseTxData((*with.entries)[i]);
    if (!parsed.ok()) return where(parsed.status());
    absl::Status size = CheckValueSizes(*parsed, with.max_value_bytes);
    if (!size.ok()) return where(size);
    auto applied = db->With(*parsed);
    if (!applied.ok()) return where(applied.status());
    db = std::move(applied->db_after);
  }
  return db;
}

}  // namespace mentat::server
