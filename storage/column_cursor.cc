// Scans of one attribute (AEVT or AVET) served from an AttributeColumn
// (internal/column_cache.h) when the attribute has one; otherwise from the
// ordinary cursor, counting the keys it steps over so that an attribute
// read in bulk gets a column.

#include <algorithm>

#include "internal/coding.h"
#include "internal/column_cache.h"
#include "internal/cursors.h"
#include "internal/layered_cursor.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/str_cat.h"

namespace mentat::storage::internal {
namespace {

// Keys read from RocksDB are reported to the cache in lots of at least
// this many (one lock per lot), and when the cursor moves to another
// attribute or goes away.
constexpr uint64_t kReportRows = 4096;

class ColumnCursor : public LayeredCursor {
 public:
  ColumnCursor(const Db& db, IndexOrder order, ColumnCache* cache, EntityId t,
               std::unique_ptr<DatomCursor> fallback)
      : LayeredCursor(std::move(fallback)),
        db_(db),
        order_(order),
        cache_(cache),
        t_(t) {}

  ~ColumnCursor() override { Report(); }

  void Seek(std::string_view prefix) override {
    valid_ = false;
    fallback_mode_ = false;  // an error below leaves the cursor invalid
    if (prefix.size() < kEntityPrefixBytes) return FallBack(prefix);
    const auto attribute = static_cast<EntityId>(
        DecodeFixed64BE(prefix.substr(0, kEntityPrefixBytes)));
    if (attribute != attribute_) {
      Report();
      attribute_ = attribute;
      // Looked up once per attribute: a column held from an earlier seek
      // stays right for this cursor's basis even if a later commit dropped
      // it from the cache.
      column_ = ColumnFor(db_, order_, attribute, cache_, t_, &status_);
      if (!status_.ok()) return;
    }
    if (!column_) return FallBack(prefix);
    prefix_.assign(prefix);
    begin_ = LowerBound(0, prefix_);
    pos_ = begin_;
    Settle();
  }

  void SeekWithin(std::string_view target) override {
    if (fallback_mode_) return fallback_->SeekWithin(target);
    if (!column_) return;
    pos_ = LowerBound(begin_, target);
    Settle();
  }

  void Next() override {
    if (fallback_mode_) {
      ++scanned_;
      return fallback_->Next();
    }
    ++pos_;
    Settle();
  }

 private:
  // A column serves the seek: nothing to hint. Prefetching the entity's
  // key ahead (found by a second search of the entity array) cost q4 at m
  // about 4% more than it saved: sorted probes walk the column forward.
  bool PrefetchOwn(std::string_view prefix, int step) override {
    (void)step;
    return column_ != nullptr && prefix.size() >= kEntityPrefixBytes &&
           static_cast<EntityId>(DecodeFixed64BE(
               prefix.substr(0, kEntityPrefixBytes))) == attribute_;
  }

  void FallBack(std::string_view prefix) {
    UseFallback(prefix);
    if (scanned_ >= kReportRows) Report();
  }

  void Report() {
    if (scanned_ >= cache_->min_report_rows() && attribute_ != 0) {
      cache_->CountScanned(order_, attribute_, scanned_);
    }
    scanned_ = 0;
  }

  template <typename Below>
  size_t Search(size_t lo, size_t hi, Below below) const {
    return GallopLowerBound(pos_, lo, hi, below);
  }

  // The first key at or after `from` that is >= target.
  size_t LowerBound(size_t from, std::string_view target) const {
    const AttributeColumn& c = *column_;
    constexpr size_t kEntityEnd = 2 * kEntityPrefixBytes;
    if (!c.entities.empty() && target.size() >= kEntityEnd) {
      // AEVT: every key starts with the attribute, so the entity decides
      // up to the keys of the target's own entity, which are few.
      const uint64_t e = DecodeFixed64BE(target.substr(kEntityPrefixBytes, 8));
      size_t i =
          Search(from, c.size(), [&](size_t k) { return c.entities[k] < e; });
      // A target of attribute and entity alone is below all of them.
      if (target.size() == kEntityEnd) return i;
      while (i < c.size() && c.entities[i] == e && c.key(i) < target) ++i;
      return i;
    }
    return Search(from, c.size(), [&](size_t k) { return c.key(k) < target; });
  }

  void Settle() {
    valid_ = false;
    if (pos_ >= column_->size()) return;
    const std::string_view k = column_->key(pos_);
    if (!k.starts_with(prefix_)) return;
    SetCurrent(order_, k, column_->txs[pos_]);
  }

  const Db& db_;
  IndexOrder order_;
  ColumnCache* cache_;
  EntityId t_;
  EntityId attribute_ = 0;
  std::shared_ptr<const AttributeColumn> column_;
  uint64_t scanned_ = 0;  // keys read from fallback_ not yet reported
  std::string prefix_;
  size_t begin_ = 0;  // the first key under prefix_
  size_t pos_ = 0;
};

// Reads every current key of `attribute` in `order` from the Db's snapshot
// into a column and offers it to `cache`, after the caller won
// ColumnCache::ClaimBuild.
std::shared_ptr<const AttributeColumn> BuildColumn(const Db& db,
                                                   IndexOrder order,
                                                   EntityId attribute,
                                                   ColumnCache* cache,
                                                   absl::Status* status) {
  auto column = std::make_shared<AttributeColumn>();
  column->order = order;
  column->attribute = attribute;
  column->read_at = db.basis_tx();
  std::string prefix;
  AppendEntityId(attribute, &prefix);
  rocksdb::ReadOptions ro = TotalOrderReadOptions();
  ro.snapshot = db.snapshot();
  ro.ignore_range_deletions = true;
  std::unique_ptr<rocksdb::Iterator> it(
      db.core().db->NewIterator(ro, db.core().cf(CurrentCf(order))));
  const size_t limit = cache->max_column_bytes();
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    const std::string_view k(it->key().data(), it->key().size());
    if (!k.starts_with(prefix)) break;
    const std::string_view v(it->value().data(), it->value().size());
    if (v.size() != 8) {
      *status = absl::DataLossError(
          StrCat("malformed entry in ", IndexOrderName(order)));
      cache->Abandon(order, attribute, false);
      return nullptr;
    }
    column->keys.append(k);
    if (column->keys.size() > UINT32_MAX ||
        column->keys.size() + column->size() * 20 > limit) {
      cache->Abandon(order, attribute, true);
      return nullptr;
    }
    column->ends.push_back(static_cast<uint32_t>(column->keys.size()));
    column->txs.push_back(static_cast<EntityId>(DecodeFixed64BE(v)));
    if (order == IndexOrder::kAevt) {
      if (k.size() < 2 * kEntityPrefixBytes) {
        *status = absl::DataLossError("malformed key in aevt");
        cache->Abandon(order, attribute, false);
        return nullptr;
      }
      column->entities.push_back(
          DecodeFixed64BE(k.substr(kEntityPrefixBytes, 8)));
    }
  }
  if (!it->status().ok()) {
    *status = absl::UnavailableError(StrCat("reading ", IndexOrderName(order),
                                            ": ", it->status().ToString()));
    cache->Abandon(order, attribute, false);
    return nullptr;
  }
  column->keys.shrink_to_fit();
  column->ends.shrink_to_fit();
  column->txs.shrink_to_fit();
  column->entities.shrink_to_fit();
  cache->Insert(column);
  return column;
}

}  // namespace

std::shared_ptr<const AttributeColumn> ColumnFor(const Db& db, IndexOrder order,
                                                 EntityId attribute,
                                                 ColumnCache* cache, EntityId t,
                                                 absl::Status* status) {
  std::shared_ptr<const AttributeColumn> column =
      cache->Find(order, attribute, t);
  if (column || t != db.basis_tx() || !cache->ClaimBuild(order, attribute)) {
    return column;
  }
  return BuildColumn(db, order, attribute, cache, status);
}

std::unique_ptr<DatomCursor> NewColumnCursor(
    const Db& db, IndexOrder order, ColumnCache* cache, EntityId t,
    std::unique_ptr<DatomCursor> fallback) {
  return std::make_unique<ColumnCursor>(db, order, cache, t,
                                        std::move(fallback));
}

}  // namespace mentat::storage::internal
