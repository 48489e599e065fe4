#include <memory>
#include <utility>

#include "internal/coding.h"
#include "internal/meta_keys.h"
#include "internal/store_core.h"
#include "internal/tx_state.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {

int64_t ReadTxInstantCeiling(rocksdb::DB* db,
                             rocksdb::ColumnFamilyHandle* avet) {
  std::string prefix;
  AvetKey::EncodePrefix(ids::kDbTxInstant, &prefix);
  // Past every key of the attribute: a value starts with its type tag,
  // and no tag is 0xFF.
  std::string past = prefix;
  past.append(24, '\xff');
  std::unique_ptr<rocksdb::Iterator> it(
      db->NewIterator(TotalOrderReadOptions(), avet));
  it->SeekForPrev(past);
  if (!it->status().ok()) return TxState::kUnknownCeiling;
  if (!it->Valid()) return INT64_MIN;
  const std::string_view key(it->key().data(), it->key().size());
  if (!key.starts_with(prefix)) return INT64_MIN;
  Datom d;
  if (!DecodeKey(IndexOrder::kAvet, key, &d).ok() ||
      d.v.type() != ValueType::kInstant) {
    return TxState::kUnknownCeiling;
  }
  return d.v.as_long();
}

void ApplyStatsDelta(const StatsDelta& delta, int low_cardinality_limit,
                     Statistics* stats, StatsDirty* dirty) {
  for (const auto& [a, d] : delta.by_attribute) {
    AttributeStats& s = stats->Mutable(a);
    dirty->attributes.insert(a);
    s.datoms += d.datoms;
    if (!s.values_tracked) {
      s.distinct_values += d.distinct;
      continue;
    }
    for (const auto& [v, n] : d.values) {
      if (n == 0) continue;
      auto it = s.value_counts.find(v);
      int64_t before = it == s.value_counts.end() ? 0 : it->second;
      int64_t after = before + n;
      if (after <= 0) {
        if (it != s.value_counts.end()) s.value_counts.erase(it);
      } else if (it == s.value_counts.end()) {
        s.value_counts.emplace(v, after);
      } else {
        it->second = after;
      }
      dirty->values[a].insert(v);
    }
    s.distinct_values = static_cast<int64_t>(s.value_counts.size());
    if (s.distinct_values > low_cardinality_limit) {
      // Too many values to count each: stop tracking, drop the keys that
      // are in meta or were about to be written.
      for (const auto& [v, n] : s.value_counts) {
        (void)n;
        dirty->dropped.emplace_back(a, v);
      }
      for (const Value& v : dirty->values[a]) dirty->dropped.emplace_back(a, v);
      dirty->values.erase(a);
      s.value_counts.clear();
      s.values_tracked = false;
    }
  }
}

void WriteStatsMeta(const Statistics& stats, const StatsDirty& dirty,
                    rocksdb::ColumnFamilyHandle* meta,
                    rocksdb::WriteBatchBase* batch) {
  for (const auto& [a, v] : dirty.dropped) {
    batch->Delete(meta, MetaValueCountKey(a, v)).PermitUncheckedError();
  }
  for (EntityId a : dirty.attributes) {
    const AttributeStats* s = stats.Find(a);
    std::string value = Fixed64BE(static_cast<uint64_t>(s->datoms));
    PutFixed64BE(static_cast<uint64_t>(s->distinct_values), &value);
    value.push_back(s->values_tracked ? 1 : 0);
    batch->Put(meta, MetaStatsKey(a), value).PermitUncheckedError();
  }
  for (const auto& [a, values] : dirty.values) {
    const AttributeStats* s = stats.Find(a);
    for (const Value& v : values) {
      auto it = s->value_counts.find(v);
      if (it == s->value_counts.end()) {
        batch->Delete(meta, MetaValueCountKey(a, v)).PermitUncheckedError();
      } else {
        batch
            ->Put(meta, MetaValueCountKey(a, v),
                  Fixed64BE(static_cast<uint64_t>(it->second)))
            .PermitUncheckedError();
      }
    }
  }
}

absl::Status LoadStatsMeta(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                           Statistics* stats) {
  std::unique_ptr<rocksdb::Iterator> it(
      db->NewIterator(rocksdb::ReadOptions(), meta));
  for (it->Seek(kMetaStatsPrefix); it->Valid(); it->Next()) {
    std::string_view k(it->key().data(), it->key().size());
    if (k.empty() || k[0] != kMetaStatsPrefix[0]) break;
    std::string_view v(it->value().data(), it->value().size());
    if (k.size() != 9 || v.size() != 17) {
      return absl::DataLossError("malformed statistics entry in meta");
    }
    AttributeStats& s =
        stats->Mutable(static_cast<EntityId>(DecodeFixed64BE(k.substr(1))));
    s.datoms = static_cast<int64_t>(DecodeFixed64BE(v));
    s.distinct_values = static_cast<int64_t>(DecodeFixed64BE(v.substr(8)));
    s.values_tracked = v[16] != 0;
  }
  for (it->Seek(kMetaValueCountPrefix); it->Valid(); it->Next()) {
    std::string_view k(it->key().data(), it->key().size());
    if (k.empty() || k[0] != kMetaValueCountPrefix[0]) break;
    std::string_view v(it->value().data(), it->value().size());
    if (k.size() < 10 || v.size() != 8) {
      return absl::DataLossError("malformed value-count entry in meta");
    }
    const EntityId a = static_cast<EntityId>(DecodeFixed64BE(k.substr(1)));
    std::string_view encoded = k.substr(9);
    Value value;
    absl::Status st = DecodeValue(&encoded, &value);
    if (!st.ok()) return st;
    // Each (attribute, value) has one key in meta.
    stats->Mutable(a).value_counts.emplace(
        std::move(value), static_cast<int64_t>(DecodeFixed64BE(v)));
  }
  if (!it->status().ok()) {
    return absl::UnavailableError("reading statistics: " +
                                  it->status().ToString());
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
