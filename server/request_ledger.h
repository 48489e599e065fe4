#ifndef MENTAT_SERVER_REQUEST_LEDGER_H_
#define MENTAT_SERVER_REQUEST_LEDGER_H_

#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "mentat/storage/value.h"

namespace mentat::server {

// The result of a transaction that carried a client request id, as much of
// it as a replay needs (the datoms are read back from the log).
struct RecordedTx {
  storage::EntityId tx = 0;
  storage::EntityId basis_before = 0;
  int64_t tx_instant = 0;
  int64_t datom_count = 0;
  std::vector<std::pair<std::string, storage::EntityId>> tempids;
  // False when the tempids were lost (see Database::Transact).
  bool tempids_known = true;
  // A fingerprint of the request's tx-data (TxDataDigest), when known: a
  // retry with the same id must carry the same tx-data. Unknown only for
  // side-file records written before the digest existed.
  uint64_t tx_data_digest = 0;
  bool digest_known = false;
};

// Idempotent Transact, per database: remembers recent request ids with
// their results, and serializes requests that carry the same id.
//
// What makes a retry safe is not this class but the request id stored with
// the transaction itself (:mentat.tx/request-id, looked up before
// transacting); the ledger adds what the database does not hold, the
// tempid map, and keeps it in memory and in an append-only side file so a
// replay after a restart still has it. The side file is written before the
// client hears of the commit; after a crash between the commit and that
// write (the client never got an answer), a replay says tempids_missing.
//
// Thread-safe.
class RequestLedger {
 public:
  using Waiter = std::function<void(absl::StatusOr<RecordedTx>)>;

  // `path`: the side file; `window_micros`: how long a result counts;
  // `max_entries`: results kept in memory (the oldest go first).
  RequestLedger(std::string path, int64_t window_micros, size_t max_entries);
  ~RequestLedger();

  // Loads the side file (results within the window as of `now_micros`) and
  // rewrites it without the expired ones. A torn last record (a crash while
  // appending) is dropped.
  [[nodiscard]] absl::Status Load(int64_t now_micros);

  enum class Begin { kRecorded, kWaiting, kOwner };
  // Starts a request with `id` at `now_micros`:
  //   kRecorded: a result within the window is in memory: *recorded;
  //   kWaiting:  a request with the same id is in flight; `waiter` runs
  //              with its outcome (on the thread that completes it);
  //   kOwner:    the caller must find out (look the id up, or transact)
  //              and then call Complete or Fail.
  Begin Start(const std::string& id, int64_t now_micros, RecordedTx* recorded,
              Waiter waiter);

  // Ends an owned request: remembers the result (and appends it to the side
  // file if `persist`), answers the waiters. Must not block for long: it
  // runs on the transactor thread (one buffered write to the side file).
  void Complete(const std::string& id, const RecordedTx& result, bool persist);
  // Ends an owned request that failed; the waiters get `status`.
  void Fail(const std::string& id, const absl::Status& status);

  size_t size() const;

 private:
  void Remember(const std::string& id, const RecordedTx& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ExpireLocked(int64_t now_micros) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const int64_t window_micros_;
  const size_t max_entries_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, RecordedTx> done_ ABSL_GUARDED_BY(mu_);
  // Ids in the order remembered, for expiry and the memory bound.
  std::deque<std::pair<int64_t, std::string>> order_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::vector<Waiter>> in_flight_
      ABSL_GUARDED_BY(mu_);
  absl::Mutex file_mu_;
  FILE* file_ ABSL_GUARDED_BY(file_mu_) = nullptr;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_REQUEST_LEDGER_H_
