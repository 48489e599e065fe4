#ifndef MENTAT_STORAGE_DB_H_
#define MENTAT_STORAGE_DB_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "mentat/storage/datom_cursor.h"
#include "mentat/storage/entity_column.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/statistics.h"
#include "mentat/storage/tx_op.h"
#include "mentat/storage/tx_report.h"

namespace rocksdb {
class Snapshot;
}

namespace mentat::storage {

namespace internal {
struct StoreCore;
class SinceIndex;
struct SpeculativeLayer;
}  // namespace internal

// Which database a read sees, relative to a published Db:
//   kCurrent   the state at the Db's basis
//   kAsOf      the state as of tx `t` (t >= basis reads like kCurrent)
//   kSince     the datoms of kCurrent asserted by a tx after `t`
//   kHistory   every assertion and retraction up to the basis
enum class BasisKind : uint8_t { kCurrent, kAsOf, kSince, kHistory };

struct Basis {
  BasisKind kind = BasisKind::kCurrent;
  EntityId t = 0;  // a tx id, for kAsOf and kSince

  static Basis Current() { return {}; }
  static Basis AsOf(EntityId t) { return {BasisKind::kAsOf, t}; }
  static Basis Since(EntityId t) { return {BasisKind::kSince, t}; }
  static Basis History() { return {BasisKind::kHistory, 0}; }
};

class DbView;
class Db;

// What Db::With returns: the transaction's report, as a commit on the same
// Db would give it (tx id, tempids, datoms; the instant is the clock's at
// the call), and the database value with the transaction applied.
struct SpeculativeTx {
  TxReport report;
  std::shared_ptr<const Db> db_after;
};

// An immutable published state of a store: the basis tx, the schema and the
// statistics as of that tx, and a RocksDB snapshot taken right after it was
// committed. Every read of a query goes through one Db, so a query never
// sees part of a transaction, and holding a Db never blocks the writer.
// Shared by any number of reader threads (shared_ptr<const Db>); keeps the
// store's RocksDB instance open while it lives.
class Db : public std::enable_shared_from_this<Db> {
 public:
  Db(std::shared_ptr<internal::StoreCore> core,
     std::shared_ptr<const rocksdb::Snapshot> snapshot, EntityId basis_tx,
     int64_t basis_tx_instant, std::shared_ptr<const Schema> schema,
     std::shared_ptr<const Statistics> stats);

  EntityId basis_tx() const { return basis_tx_; }
  int64_t basis_tx_instant() const { return basis_tx_instant_; }
  const Schema& schema() const { return *schema_; }
  const std::shared_ptr<const Schema>& schema_ptr() const { return schema_; }
  const Statistics& stats() const { return *stats_; }

  // A view of this Db at `basis`. Never fails and checks nothing: callers
  // turn a user's t into a tx id first (ResolveT) and check an as_of
  // against the retention horizon (CheckBasis). An as_of at or past the
  // basis tx gives the current view (its basis() is kCurrent). The Db must
  // be owned by a shared_ptr, which the view shares.
  DbView View(Basis basis) const;

  // Turns a user's t into a tx id: a tx id stays as it is; a small number
  // (below 2^42) is a Datomic-style t counter. Returns InvalidArgument for
  // negative numbers and ids of other partitions.
  [[nodiscard]] static absl::StatusOr<EntityId> ResolveT(int64_t t);

  // OK if reads at `basis` are exact. FailedPrecondition for an as_of
  // before the history retention horizon (older history may be gone).
  [[nodiscard]] absl::Status CheckBasis(const Basis& basis) const;

  // The tx at or before which retracted history may have been dropped
  // (0: all history is kept).
  EntityId history_horizon() const;

  // The last tx whose :db/txInstant is <= `micros`, or nullopt if none.
  std::optional<EntityId> TxAtOrBeforeInstant(int64_t micros) const;

  // Speculative transactions (Datomic's `with`): applies `request` to this
  // value exactly as the transactor would on a commit at this basis
  // (tempids, upserts, uniqueness, cas, schema changes; the same code), and
  // returns the report and the resulting value, without writing anything:
  // no log entry, no listener, nothing replicated, the store's ids and
  // caches untouched. Runs on the calling thread, reading this Db's
  // snapshot; the transactor never waits for it. The value's basis_tx is
  // the transaction's id; its views read this Db plus the transaction's
  // datoms in every basis (as_of before it reads this Db); it has no
  // columns (EntityColumnOf is null); the log (tx_log.h) holds committed
  // transactions only. Chains: With on a speculative value applies on top
  // of it. Errors: those of a commit (InvalidArgument, FailedPrecondition
  // for uniqueness and cas, NotFound), Unavailable or DataLoss on reads.
  [[nodiscard]] absl::StatusOr<SpeculativeTx> With(
      const TxRequest& request) const;

  // True for a value made by With (not committed).
  bool speculative() const { return layer_ != nullptr; }
  // The value a speculative one applied on (null for a committed one).
  const std::shared_ptr<const Db>& parent() const { return parent_; }
  // The speculative transaction's changes (null for a committed value).
  const internal::SpeculativeLayer* layer() const { return layer_.get(); }

  const internal::StoreCore& core() const { return *core_; }
  const rocksdb::Snapshot* snapshot() const { return snapshot_.get(); }

 private:
  std::shared_ptr<internal::StoreCore> core_;
  std::shared_ptr<const rocksdb::Snapshot> snapshot_;
  EntityId basis_tx_;
  int64_t basis_tx_instant_;
  std::shared_ptr<const Schema> schema_;
  std::shared_ptr<const Statistics> stats_;
  // Speculative values only (With).
  std::shared_ptr<const Db> parent_;
  std::shared_ptr<const internal::SpeculativeLayer> layer_;
  // The partition counters after the speculative transaction, so that a
  // With on this value allocates past them.
  std::array<int64_t, 5> next_counter_{};
};

// A Db read at one basis. Cheap to copy; holds the Db alive. Copies share
// the lazily built since() index; a view may be used from several threads.
class DbView {
 public:
  DbView(std::shared_ptr<const Db> db, Basis basis);

  const Db& db() const { return *db_; }
  const Schema& schema() const { return db_->schema(); }
  Basis basis() const { return basis_; }
  EntityId basis_tx() const { return db_->basis_tx(); }

  // A cursor over `order` at this view's basis. Call Seek before use.
  std::unique_ptr<DatomCursor> NewCursor(IndexOrder order) const;

  // The in-memory column of `attribute` in AEVT order
  // (StoreOptions::column_cache_bytes), where a lookup by entity costs a
  // few comparisons, or null: the attribute has no column (yet: the store
  // builds one in the background once readers asked for enough of the
  // attribute), or none that answers this view's basis. Since and history
  // views have no columns.
  std::shared_ptr<const EntityColumn> EntityColumnOf(EntityId attribute) const;
  // Tells the column cache that a query read `rows` datoms of `attribute`
  // one seek at a time that a column in `order` would have answered: it
  // counts towards building one, as keys scanned in RocksDB do.
  void NoteColumnDemand(IndexOrder order, EntityId attribute,
                        uint64_t rows) const;

  // Convenience: every datom whose `order` key starts with `prefix`.
  [[nodiscard]] absl::StatusOr<std::vector<Datom>> Datoms(
      IndexOrder order, std::string_view prefix) const;

  // The entity whose unique attribute `a` has value `v` (AVET point seek),
  // or nullopt.
  [[nodiscard]] absl::StatusOr<std::optional<EntityId>> LookupUnique(
      EntityId a, const Value& v) const;

 private:
  struct SinceState;
  std::shared_ptr<const Db> db_;
  Basis basis_;
  std::shared_ptr<SinceState> since_;
  // For a speculative Db: the view of its parent at the same basis, which
  // its cursors read under the layer.
  std::shared_ptr<const DbView> parent_view_;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_DB_H_
