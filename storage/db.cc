#include "mentat/storage/db.h"

#include <mutex>

#include "internal/cursors.h"
#include "internal/since_index.h"
#include "internal/speculative_layer.h"
#include "internal/store_core.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage {

Db::Db(std::shared_ptr<internal::StoreCore> core,
       std::shared_ptr<const rocksdb::Snapshot> snapshot, EntityId basis_tx,
       int64_t basis_tx_instant, std::shared_ptr<const Schema> schema,
       std::shared_ptr<const Statistics> stats)
    : core_(std::move(core)),
      snapshot_(std::move(snapshot)),
      basis_tx_(basis_tx),
      basis_tx_instant_(basis_tx_instant),
      schema_(std::move(schema)),
      stats_(std::move(stats)) {}

DbView Db::View(Basis basis) const { return DbView(shared_from_this(), basis); }

absl::StatusOr<EntityId> Db::ResolveT(int64_t t) {
  if (t < 0) {
    return absl::InvalidArgumentError(
        StrCat("t must not be negative, got ", t));
  }
  if (t <= kCounterMask) return MakeEntityId(Partition::kTx, t);
  if (!IsTxId(t)) {
    return absl::InvalidArgumentError(
        StrCat(t, " is neither a t nor a transaction id"));
  }
  return t;
}

EntityId Db::history_horizon() const {
  return core_->retention->database_horizon.load(std::memory_order_relaxed);
}

absl::Status Db::CheckBasis(const Basis& basis) const {
  const EntityId horizon = history_horizon();
  if (basis.kind == BasisKind::kAsOf && horizon > 0 && basis.t < horizon &&
      basis.t < basis_tx_) {
    return absl::FailedPreconditionError(
        StrCat("as_of ", basis.t, " is before the history retention horizon ",
               horizon, "; history retracted before it may be gone"));
  }
  return absl::OkStatus();
}

std::optional<EntityId> Db::TxAtOrBeforeInstant(int64_t micros) const {
  if (layer_ != nullptr) {
    if (micros >= basis_tx_instant_) return basis_tx_;
    return parent_->TxAtOrBeforeInstant(micros);
  }
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_.get();
  std::unique_ptr<rocksdb::Iterator> it(core_->db->NewIterator(
      ro, core_->cf(internal::CurrentCf(IndexOrder::kAvet))));
  std::string prefix;
  AvetKey::EncodePrefix(ids::kDbTxInstant, &prefix);
  std::string target;
  AvetKey::EncodePrefix(ids::kDbTxInstant, Value::Instant(micros), &target);
  target.append(8, '\xff');
  it->SeekForPrev(target);
  if (!it->Valid()) return std::nullopt;
  std::string_view k(it->key().data(), it->key().size());
  if (!k.starts_with(prefix)) return std::nullopt;
  Datom d;
  if (!DecodeKey(IndexOrder::kAvet, k, &d).ok()) return std::nullopt;
  return d.e;
}

// The since() index of a view, built on first use.
struct DbView::SinceState {
  std::once_flag once;
  absl::Status status;
  // Null (an error) or over(): filter instead.
  std::shared_ptr<const internal::SinceIndex> index;
};

DbView::DbView(std::shared_ptr<const Db> db, Basis basis)
    : db_(std::move(db)), basis_(basis) {
  // A point at or past the basis is the basis itself.
  if (basis_.kind == BasisKind::kAsOf && basis_.t >= db_->basis_tx()) {
    basis_ = Basis::Current();
  }
  if (db_->speculative()) {
    // The parent answers what the layer does not change; an as_of before
    // the speculative tx is the parent's alone.
    parent_view_ = std::make_shared<const DbView>(db_->parent(), basis_);
    return;
  }
  if (basis_.kind == BasisKind::kSince) since_ = std::make_shared<SinceState>();
}

std::unique_ptr<DatomCursor> DbView::NewCursor(IndexOrder order) const {
  if (parent_view_ != nullptr) {
    std::unique_ptr<DatomCursor> base = parent_view_->NewCursor(order);
    internal::LayerMode mode = internal::LayerMode::kCurrent;
    switch (basis_.kind) {
      case BasisKind::kCurrent:
        break;
      case BasisKind::kAsOf:
        return base;
      case BasisKind::kSince:
        mode = internal::LayerMode::kSince;
        break;
      case BasisKind::kHistory:
        mode = internal::LayerMode::kHistory;
        break;
    }
    return internal::NewLayerCursor(std::move(base), *db_->layer(), order, mode,
                                    basis_.t);
  }
  internal::RecordCache* cache = db_->core().cache(order);
  internal::ColumnCache* columns = db_->core().column_cache.get();
  if (order != IndexOrder::kAevt && order != IndexOrder::kAvet) {
    columns = nullptr;
  }
  // Current and as_of views read through the caches in front of RocksDB:
  // columns of whole attributes, then records of one entity or value.
  auto cached = [&](EntityId t, std::unique_ptr<DatomCursor> cursor) {
    if (cache != nullptr) {
      cursor =
          internal::NewCachedCursor(*db_, order, cache, t, std::move(cursor));
    }
    if (columns != nullptr) {
      cursor =
          internal::NewColumnCursor(*db_, order, columns, t, std::move(cursor));
    }
    return cursor;
  };
  switch (basis_.kind) {
    case BasisKind::kCurrent:
      return cached(db_->basis_tx(), internal::NewCurrentCursor(*db_, order));
    case BasisKind::kAsOf:
      return cached(basis_.t, internal::NewAsOfCursor(*db_, order, basis_.t));
    case BasisKind::kSince: {
      std::call_once(since_->once, [&] {
        internal::SinceCache& cache = *db_->core().since_cache;
        const size_t limit = db_->core().options.since_log_limit;
        std::shared_ptr<const internal::SinceIndex> found =
            cache.Find(db_->basis_tx(), basis_.t);
        if (found && (found->basis() == db_->basis_tx() || found->over())) {
          since_->index = std::move(found);
          return;
        }
        // An index of an earlier basis is extended by the commits since.
        auto built = found ? internal::SinceIndex::Extend(*found, *db_, limit)
                           : internal::SinceIndex::Build(*db_, basis_.t, limit);
        if (built.ok()) {
          since_->index = *built;
          cache.Insert(*built);
        } else {
          since_->status = built.status();
        }
      });
      if (since_->index && !since_->index->over()) {
        return since_->index->NewCursor(order);
      }
      // An error reading the log, or too much of it: filter the current
      // indexes by tx instead (slower, always right).
      return internal::NewSinceCursor(*db_, order, basis_.t);
    }
    case BasisKind::kHistory:
      return internal::NewHistoryCursor(*db_, order);
  }
  return internal::NewCurrentCursor(*db_, order);
}

std::shared_ptr<const EntityColumn> DbView::EntityColumnOf(
    EntityId attribute) const {
  if (parent_view_ != nullptr) {
    // Columns hold committed values only.
    if (basis_.kind == BasisKind::kAsOf) {
      return parent_view_->EntityColumnOf(attribute);
    }
    return nullptr;
  }
  internal::ColumnCache* columns = db_->core().column_cache.get();
  if (columns == nullptr) return nullptr;
  EntityId t;
  switch (basis_.kind) {
    case BasisKind::kCurrent:
      t = db_->basis_tx();
      break;
    case BasisKind::kAsOf:
      t = basis_.t;
      break;
    default:
      return nullptr;  // since and history views never read columns
  }
  std::shared_ptr<const internal::AttributeColumn> column =
      columns->Find(IndexOrder::kAevt, attribute, t);
  if (column == nullptr) return nullptr;
  return std::make_shared<const EntityColumn>(std::move(column));
}

void DbView::NoteColumnDemand(IndexOrder order, EntityId attribute,
                              uint64_t rows) const {
  if (parent_view_ != nullptr) {
    parent_view_->NoteColumnDemand(order, attribute, rows);
    return;
  }
  internal::ColumnCache* columns = db_->core().column_cache.get();
  if (columns == nullptr || rows < columns->min_report_rows()) return;
  columns->CountScanned(order, attribute, rows);
}

absl::StatusOr<std::vector<Datom>> DbView::Datoms(
    IndexOrder order, std::string_view prefix) const {
  std::vector<Datom> out;
  auto cursor = NewCursor(order);
  for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
    out.push_back(cursor->datom());
  }
  if (!cursor->status().ok()) return cursor->status();
  return out;
}

absl::StatusOr<std::optional<EntityId>> DbView::LookupUnique(
    EntityId a, const Value& v) const {
  std::string prefix;
  AvetKey::EncodePrefix(a, v, &prefix);
  auto cursor = NewCursor(IndexOrder::kAvet);
  cursor->Seek(prefix);
  if (!cursor->status().ok()) return cursor->status();
  if (!cursor->Valid()) return std::optional<EntityId>();
  return std::optional<EntityId>(cursor->datom().e);
}

}  // namespace mentat::storage
