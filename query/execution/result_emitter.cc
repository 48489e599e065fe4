#include "execution/result_emitter.h"

#include <algorithm>
#include <numeric>

#include "builtins/value_compare.h"
#include "execution/join_value.h"
#include "execution/term_ref.h"
#include "execution/tuple_codec.h"
#include "mentat/base/str_cat.h"

namespace mentat::query::execution {

using edn::EdnValue;
using storage::Value;

ResultEmitter::ResultEmitter(ExecContext* ctx, const planner::QueryPlan& plan,
                             RowSink* sink)
    : ctx_(ctx),
      plan_(plan),
      sink_(sink),
      width_(plan.find.size()),
      limit_(plan.limit) {
  if (plan.find_kind == FindSpec::Kind::kTuple ||
      plan.find_kind == FindSpec::Kind::kScalar) {
    limit_ = std::min<int64_t>(limit_.value_or(1), 1);
  }
}

absl::Status ResultEmitter::Init() {
  pulls_.resize(width_);
  plain_.resize(width_);
  for (size_t c = 0; c < width_; ++c) {
    const planner::FindPlan& f = plan_.find[c];
    plain_[c] =
        (f.kind == FindElement::Kind::kVariable) &&
        !(f.slot >= 0 && plan_.where.slots[static_cast<size_t>(f.slot)].tuple);
    if (f.kind != FindElement::Kind::kPull) continue;
    absl::StatusOr<std::unique_ptr<pull_internal::PullRunner>> p =
        pull_internal::PullRunner::Create(ctx_->view(), *f.pull, ctx_);
    if (!p.ok()) return p.status();
    pulls_[c] = *std::move(p);
    if (pulled_memory_ == nullptr) {
      pulled_memory_ = std::make_unique<MemoryHold>(
          ctx_, "the pulled values of a batch of rows");
    }
  }
  if (!plan_.order.empty()) {
    memory_ = std::make_unique<MemoryHold>(ctx_, "sorting the result (:order)");
  }
  batch_rows_ = std::max<size_t>(1, ctx_->options().batch_rows);
  all_plain_ = plan_.order.empty() && !limit_.has_value() &&
               plan_.offset <= 0 &&
               plan_.keys_kind == ParsedQuery::KeysKind::kNone;
  for (size_t c = 0; c < width_; ++c) {
    all_plain_ = all_plain_ && plain_[c] && plan_.find[c].slot >= 0;
    find_slots_.push_back(plan_.find[c].slot);
  }
  takes_values_ = all_plain_ && sink_->TakesValues();
  if (takes_values_) columns_.resize(width_);
  values_rows_ =
      sink_->TakesValues() && plan_.keys_kind == ParsedQuery::KeysKind::kNone;
  for (size_t c = 0; c < width_ && values_rows_; ++c) {
    values_rows_ =
        plain_[c] || plan_.find[c].kind == FindElement::Kind::kAggregate;
  }
  if (values_rows_) {
    aggregate_values_.resize(width_);
    row_cells_.resize(width_);
  }
  return absl::OkStatus();
}

absl::Status ResultEmitter::PlainRow(const Value* row) {
  if (takes_values_) {
    // No EDN value per cell, no batch: the sink encodes the row now (about
    // a sixth of a served q2's instructions went to the EDN values).
    ++emitted_;
    if (width_ == 1) {
      const Value* cell = &row[find_slots_[0]];
      return sink_->OnValueRow(&cell, 1);
    }
    for (size_t c = 0; c < width_; ++c) columns_[c] = &row[find_slots_[c]];
    return sink_->OnValueRow(columns_.data(), width_);
  }
  Row& out = pending_.emplace_back();
  out.reserve(width_);
  for (size_t c = 0; c < width_; ++c) {
    const Value& v = row[find_slots_[c]];
    pending_bytes_ += v.text().size();
    out.push_back(ValueToEdn(v));
  }
  ++emitted_;
  if (pending_.size() < batch_rows_ &&
      pending_bytes_ < ctx_->options().batch_bytes) {
    return absl::OkStatus();
  }
  absl::Status s = Flush();
  pending_.reserve(std::min<size_t>(batch_rows_, 1024));
  return s;
}

absl::StatusOr<EdnValue> ResultEmitter::Convert(size_t column, const Value& v) {
  const planner::FindPlan& f = plan_.find[column];
  if (f.kind == FindElement::Kind::kPull) {
    storage::EntityId e;
    if (!AsEntity(v, &e)) {
      return absl::InvalidArgumentError(
          StrCat(f.text, ": ", v.DebugString(), " is not an entity id"));
    }
    size_t bytes = 0;
    absl::StatusOr<EdnValue> pulled = pulls_[column]->Pull(e, &bytes);
    if (!pulled.ok()) return pulled;
    pulled_bytes_ += bytes;
    absl::Status held = pulled_memory_->Update(pulled_bytes_);
    if (!held.ok()) return held;
    return pulled;
  }
  return ValueToEdn(v);
}

absl::Status ResultEmitter::Output(const Value* const* columns,
                                   std::vector<EdnValue>* aggregates) {
  if (limit_.has_value() && emitted_ >= static_cast<uint64_t>(*limit_)) {
    ctx_->Stop();
    return absl::OkStatus();
  }
  if (skipped_ < plan_.offset) {
    ++skipped_;
    return absl::OkStatus();
  }
  if (values_rows_) {
    absl::Status sent;
    if (ValuesRow(columns, aggregates, &sent)) return sent;
  }
  // Built in place: a row moved into pending_ afterwards cost a tenth of
  // a large result's time (since() returns thousands of rows).
  Row& row = pending_.emplace_back();
  row.reserve(width_);
  for (size_t c = 0; c < width_; ++c) {
    if (plain_[c]) {
      pending_bytes_ += columns[c]->text().size();
      row.push_back(ValueToEdn(*columns[c]));
      continue;
    }
    if (plan_.find[c].kind == FindElement::Kind::kAggregate &&
        aggregates != nullptr) {
      row.push_back(std::move((*aggregates)[c]));
      continue;
    }
    absl::StatusOr<EdnValue> v = Convert(c, *columns[c]);
    if (!v.ok()) {
      pending_.pop_back();
      return v.status();
    }
    row.push_back(*std::move(v));
  }
  if (plan_.keys_kind != ParsedQuery::KeysKind::kNone) {
    std::vector<EdnValue> kv;
    kv.reserve(2 * width_);
    for (size_t c = 0; c < width_; ++c) {
      const std::string& k = plan_.keys[c];
      switch (plan_.keys_kind) {
        case ParsedQuery::KeysKind::kKeys:
          kv.push_back(EdnValue::Keyword(k));
          break;
        case ParsedQuery::KeysKind::kStrs:
          kv.push_back(EdnValue::String(k));
          break;
        default:
          kv.push_back(EdnValue::Symbol(k));
          break;
      }
      kv.push_back(std::move(row[c]));
    }
    row.clear();
    row.push_back(EdnValue::Map(std::move(kv)));
  }
  ++emitted_;
  const size_t batch = std::max<size_t>(1, ctx_->options().batch_rows);
  if (pending_.size() >= batch ||
      pending_bytes_ >= ctx_->options().batch_bytes) {
    absl::Status s = Flush();
    pending_.reserve(std::min<size_t>(batch, 1024));
    if (!s.ok()) return s;
  }
  if (limit_.has_value() && emitted_ >= static_cast<uint64_t>(*limit_)) {
    ctx_->Stop();
  }
  return absl::OkStatus();
}

bool ResultEmitter::ValuesRow(const Value* const* columns,
                              std::vector<EdnValue>* aggregates,
                              absl::Status* sent) {
  // The EDN values a row of counts would be made into, and the sink's
  // decoding of them, were a third of a served aggregate's own cost (q3:
  // five rows); rows that :order, :limit or :offset keep from PlainRow
  // went the same way. The values handed over are those ValueToEdn turns
  // into the same EDN, so the sink writes the same bytes either way.
  for (size_t c = 0; c < width_; ++c) {
    if (plain_[c]) {
      row_cells_[c] = columns[c];
      continue;
    }
    if (aggregates == nullptr) return false;
    const EdnValue& a = (*aggregates)[c];
    if (a.is_int()) {
      aggregate_values_[c] = Value::Long(a.as_int());
    } else if (a.is_float()) {
      aggregate_values_[c] = Value::Double(a.as_double());
    } else {
      return false;  // a bignum, a min of strings, a distinct set...
    }
    row_cells_[c] = &aggregate_values_[c];
  }
  // Rows go out in order: any that went as EDN before this one first.
  if (!pending_.empty()) {
    *sent = Flush();
    if (!sent->ok()) return true;
  }
  ++emitted_;
  *sent = sink_->OnValueRow(row_cells_.data(), width_);
  if (sent->ok() && limit_.has_value() &&
      emitted_ >= static_cast<uint64_t>(*limit_)) {
    ctx_->Stop();
  }
  return true;
}

absl::Status ResultEmitter::OutputValues(const Value* values,
                                         std::vector<EdnValue>* aggregates) {
  columns_.resize(width_);
  for (size_t c = 0; c < width_; ++c) columns_[c] = &values[c];
  return Output(columns_.data(), aggregates);
}

absl::Status ResultEmitter::Add(const Value* values,
                                std::vector<EdnValue>* aggregates) {
  if (plan_.order.empty()) return OutputValues(values, aggregates);
  for (size_t c = 0; c < width_; ++c) {
    sorted_values_.push_back(values[c]);
    bytes_ += ValueBytes(values[c]);
  }
  return Keep(aggregates);
}

absl::Status ResultEmitter::AddRow(const Value* row) {
  if (all_plain_) return PlainRow(row);
  if (plan_.order.empty()) {
    columns_.resize(width_);
    for (size_t c = 0; c < width_; ++c) {
      columns_[c] = &row[plan_.find[c].slot];
    }
    return Output(columns_.data(), nullptr);
  }
  for (size_t c = 0; c < width_; ++c) {
    const Value& v = row[plan_.find[c].slot];
    sorted_values_.push_back(v);
    bytes_ += ValueBytes(v);
  }
  return Keep(nullptr);
}

absl::Status ResultEmitter::Keep(std::vector<EdnValue>* aggregates) {
  sorted_aggregates_.push_back(aggregates != nullptr ? std::move(*aggregates)
                                                     : std::vector<EdnValue>());
  bytes_ += 64;
  if ((sorted_aggregates_.size() & 1023) == 0) return memory_->Update(bytes_);
  return absl::OkStatus();
}

absl::Status ResultEmitter::Finish() {
  if (!plan_.order.empty()) {
    absl::Status s = memory_->Update(bytes_);
    if (!s.ok()) return s;
    const size_t n = sorted_aggregates_.size();
    std::vector<uint32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    auto less = [&](uint32_t a, uint32_t b) {
      for (const planner::QueryPlan::Order& o : plan_.order) {
        const Value& x = sorted_values_[a * width_ + o.column];
        const Value& y = sorted_values_[b * width_ + o.column];
        auto c = builtins::TotalCompare(x, y);
        if (c != 0) return o.descending ? c > 0 : c < 0;
      }
      return a < b;
    };
    if (limit_.has_value() &&
        static_cast<uint64_t>(*limit_ + plan_.offset) < n) {
      const size_t k = static_cast<size_t>(*limit_ + plan_.offset);
      std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), less);
      idx.resize(k);
    } else {
      std::sort(idx.begin(), idx.end(), less);
    }
    for (uint32_t i : idx) {
      if (ctx_->stopped()) break;
      std::vector<EdnValue>* aggs =
          sorted_aggregates_[i].empty() ? nullptr : &sorted_aggregates_[i];
      s = OutputValues(&sorted_values_[i * width_], aggs);
      if (!s.ok()) return s;
    }
  }
  if (pending_.empty()) return absl::OkStatus();
  return Flush();
}

absl::Status ResultEmitter::Flush() {
  absl::Status s = sink_->OnRows(std::move(pending_));
  pending_.clear();
  pending_bytes_ = 0;
  if (pulled_memory_ != nullptr) {
    pulled_bytes_ = 0;
    pulled_memory_->Update(0).IgnoreError();  // a release cannot fail
  }
  return s;
}

}  // namespace mentat::query::execution
