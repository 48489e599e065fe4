#include "execution/call_op.h"

namespace mentat::query::execution {

using storage::Value;

CallOp::CallOp(ExecContext* ctx, const std::vector<planner::TablePlan>& tables,
               const planner::ScopePlan& scope, const planner::Step& step)
    : Operator(ctx),
      tables_(tables),
      step_(step),
      filters_(ctx),
      out_(scope.width()) {}

absl::Status CallOp::Init() {
  for (const planner::PlanTerm& t : step_.call.args) {
    absl::StatusOr<TermRef> r = MakeTermRef(ctx_, t, &owned_);
    if (!r.ok()) return r.status();
    args_.push_back(*r);
  }
  key_pos_ = tables_[static_cast<size_t>(step_.call.table)].key_positions();
  engine_ = std::make_unique<FixpointEngine>(ctx_, tables_);
  return filters_.Init(step_.filters);
}

absl::Status CallOp::EmitRow(const Value* row) {
  Value* o = out_.AppendCopy(row);
  if (!filters_.Pass(o)) {
    out_.PopBack();
    return filters_.status();
  }
  return EmitIfFull(out_);
}

absl::Status CallOp::EmitJoined(const Value* row, const Value* answer) {
  Value* o = out_.AppendCopy(row);
  for (size_t i = 0; i < args_.size(); ++i) {
    const TermRef& t = args_[i];
    if (t.kind != TermRef::Kind::kSlot || t.bound) continue;
    if (t.check) {
      if (!JoinEq(o[t.slot], answer[i])) {
        out_.PopBack();
        return absl::OkStatus();
      }
    } else {
      o[t.slot] = answer[i];
    }
  }
  if (!filters_.Pass(o)) {
    out_.PopBack();
    return filters_.status();
  }
  return EmitIfFull(out_);
}

absl::Status CallOp::Push(Batch& in) {
  const size_t k = key_pos_.size();
  keys_.resize(in.size() * k);
  for (size_t r = 0; r < in.size(); ++r) {
    const Value* row = in.row(r);
    Value* key = keys_.data() + r * k;
    for (size_t j = 0; j < k; ++j) {
      key[j] = args_[static_cast<size_t>(key_pos_[j])].Get(row);
    }
    absl::Status s = engine_->AddDemand(step_.call.table, key);
    if (!s.ok()) return s;
  }
  absl::Status s = engine_->Solve();
  if (!s.ok()) return s;
  TableState& t = engine_->state(step_.call.table);
  for (size_t r = 0; r < in.size() && !ctx_->stopped(); ++r) {
    const Value* row = in.row(r);
    const Value* key = keys_.data() + r * k;
    t.Lookup(key, &found_);
    if (step_.call.anti) {
      if (found_.empty()) {
        s = EmitRow(row);
        if (!s.ok()) return s;
      }
      continue;
    }
    for (uint32_t a : found_) {
      s = EmitJoined(row, t.answers.row(a));
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status FilterOp::Push(Batch& in) {
  size_t kept = 0;
  for (size_t r = 0; r < in.size(); ++r) {
    if (!filters_.Pass(in.row(r))) continue;
    if (kept != r) in.MoveRow(r, kept);
    ++kept;
  }
  if (!filters_.status().ok()) return filters_.status();
  in.Truncate(kept);
  return Emit(in);
}

}  // namespace mentat::query::execution
