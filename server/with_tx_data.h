#ifndef MENTAT_SERVER_WITH_TX_DATA_H_
#define MENTAT_SERVER_WITH_TX_DATA_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "mentat/storage/db.h"

namespace mentat::server {

// A request's with_tx_data (Query, QueryFirst, Pull, PullMany): EDN
// tx-data applied in order to a database value without committing
// (storage::Db::With). Not owned; null or empty: none.
struct WithTxData {
  const google::protobuf::RepeatedPtrField<std::string>* entries = nullptr;
  // --max-value-bytes, checked as Transact checks it.
  size_t max_value_bytes = 0;

  bool empty() const { return entries == nullptr || entries->empty(); }
};

// The most entries a request's with_tx_data may hold: each is a layer
// every read of the request merges (and a level of the views' chain).
inline constexpr int kMaxWithTxData = 256;

// `db` with every entry of `with` applied, in order. InvalidArgument for
// more than kMaxWithTxData entries. Other errors are those of
// Transact for the same tx-data (InvalidArgument for syntax, unknown
// attributes, types; FailedPrecondition for uniqueness and cas), with the
// message starting "with_tx_data[i]: " (i from 0). Any thread; reads `db`.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const storage::Db>>
ApplyWithTxData(std::shared_ptr<const storage::Db> db, const WithTxData& with);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_WITH_TX_DATA_H_
