#include "internal/batch_reader.h"

#include "mentat/storage/str_cat.h"
#include "internal/coding.h"

namespace mentat::storage::internal {

BatchReader::BatchReader(const StoreCore* core,
                         rocksdb::WriteBatchWithIndex* batch)
    : core_(core), batch_(batch) {}

BatchReader::~BatchReader() { Reset(); }

void BatchReader::Reset() {
  for (auto& it : iterators_) it.reset();
}

absl::StatusOr<std::optional<EntityId>> BatchReader::Get(
    IndexOrder order, std::string_view key) {
  std::string value;
  rocksdb::Status s = batch_->GetFromBatchAndDB(
      core_->db, rocksdb::ReadOptions(), core_->cf(CurrentCf(order)),
      rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return std::optional<EntityId>();
  if (!s.ok()) {
    return absl::UnavailableError(
        StrCat("reading ", IndexOrderName(order), ": ", s.ToString()));
  }
  if (value.size() != 8) {
    return absl::DataLossError(StrCat("bad tx under a key of ",
                                            IndexOrderName(order)));
  }
  return std::optional<EntityId>(static_cast<EntityId>(DecodeFixed64BE(value)));
}

absl::Status BatchReader::Scan(IndexOrder order, std::string_view prefix,
                               const std::function<bool(const Datom&)>& fn) {
  auto& it = iterators_[static_cast<int>(order)];
  if (!it) {
    rocksdb::ColumnFamilyHandle* cf = core_->cf(CurrentCf(order));
    it.reset(batch_->NewIteratorWithBase(
        cf, core_->db->NewIterator(rocksdb::ReadOptions(), cf)));
  }
  Datom d;
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid();
       it->Next()) {
    rocksdb::Slice k = it->key();
    std::string_view key(k.data(), k.size());
    if (key.substr(0, prefix.size()) != prefix) break;
    absl::Status s = DecodeKey(order, key, &d);
    if (!s.ok()) return s;
    rocksdb::Slice v = it->value();
    if (v.size() != 8) {
      return absl::DataLossError(StrCat("bad tx under a key of ",
                                              IndexOrderName(order)));
    }
    d.tx = static_cast<EntityId>(DecodeFixed64BE(std::string_view(v.data(), 8)));
    d.added = true;
    if (!fn(d)) break;
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(StrCat(
        "scanning ", IndexOrderName(order), ": ", it->status().ToString()));
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
