// History retention: Store::ApplyRetention turns "keep N days" into tx
// horizons, and HistoryRetentionFilter drops older retracted datoms when
// RocksDB compacts the history families.

#include <chrono>

#include "internal/coding.h"
#include "internal/meta_keys.h"
#include "internal/store_core.h"
#include "internal/transactor.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"

namespace mentat::storage {
namespace internal {

bool HistoryRetentionFilter::Filter(int /*level*/, const rocksdb::Slice& key,
                                    const rocksdb::Slice& value,
                                    std::string* /*new_value*/,
                                    bool* /*value_changed*/) const {
  // Key: order key | asserted tx (8); value: retracting tx (8). The
  // attribute sits at byte 0 (AEVT, AVET) or byte 8 (EAVT, VAET).
  if (value.size() != 8 || key.size() < 24) return false;
  const size_t a_offset =
      (order_ == IndexOrder::kEavt || order_ == IndexOrder::kVaet) ? 8 : 0;
  const EntityId a = static_cast<EntityId>(
      DecodeFixed64BE(std::string_view(key.data() + a_offset, 8)));
  const int64_t horizon = state_->HorizonFor(a);
  if (horizon <= 0) return false;
  const EntityId retracted =
      static_cast<EntityId>(DecodeFixed64BE(std::string_view(value.data(), 8)));
  return retracted <= horizon;
}

}  // namespace internal

namespace {

constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000000;

}  // namespace

absl::Status Store::ApplyRetention(int64_t now_micros, bool compact) {
  auto db = Latest();
  auto horizon_for_days = [&](int days) -> int64_t {
    if (days <= 0) return 0;
    auto tx = db->TxAtOrBeforeInstant(now_micros - days * kMicrosPerDay);
    return tx ? *tx : 0;
  };
  const int64_t database_horizon =
      horizon_for_days(options_.history_retention_days);
  auto per = std::make_shared<absl::flat_hash_map<EntityId, int64_t>>();
  for (const auto& [ident, days] : options_.attribute_retention_days) {
    const Attribute* attr = db->schema().FindAttribute(ident);
    if (attr == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("retention names unknown attribute :", ident));
    }
    (*per)[attr->id] = horizon_for_days(days);
  }
  // Horizons only move forward: history once dropped stays dropped.
  const int64_t previous = core_->retention->database_horizon.load();
  core_->retention->database_horizon.store(
      std::max(previous, database_horizon));
  core_->retention->attribute_horizons.store(std::move(per));

  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status s = core_->db->Put(
      wo, core_->cf(internal::Cf::kMeta), internal::kMetaRetentionKey,
      internal::Fixed64BE(
          static_cast<uint64_t>(core_->retention->database_horizon.load())));
  if (!s.ok()) {
    return absl::UnavailableError(
        StrCat("saving the retention horizon: ", s.ToString()));
  }
  if (!compact) return absl::OkStatus();
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction =
      rocksdb::BottommostLevelCompaction::kForce;
  for (int i = 0; i < 4; ++i) {
    s = core_->db->CompactRange(
        options, core_->cf(internal::HistoryCf(static_cast<IndexOrder>(i))),
        nullptr, nullptr);
    if (!s.ok()) {
      return absl::UnavailableError(
          StrCat("compacting history: ", s.ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage
