#ifndef MENTAT_CLIENT_SHELL_EXPORTER_H_
#define MENTAT_CLIENT_SHELL_EXPORTER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "mentat/client/client.h"

namespace mentat::cli {

struct ExportOptions {
  std::string database;
  // LATEST or AS_OF; other kinds are refused (an export is a database
  // value, not a change set).
  v1::Basis basis;
  // Datoms per written transaction (entities are never split).
  int datoms_per_tx = 2000;
};

struct ExportSummary {
  int64_t transactions = 0;
  int64_t entities = 0;
  int64_t datoms = 0;
  // Datoms left out: refs to transaction entities.
  int64_t skipped = 0;
  int64_t basis_tx = 0;
};

// Writes the database (at the basis) to `path` as EDN transactions that
// ImportFile reads back into an empty database to give the same datoms,
// entity ids aside:
//   1. the schema: every attribute the user installed (:db/ident,
//      :db/valueType, :db/cardinality, :db/unique, :db/index, ...);
//   2. the other idents (enum entities);
//   3. the data, each entity one map {:db/id "e<id>" ...} whose string
//      tempid is derived from its id, cardinality-many values as
//      [:db/add ...] forms, in entity id order, packed into transactions
//      of about `datoms_per_tx` datoms.
// A ref is written as the target's ident if it has one; as the tempid when
// the target is in the same transaction; as a lookup ref on its
// :db.unique/identity attribute if it was written before (or, if it comes
// later, as its tempid plus that identity datom, which the later
// transaction upserts into). Entities that reference each other with no
// such handle are kept in one transaction. Built-in entities, and the
// transaction entities with their :db/txInstant and metadata, are not
// exported (an import makes its own). Reads one consistent database value.
[[nodiscard]] absl::StatusOr<ExportSummary> ExportDatabase(
    client::Client* client, const std::string& path,
    const ExportOptions& options, client::Canceller* canceller);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_EXPORTER_H_
