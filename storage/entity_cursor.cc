// EAVT reads of one entity served from the EntityCache (see
// internal/entity_cache.h): the first seek into an entity reads all its
// keys, current and retracted, from the Db's snapshot; later seeks, by any
// reader, probe the cache instead of RocksDB.

#include <algorithm>

#include "internal/coding.h"
#include "internal/cursors.h"
#include "internal/entity_cache.h"
#include "mentat/storage/str_cat.h"

namespace mentat::storage::internal {
namespace {

// Entities with more current keys than this are read from RocksDB each
// time: one read of a huge cardinality-many attribute should not flush the
// cache.
constexpr size_t kMaxRecordEntries = 1024;
// A record keeps at most this many retracted datoms. An entity changed
// more often than that (a counter) keeps only its current datoms, so that
// reading it after each change does not read its whole history again.
constexpr size_t kMaxHistoryEntries = 64;

class EntityCachedCursor : public DatomCursor {
 public:
  EntityCachedCursor(const Db& db, EntityCache* cache, EntityId t,
                     std::unique_ptr<DatomCursor> fallback)
      : db_(db), cache_(cache), t_(t), fallback_(std::move(fallback)) {}

  void Seek(std::string_view prefix) override {
    valid_ = false;
    record_.reset();
    if (prefix.size() < kEntityPrefixBytes) {
      return UseFallback(prefix);
    }
    const EntityId e = static_cast<EntityId>(
        DecodeFixed64BE(prefix.substr(0, kEntityPrefixBytes)));
    std::shared_ptr<const EntityRecord> record = cache_->Find(e);
    if (!record) {
      record = Load(e, prefix);
      if (!record) return;  // an error, in status_
      cache_->Insert(e, db_.basis_tx(), record);
    }
    if (record->oversized ||
        (!record->history_complete && t_ < record->read_at)) {
      return UseFallback(prefix);
    }
    fallback_mode_ = false;
    record_ = std::move(record);
    prefix_.assign(prefix);
    SeekInRecord(prefix);
  }

  void SeekWithin(std::string_view target) override {
    if (fallback_mode_) return fallback_->SeekWithin(target);
    if (record_) SeekInRecord(target);
  }

  bool Valid() const override {
    return fallback_mode_ ? fallback_->Valid() : valid_;
  }

  void Next() override {
    if (fallback_mode_) return fallback_->Next();
    ++pos_;
    Settle();
  }

  const Datom& datom() const override {
    return fallback_mode_ ? fallback_->datom() : datom_;
  }
  std::string_view key() const override {
    return fallback_mode_ ? fallback_->key() : key_;
  }
  void SetKeysOnly(bool keys_only) override {
    keys_only_ = keys_only;
    fallback_->SetKeysOnly(keys_only);
  }
  absl::Status status() const override {
    if (!status_.ok()) return status_;
    return fallback_->status();
  }

 private:
  void UseFallback(std::string_view prefix) {
    fallback_mode_ = true;
    fallback_->Seek(prefix);
  }

  void SeekInRecord(std::string_view target) {
    const auto& entries = record_->entries;
    auto it = std::lower_bound(
        entries.begin(), entries.end(), target,
        [&](const EntityRecord::Entry& entry, std::string_view t) {
          return record_->key(entry) < t;
        });
    pos_ = static_cast<size_t>(it - entries.begin());
    Settle();
  }

  // Moves to the first entry at or after pos_ that is visible at t_ and
  // still under the prefix.
  void Settle() {
    valid_ = false;
    const auto& entries = record_->entries;
    for (; pos_ < entries.size(); ++pos_) {
      const EntityRecord::Entry& entry = entries[pos_];
      const std::string_view k = record_->key(entry);
      if (!k.starts_with(prefix_)) return;
      if (entry.asserted > t_ || (entry.retracted != 0 && entry.retracted <= t_))
        continue;
      key_ = k;
      if (!keys_only_) {
        absl::Status s = DecodeKey(IndexOrder::kEavt, k, &datom_);
        if (!s.ok()) {
          status_ = s;
          return;
        }
        datom_.tx = entry.asserted;
        datom_.added = true;
      }
      valid_ = true;
      return;
    }
  }

  rocksdb::Iterator* Iterator(Cf cf, std::unique_ptr<rocksdb::Iterator>* it) {
    if (!*it) {
      rocksdb::ReadOptions ro;
      ro.snapshot = db_.snapshot();
      ro.ignore_range_deletions = true;
      ro.prefix_same_as_start = true;
      it->reset(db_.core().db->NewIterator(ro, db_.core().cf(cf)));
    }
    return it->get();
  }

  // Reads every key of entity e (current and history) from the snapshot.
  // Null on an error (status_ says which).
  std::shared_ptr<const EntityRecord> Load(EntityId e,
                                           std::string_view prefix) {
    auto record = std::make_shared<EntityRecord>();
    record->read_at = db_.basis_tx();
    const std::string_view eprefix = prefix.substr(0, kEntityPrefixBytes);
    const rocksdb::Slice seek(eprefix.data(), eprefix.size());
    for (const bool history : {false, true}) {
      size_t kept = 0;
      rocksdb::Iterator* it =
          history ? Iterator(Cf::kEavtHist, &history_it_)
                  : Iterator(Cf::kEavt, &current_it_);
      for (it->Seek(seek); it->Valid(); it->Next()) {
        std::string_view k(it->key().data(), it->key().size());
        if (!k.starts_with(eprefix)) break;
        std::string_view v(it->value().data(), it->value().size());
        if (v.size() != 8 || (history && k.size() < kEntityPrefixBytes + 8)) {
          status_ = absl::DataLossError(StrCat(
              "malformed entry in eavt", history ? " history" : "",
              " of entity ", e));
          return nullptr;
        }
        if (!history && kept == kMaxRecordEntries) {
          auto oversized = std::make_shared<EntityRecord>();
          oversized->oversized = true;
          return oversized;
        }
        if (history && kept == kMaxHistoryEntries) {
          // Drop the partial history: current datoms only.
          const size_t first = record->entries.size() - kept;
          record->keys.resize(record->entries[first].key_offset);
          record->entries.resize(first);
          record->history_complete = false;
          break;
        }
        ++kept;
        EntityRecord::Entry entry;
        entry.key_offset = static_cast<uint32_t>(record->keys.size());
        if (history) {
          const std::string_view key = k.substr(0, k.size() - 8);
          entry.key_size = static_cast<uint32_t>(key.size());
          entry.asserted =
              static_cast<EntityId>(DecodeFixed64BE(k.substr(key.size())));
          entry.retracted = static_cast<EntityId>(DecodeFixed64BE(v));
          record->keys.append(key);
        } else {
          entry.key_size = static_cast<uint32_t>(k.size());
          entry.asserted = static_cast<EntityId>(DecodeFixed64BE(v));
          entry.retracted = 0;
          record->keys.append(k);
        }
        record->entries.push_back(entry);
      }
      if (!it->status().ok()) {
        status_ = absl::UnavailableError(
            StrCat("reading eavt", history ? " history" : "", " of entity ", e,
                   ": ", it->status().ToString()));
        return nullptr;
      }
    }
    // Key order; for one key, its intervals by assertion, which puts the
    // current assertion (later than every retraction of it) last.
    std::sort(record->entries.begin(), record->entries.end(),
              [&](const EntityRecord::Entry& a, const EntityRecord::Entry& b) {
                const std::string_view ka = record->key(a), kb = record->key(b);
                if (ka != kb) return ka < kb;
                return a.asserted < b.asserted;
              });
    record->keys.shrink_to_fit();
    record->entries.shrink_to_fit();
    return record;
  }

  const Db& db_;
  EntityCache* cache_;
  EntityId t_;  // entries asserted at or before t_ and not retracted by it
  std::unique_ptr<DatomCursor> fallback_;
  bool fallback_mode_ = false;
  std::unique_ptr<rocksdb::Iterator> current_it_;
  std::unique_ptr<rocksdb::Iterator> history_it_;
  std::shared_ptr<const EntityRecord> record_;
  std::string prefix_;
  size_t pos_ = 0;
  Datom datom_;
  std::string_view key_;
  bool valid_ = false;
  bool keys_only_ = false;
  absl::Status status_;
};

}  // namespace

std::unique_ptr<DatomCursor> NewEntityCachedCursor(
    const Db& db, EntityId t, std::unique_ptr<DatomCursor> fallback) {
  return std::make_unique<EntityCachedCursor>(db, db.core().entity_cache.get(),
                                              t, std::move(fallback));
}

}  // namespace mentat::storage::internal
