#include "execution/projector.h"

namespace mentat::query::execution {

using storage::Value;

Projector::Projector(ExecContext* ctx, const planner::QueryPlan& plan,
                     bool dedupe, ResultEmitter* emitter)
    : Operator(ctx),
      plan_(plan),
      emitter_(emitter),
      values_(plan.find.size()),
      memory_(ctx, "the result's distinct rows and groups") {
  for (const planner::FindPlan& f : plan.find) key_slots_.push_back(f.slot);
  for (planner::Slot s : plan.with) key_slots_.push_back(s);
  key_.resize(key_slots_.size());
  if (dedupe) seen_ = std::make_unique<RowSet>(static_cast<int>(key_.size()));
  if (plan.has_aggregates) {
    for (size_t c = 0; c < plan.find.size(); ++c) {
      if (plan.find[c].kind == FindElement::Kind::kAggregate) {
        aggregate_columns_.push_back(c);
        wants_distinct_.push_back(
            AggregateWantsDistinct(plan.find[c].aggregate));
        distinct_.push_back(wants_distinct_.back() ? std::make_unique<RowSet>(2)
                                                   : nullptr);
      } else {
        group_columns_.push_back(c);
      }
    }
    group_key_.resize(group_columns_.size());
    groups_ = std::make_unique<RowSet>(static_cast<int>(group_key_.size()));
  }
}

absl::Status Projector::UpdateMemory() {
  size_t bytes = seen_ != nullptr ? seen_->bytes() : 0;
  if (groups_ != nullptr) {
    bytes += groups_->bytes() + states_.size() * 64;
    for (const auto& d : distinct_) {
      if (d != nullptr) bytes += d->bytes();
    }
  }
  return memory_.Update(bytes);
}

absl::Status Projector::Aggregate(const Value* row) {
  for (size_t i = 0; i < group_columns_.size(); ++i) {
    group_key_[i] = row[plan_.find[group_columns_[i]].slot];
  }
  auto [g, inserted] = groups_->Insert(group_key_.data());
  const size_t n = aggregate_columns_.size();
  if (inserted) {
    for (size_t j = 0; j < n; ++j) {
      const planner::FindPlan& f = plan_.find[aggregate_columns_[j]];
      absl::StatusOr<std::unique_ptr<query::Aggregate>> a =
          MakeAggregate(f.aggregate, f.aggregate_n);
      if (!a.ok()) return a.status();
      states_.push_back(*std::move(a));
    }
  }
  for (size_t j = 0; j < n; ++j) {
    const Value& v = row[plan_.find[aggregate_columns_[j]].slot];
    if (wants_distinct_[j]) {
      Value pair[2] = {Value::Long(g), v};
      if (!distinct_[j]->Insert(pair).second) continue;
    }
    states_[static_cast<size_t>(g) * n + j]->Add(v);
  }
  return absl::OkStatus();
}

absl::Status Projector::Push(Batch& in) {
  for (size_t r = 0; r < in.size(); ++r) {
    const Value* row = in.row(r);
    if (seen_ != nullptr) {
      for (size_t i = 0; i < key_slots_.size(); ++i) {
        key_[i] = row[key_slots_[i]];
      }
      if (!seen_->Insert(key_.data()).second) continue;
    }
    absl::Status s;
    if (groups_ != nullptr) {
      s = Aggregate(row);
    } else {
      s = emitter_->AddRow(row);
      if (ctx_->stopped()) return s;
    }
    if (!s.ok()) return s;
    if ((++rows_ & 1023) == 0) {
      s = UpdateMemory();
      if (!s.ok()) return s;
    }
  }
  return UpdateMemory();
}

absl::Status Projector::Finish() {
  if (groups_ != nullptr) {
    const size_t n = aggregate_columns_.size();
    std::vector<edn::EdnValue> results(plan_.find.size());
    for (uint32_t g = 0; g < groups_->size() && !ctx_->stopped(); ++g) {
      const Value* key = groups_->row(g);
      for (size_t i = 0; i < group_columns_.size(); ++i) {
        values_[group_columns_[i]] = key[i];
      }
      // The emitter may take the vector whole.
      results.resize(plan_.find.size());
      for (size_t j = 0; j < n; ++j) {
        results[aggregate_columns_[j]] =
            states_[static_cast<size_t>(g) * n + j]->Result();
      }
      absl::Status s = emitter_->Add(values_.data(), &results);
      if (!s.ok()) return s;
      s = ctx_->Tick();
      if (!s.ok()) return s;
    }
  }
  return emitter_->Finish();
}

}  // namespace mentat::query::execution
