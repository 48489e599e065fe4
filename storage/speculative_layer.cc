#include "internal/speculative_layer.h"

#include "mentat/storage/keys.h"

namespace mentat::storage::internal {
namespace {

class LayerCursor final : public DatomCursor {
 public:
  LayerCursor(std::unique_ptr<DatomCursor> base, const SpeculativeLayer& layer,
              IndexOrder order, LayerMode mode, EntityId since_t)
      : base_(std::move(base)),
        keys_(layer.keys[static_cast<int>(order)]),
        tx_(layer.tx),
        order_(order),
        mode_(mode),
        since_t_(since_t),
        it_(keys_.end()) {}

  void Seek(std::string_view prefix) override {
    prefix_.assign(prefix);
    base_->Seek(prefix);
    it_ = keys_.lower_bound(prefix);
    Settle();
  }
  void SeekWithin(std::string_view target) override {
    base_->SeekWithin(target);
    it_ = keys_.lower_bound(target);
    Settle();
  }
  bool Valid() const override { return valid_; }
  void Next() override {
    if (from_base_) {
      base_->Next();
    } else {
      ++it_;
    }
    Settle();
  }
  const Datom& datom() const override {
    return from_base_ ? base_->datom() : datom_;
  }
  std::string_view key() const override {
    return from_base_ ? base_->key() : std::string_view(it_->first);
  }
  void SetKeysOnly(bool keys_only) override { base_->SetKeysOnly(keys_only); }
  void SetSkipValue(bool skip_value) override {
    base_->SetSkipValue(skip_value);
  }
  void SetBulk(bool bulk) override { base_->SetBulk(bulk); }
  void Prefetch(std::string_view prefix, int step) override {
    base_->Prefetch(prefix, step);
  }
  [[nodiscard]] absl::Status status() const override {
    return status_.ok() ? base_->status() : status_;
  }

 private:
  // Whether the layer's entry at it_ is a datom of this view.
  bool Shows() const {
    const bool asserted = it_->second == LayerOp::kAsserted;
    switch (mode_) {
      case LayerMode::kCurrent:
        return asserted;
      case LayerMode::kSince:
        return asserted && tx_ > since_t_;
      case LayerMode::kHistory:
        return it_->second != LayerOp::kRetractedNoHistory;
    }
    return false;
  }
  // Whether the base's datoms of the key at it_ are left out.
  bool HidesBase() const {
    return mode_ != LayerMode::kHistory ||
           it_->second == LayerOp::kRetractedNoHistory;
  }

  void Settle() {
    valid_ = false;
    for (;;) {
      const bool base_valid = base_->Valid();
      const bool layer_valid =
          it_ != keys_.end() &&
          std::string_view(it_->first).starts_with(prefix_);
      if (!base_valid && !layer_valid) return;
      if (base_valid) {
        const std::string_view base_key = base_->key();
        // History shows the base's datoms of a key before the layer's
        // (later) one; the other modes replace or hide them.
        if (!layer_valid || base_key < it_->first ||
            (base_key == it_->first && !HidesBase())) {
          from_base_ = true;
          valid_ = true;
          return;
        }
        if (base_key == it_->first) {
          base_->Next();
          continue;
        }
      }
      if (!Shows()) {
        ++it_;
        continue;
      }
      absl::Status s = DecodeKey(order_, it_->first, &datom_);
      if (!s.ok()) {
        status_ = s;
        return;
      }
      datom_.tx = tx_;
      datom_.added = it_->second == LayerOp::kAsserted;
      from_base_ = false;
      valid_ = true;
      return;
    }
  }

  std::unique_ptr<DatomCursor> base_;
  const SpeculativeLayer::Keys& keys_;
  EntityId tx_;
  IndexOrder order_;
  LayerMode mode_;
  EntityId since_t_;
  SpeculativeLayer::Keys::const_iterator it_;
  std::string prefix_;
  Datom datom_;
  bool valid_ = false;
  bool from_base_ = false;
  absl::Status status_;
};

}  // namespace

std::unique_ptr<DatomCursor> NewLayerCursor(std::unique_ptr<DatomCursor> base,
                                            const SpeculativeLayer& layer,
                                            IndexOrder order, LayerMode mode,
                                            EntityId since_t) {
  return std::make_unique<LayerCursor>(std::move(base), layer, order, mode,
                                       since_t);
}

SpeculativeBatch::SpeculativeBatch(DbView parent)
    : parent_(std::move(parent)),
      layer_(std::make_shared<SpeculativeLayer>()) {}

void SpeculativeBatch::PutCurrent(IndexOrder order, std::string_view key,
                                  EntityId tx) {
  layer_->tx = tx;
  layer_->keys[static_cast<int>(order)].insert_or_assign(std::string(key),
                                                         LayerOp::kAsserted);
}

void SpeculativeBatch::DeleteCurrent(IndexOrder order, std::string_view key) {
  // No history until PutRaw writes the retraction's history key.
  layer_->keys[static_cast<int>(order)].insert_or_assign(
      std::string(key), LayerOp::kRetractedNoHistory);
}

void SpeculativeBatch::PutRaw(Cf cf, std::string_view key,
                              std::string_view value) {
  (void)value;
  // Postings are kept so that a fulltext search of the speculative Db
  // finds the values it asserted; log and meta are not needed.
  if (cf == Cf::kFulltext) {
    layer_->postings.emplace(key);
    return;
  }
  for (int o = 0; o < 4; ++o) {
    // A history key is the retracted datom's key and its asserting tx.
    if (cf != HistoryCf(static_cast<IndexOrder>(o)) || key.size() < 8) continue;
    auto it = layer_->keys[o].find(key.substr(0, key.size() - 8));
    if (it != layer_->keys[o].end()) it->second = LayerOp::kRetracted;
  }
}

absl::StatusOr<std::optional<EntityId>> SpeculativeBatch::Get(
    IndexOrder order, std::string_view key) {
  const auto& own = layer_->keys[static_cast<int>(order)];
  auto it = own.find(key);
  if (it != own.end()) {
    if (it->second != LayerOp::kAsserted) return std::optional<EntityId>();
    return std::optional<EntityId>(layer_->tx);
  }
  std::unique_ptr<DatomCursor> cursor = parent_.NewCursor(order);
  cursor->Seek(key);
  if (!cursor->status().ok()) return cursor->status();
  if (!cursor->Valid() || cursor->key() != key) {
    return std::optional<EntityId>();
  }
  return std::optional<EntityId>(cursor->datom().tx);
}

absl::Status SpeculativeBatch::Scan(
    IndexOrder order, std::string_view prefix,
    const std::function<bool(const Datom&)>& fn) {
  std::unique_ptr<DatomCursor> cursor = NewLayerCursor(
      parent_.NewCursor(order), *layer_, order, LayerMode::kCurrent, 0);
  for (cursor->Seek(prefix); cursor->Valid(); cursor->Next()) {
    if (!fn(cursor->datom())) break;
  }
  return cursor->status();
}

std::shared_ptr<const SpeculativeLayer> SpeculativeBatch::TakeLayer(
    EntityId tx) {
  layer_->tx = tx;
  return std::move(layer_);
}

}  // namespace mentat::storage::internal
