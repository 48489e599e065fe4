#ifndef MENTAT_CLIENT_SHELL_IMPORTER_H_
#define MENTAT_CLIENT_SHELL_IMPORTER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/client/client.h"

namespace mentat::cli {

struct ImportOptions {
  std::string database;
  // Send the file as one Import stream (the server ingests it as SST files
  // into an empty database, or applies it as batched transactions, strictly
  // in file order). Falls back to Transact calls (below) when the server
  // has no Import, or when false.
  bool use_import_rpc = true;
  // Transact calls only: transactions sent before the first is answered. The
  // transactor group-commits them; a transaction that fails while others are in
  // flight (it may have needed one of them first) is retried alone once they
  // are done, so references to entities made earlier in the file resolve. Use 1
  // when transactions must also apply strictly in file order (the same
  // entity's cardinality-one attribute set twice, for example).
  int inflight = 4;
  // NDJSON: entity maps per transaction.
  int entities_per_tx = 500;
  // Draw a progress bar on stderr (when it is a terminal).
  bool progress = false;
  // CSV: COLUMN=TARGET mappings (see CsvMapping), over the header's names.
  std::vector<std::pair<std::string, std::string>> csv_map;
  // Transactions at the start of the file to pass over: those a stopped
  // import committed (it says how many).
  int64_t skip = 0;
  // When set, the import stops sending, waits for what it sent, and
  // returns with ImportSummary::stopped (Ctrl-C once). Not owned.
  const std::atomic<bool>* stop = nullptr;
};

struct ImportSummary {
  int64_t transactions = 0;
  int64_t datoms = 0;  // as the server counted them, tx datoms included
  int64_t bytes = 0;
  int64_t retried = 0;
  double seconds = 0;
  // Stopped through ImportOptions::stop: the file's first `skip +
  // transactions` transactions are committed, the rest not sent.
  bool stopped = false;
  // The file line where the last committed transaction starts (0: none).
  uint32_t last_line = 0;
  int64_t basis_tx = 0;  // the server's basis when the import ended (stream)
};

// Loads a file through the Import RPC (or Transact calls, see
// ImportOptions::use_import_rpc):
//  - EDN: every top-level form is one transaction (one per line, or one
//    big vector over many lines); a top-level vector whose items are
//    themselves transactions (vectors of tx forms) is taken as that list.
//  - NDJSON (.ndjson, .jsonl, .json, or a first line that is a JSON
//    object): one entity map per line with keys like ":ns/name", mapped as
//    the server maps JSON input (see JsonToEdn), `entities_per_tx` lines
//    per transaction. Tempids are scoped to their transaction: refer to
//    entities on other lines with lookup refs ([":user/email", "a@b.c"]).
//  - CSV (.csv): a header row naming attributes, one entity per row,
//    `entities_per_tx` rows per transaction, cells read by each
//    attribute's type (CsvMapping; the schema is asked of the server).
// Stops at the first transaction the server refuses; its error names the
// file, line and column. Ctrl-C (the canceller) stops it with CANCELLED.
// Transactions already committed stay committed.
[[nodiscard]] absl::StatusOr<ImportSummary> ImportFile(
    client::Client* client, const std::string& path,
    const ImportOptions& options, client::Canceller* canceller);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_IMPORTER_H_
