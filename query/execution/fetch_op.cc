#include "execution/fetch_op.h"

#include <algorithm>
#include <utility>

#include "execution/probe_hints.h"
#include "execution/term_ref.h"
#include "mentat/storage/keys.h"

namespace mentat::query::execution {

using storage::Value;

namespace {
// Datoms to step over with Next before a SeekWithin is cheaper.
constexpr int kMaxSkips = 6;
}  // namespace

FetchOp::FetchOp(ExecContext* ctx, const planner::ScopePlan& scope,
                 const planner::Step& step, std::vector<planner::Slot> live)
    : Operator(ctx),
      step_(step),
      entity_slot_(step.fetch.front().e.slot),
      live_(std::move(live)),
      filters_(ctx),
      out_(scope.width()) {}

absl::Status FetchOp::Init() {
  for (const planner::PatternSpec& p : step_.fetch) {
    attrs_.push_back(p.attr->id);
    out_slots_.push_back(p.v.is_slot() ? p.v.slot : planner::kNoSlot);
  }
  std::sort(live_.begin(), live_.end());
  live_.erase(std::unique(live_.begin(), live_.end()), live_.end());
  live_and_out_ = live_;
  for (const planner::Slot s : out_slots_) {
    if (s != planner::kNoSlot) live_and_out_.push_back(s);
  }
  std::sort(live_and_out_.begin(), live_and_out_.end());
  live_and_out_.erase(std::unique(live_and_out_.begin(), live_and_out_.end()),
                      live_and_out_.end());
  values_.resize(attrs_.size());
  cursor_ = ctx_->view().NewCursor(storage::IndexOrder::kEavt);
  return filters_.Init(step_.filters);
}

absl::Status FetchOp::EmitCombinations(std::vector<Value>& row, size_t attr) {
  if (attr == attrs_.size()) {
    Value* o = out_.AppendCopy(row.data(), live_and_out_);
    if (!filters_.Pass(o)) {
      out_.PopBack();
      return filters_.status();
    }
    return EmitIfFull(out_);
  }
  for (const Value& v : values_[attr]) {
    if (out_slots_[attr] != planner::kNoSlot) row[out_slots_[attr]] = v;
    absl::Status s = EmitCombinations(row, attr + 1);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status FetchOp::Fetch(const Value* row) {
  storage::EntityId e;
  if (!AsEntity(row[entity_slot_], &e)) return absl::OkStatus();
  prefix_.clear();
  storage::EavtKey::EncodePrefix(e, &prefix_);
  cursor_->Seek(prefix_);
  // Outside history an attribute has one datom per entity here: its value
  // goes straight into the output row (a string assigned into the
  // batch's reused buffer), which is dropped again if one is missing.
  const bool single = !ctx_->history();
  Value* o = single ? out_.AppendCopy(row, live_) : nullptr;
  for (size_t i = 0; i < attrs_.size(); ++i) {
    const storage::EntityId want = attrs_[i];
    int skips = 0;
    while (cursor_->Valid() && cursor_->datom().a < want) {
      if (++skips > kMaxSkips) {
        target_ = prefix_;
        storage::AppendEntityId(want, &target_);
        cursor_->SeekWithin(target_);
        break;
      }
      cursor_->Next();
    }
    if (single) {
      if (!cursor_->Valid() || cursor_->datom().a != want) {
        out_.PopBack();
        return cursor_->status();
      }
      if (out_slots_[i] != planner::kNoSlot) {
        o[out_slots_[i]] = cursor_->datom().v;
      }
      continue;
    }
    values_[i].clear();
    while (cursor_->Valid() && cursor_->datom().a == want) {
      values_[i].push_back(cursor_->datom().v);
      cursor_->Next();
    }
    if (!cursor_->status().ok()) return cursor_->status();
    if (values_[i].empty()) return absl::OkStatus();
  }
  if (single) {
    if (!filters_.Pass(o)) {
      out_.PopBack();
      return filters_.status();
    }
    return EmitIfFull(out_);
  }
  // History: an attribute can have several datoms.
  std::vector<Value> combination(row, row + out_.width());
  return EmitCombinations(combination, 0);
}

absl::Status FetchOp::Push(Batch& in) {
  // The entity cache's slots and records of the rows ahead, cold after a
  // served call's RPC work.
  auto hint = [&](size_t r, int step) {
    storage::EntityId e;
    if (!AsEntity(in.row(r)[entity_slot_], &e)) return;
    hint_prefix_.clear();
    storage::EavtKey::EncodePrefix(e, &hint_prefix_);
    cursor_->Prefetch(hint_prefix_, step);
  };
  ProbeHints::Start(in.size(), hint);
  for (size_t r = 0; r < in.size() && !ctx_->stopped(); ++r) {
    ProbeHints::Before(r, in.size(), hint);
    absl::Status s = Fetch(in.row(r));
    if (!s.ok()) return s;
    s = ctx_->Tick();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::execution
