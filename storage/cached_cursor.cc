// Reads of one entity (EAVT) or of one attribute and value (AVET) served
// from a RecordCache (internal/record_cache.h): the first seek under such a
// prefix reads all its keys, current and retracted, from the Db's snapshot;
// later seeks, by any reader, probe the cache instead of RocksDB.

#include <algorithm>

#include "internal/coding.h"
#include "internal/cursors.h"
#include "internal/layered_cursor.h"
#include "internal/record_cache.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage::internal {
namespace {

// Values held by more entities than this are read from RocksDB each time
// (as entities of more than kMaxEntityEntries datoms): one read of a
// value thousands of entities share (AVET: an enum) should not flush the
// cache. A ref's fan-in (the issues of one assignee: about 80 in the
// workload's q2) is what the value cache is for: at 64 every q2 read its
// assignee's issues from RocksDB, a quarter of its instructions.
constexpr size_t kMaxValueEntries = 1024;
// A record keeps at most this many retracted datoms. An entity changed
// more often than that (a counter) keeps only its current datoms, so that
// reading it after each change does not read its whole history again.
constexpr size_t kMaxHistoryEntries = 64;

// The cache key of a seek prefix: EAVT, the entity id it starts with;
// AVET, the prefix itself when it is exactly an attribute and a whole
// value. False: the seek is not under one cacheable prefix.
bool CacheKey(IndexOrder order, std::string_view prefix,
              std::string_view* key) {
  if (prefix.size() < kEntityPrefixBytes) return false;
  if (order == IndexOrder::kEavt) {
    *key = prefix.substr(0, kEntityPrefixBytes);
    return true;
  }
  std::string_view rest = prefix.substr(kEntityPrefixBytes);
  if (rest.empty() || !SkipValue(&rest).ok() || !rest.empty()) {
    return false;
  }
  *key = prefix;
  return true;
}

class CachedCursor : public LayeredCursor {
 public:
  CachedCursor(const Db& db, IndexOrder order, RecordCache* cache, EntityId t,
               std::unique_ptr<DatomCursor> fallback)
      : LayeredCursor(std::move(fallback)),
        db_(db),
        order_(order),
        cache_(cache),
        t_(t) {}

  void Seek(std::string_view prefix) override {
    valid_ = false;
    fallback_mode_ = false;  // an error below leaves the cursor invalid
    record_.reset();
    std::string_view key;
    if (!CacheKey(order_, prefix, &key)) return UseFallback(prefix);
    RecordRef record = cache_->Find(key);
    // A bulk read of a missing prefix costs what the plain read costs: no
    // record of the whole entity (and its history) to build and keep.
    if (!record && bulk_) return UseFallback(prefix);
    // A reader of the latest basis reads no history: a third of a miss's
    // cost (a second iterator and seek), for what only earlier bases use.
    const bool needs_history = t_ < db_.basis_tx();
    if (!record || (record->current_only && t_ < record->read_at && !bulk_)) {
      record = Load(key, needs_history);
      if (!record) return;  // an error, in status_
      cache_->Insert(db_.basis_tx(), record);
    }
    if (record->oversized ||
        (!record->history_complete && t_ < record->read_at)) {
      return UseFallback(prefix);
    }
    record_ = std::move(record);
    prefix_.assign(prefix);
    SeekInRecord(prefix);
  }

  void SeekWithin(std::string_view target) override {
    if (fallback_mode_) return fallback_->SeekWithin(target);
    if (record_) SeekInRecord(target);
  }

  void Next() override {
    if (fallback_mode_) return fallback_->Next();
    ++pos_;
    Settle();
  }

 private:
  bool PrefetchOwn(std::string_view prefix, int step) override {
    std::string_view key;
    if (!CacheKey(order_, prefix, &key)) return false;
    cache_->Prefetch(key, step);
    return true;
  }

  // `target` starts with the record's prefix.
  void SeekInRecord(std::string_view target) {
    // The record's whole prefix (an entity's fetch, a value's lookup):
    // every entry is under it, the first is the seek's.
    pos_ = target.size() == record_->prefix().size()
               ? 0
               : record_->LowerBound(target);
    Settle();
  }

  // Moves to the first entry at or after pos_ that is visible at t_ and
  // still under the prefix.
  void Settle() {
    valid_ = false;
    for (; pos_ < record_->size(); ++pos_) {
      const IndexRecord::Entry& entry = record_->entry(pos_);
      const std::string_view k = record_->key(entry);
      if (!k.starts_with(prefix_)) return;
      if (entry.asserted > t_ ||
          (entry.retracted != 0 && entry.retracted <= t_))
        continue;
      SetCurrent(order_, k, entry.asserted);
      return;
    }
  }

  rocksdb::Iterator* Iterator(Cf cf, std::unique_ptr<rocksdb::Iterator>* it) {
    if (!*it) {
      rocksdb::ReadOptions ro;
      ro.snapshot = db_.snapshot();
      ro.ignore_range_deletions = true;
      ro.prefix_same_as_start = HasEntityPrefixFilter(cf);
      ro.total_order_seek = !HasEntityPrefixFilter(cf);
      it->reset(db_.core().db->NewIterator(ro, db_.core().cf(cf)));
    }
    return it->get();
  }

  // Reads every key under `key` (current, and with `with_history` its
  // retracted ones too) from the snapshot. Null on an error (status_ says
  // which).
  RecordRef Load(std::string_view key, bool with_history) {
    std::vector<IndexRecord::Entry> entries;
    std::string keys;
    bool history_complete = true;
    const std::string_view eprefix = key;
    const rocksdb::Slice seek(eprefix.data(), eprefix.size());
    const size_t max_entries =
        order_ == IndexOrder::kEavt ? kMaxEntityEntries : kMaxValueEntries;
    // Only a reader of an earlier basis reads the history (AVET's has no
    // prefix filter, so its seek costs about what the current one does). An
    // as_of reader of a value then finds its record whole from then on,
    // where it went to RocksDB's merged current and history iterators for
    // every read: at scale s, about 40% of the workload's as_of q2.
    if (!with_history) history_complete = false;
    for (const bool history : {false, true}) {
      if (history && !with_history) break;
      size_t kept = 0;
      rocksdb::Iterator* it = history
                                  ? Iterator(HistoryCf(order_), &history_it_)
                                  : Iterator(CurrentCf(order_), &current_it_);
      for (it->Seek(seek); it->Valid(); it->Next()) {
        std::string_view k(it->key().data(), it->key().size());
        if (!k.starts_with(eprefix)) break;
        std::string_view v(it->value().data(), it->value().size());
        if (v.size() != 8 || (history && k.size() < kEntityPrefixBytes + 8)) {
          status_ = absl::DataLossError(StrCat("malformed entry in ",
                                               IndexOrderName(order_),
                                               history ? " history" : ""));
          return nullptr;
        }
        if (!history && kept == max_entries) {
          auto oversized = IndexRecord::Make(
              key, std::vector<IndexRecord::Entry>(), std::string_view());
          oversized->read_at = db_.basis_tx();
          oversized->oversized = true;
          return oversized;
        }
        if (history && kept == kMaxHistoryEntries) {
          // Drop the partial history: current datoms only.
          const size_t first = entries.size() - kept;
          keys.resize(entries[first].key_offset);
          entries.resize(first);
          history_complete = false;
          break;
        }
        ++kept;
        if (history) {
          const std::string_view key = k.substr(0, k.size() - 8);
          IndexRecord::AppendEntry(
              key, static_cast<EntityId>(DecodeFixed64BE(k.substr(key.size()))),
              static_cast<EntityId>(DecodeFixed64BE(v)), &entries, &keys);
        } else {
          IndexRecord::AppendEntry(k, static_cast<EntityId>(DecodeFixed64BE(v)),
                                   0, &entries, &keys);
        }
      }
      if (!it->status().ok()) {
        status_ = absl::UnavailableError(
            StrCat("reading ", IndexOrderName(order_),
                   history ? " history" : "", ": ", it->status().ToString()));
        return nullptr;
      }
    }
    // Key order; for one key, its intervals by assertion, which puts the
    // current assertion (later than every retraction of it) last.
    auto key_of = [&](const IndexRecord::Entry& e) {
      return std::string_view(keys).substr(e.key_offset, e.key_size);
    };
    std::sort(entries.begin(), entries.end(),
              [&](const IndexRecord::Entry& a, const IndexRecord::Entry& b) {
                const std::string_view ka = key_of(a), kb = key_of(b);
                if (ka != kb) return ka < kb;
                return a.asserted < b.asserted;
              });
    auto record = IndexRecord::Make(key, entries, keys);
    record->read_at = db_.basis_tx();
    record->history_complete = history_complete;
    record->current_only = !with_history;
    return record;
  }

  const Db& db_;
  IndexOrder order_;
  RecordCache* cache_;
  EntityId t_;  // entries asserted at or before t_ and not retracted by it
  std::unique_ptr<rocksdb::Iterator> current_it_;
  std::unique_ptr<rocksdb::Iterator> history_it_;
  RecordRef record_;
  std::string prefix_;
  size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<DatomCursor> NewCachedCursor(
    const Db& db, IndexOrder order, RecordCache* cache, EntityId t,
    std::unique_ptr<DatomCursor> fallback) {
  return std::make_unique<CachedCursor>(db, order, cache, t,
                                        std::move(fallback));
}

}  // namespace mentat::storage::internal
