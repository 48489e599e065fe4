#include "execution/function_op.h"

#include <algorithm>

#include "builtins/builtin_table.h"
#include "execution/row_set.h"
#include "execution/tuple_codec.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/keys.h"

namespace mentat::query::execution {

using planner::FunctionSpec;
using storage::Value;

FunctionOp::FunctionOp(ExecContext* ctx, const planner::ScopePlan& scope,
                       const planner::Step& step)
    : Operator(ctx),
      scope_(scope),
      step_(step),
      f_(step.function),
      filters_(ctx),
      out_(scope.width()) {}

absl::Status FunctionOp::Init() {
  for (const planner::PlanTerm& t : f_.args) {
    absl::StatusOr<TermRef> r = MakeTermRef(ctx_, t, &owned_);
    if (!r.ok()) return r.status();
    args_.push_back(*r);
  }
  for (const planner::PlanTerm& t : f_.outputs) {
    absl::StatusOr<TermRef> r = MakeTermRef(ctx_, t, &owned_);
    if (!r.ok()) return r.status();
    outputs_.push_back(*r);
  }
  scratch_.resize(args_.size());
  absl::Status s = filters_.Init(step_.filters);
  if (!s.ok()) return s;
  const bool scalar = f_.binding == Binding::Kind::kScalar;
  switch (f_.kind) {
    case FunctionSpec::Kind::kBuiltin:
    case FunctionSpec::Kind::kGetElse:
      if (!scalar) {
        return absl::InvalidArgumentError(
            StrCat(step_.text,
                   ": the function returns one value; bind it "
                   "to one variable"));
      }
      break;
    case FunctionSpec::Kind::kTxIds:
      if (f_.binding != Binding::Kind::kCollection) {
        return absl::InvalidArgumentError(StrCat(
            step_.text, ": tx-ids returns a collection; bind it as [?tx ...]"));
      }
      break;
    case FunctionSpec::Kind::kFulltext:
      if (f_.binding != Binding::Kind::kRelation || outputs_.size() > 4) {
        return absl::InvalidArgumentError(
            StrCat(step_.text,
                   ": fulltext returns a relation; bind it as "
                   "[[?e ?v ?tx ?score]] (at most 4 columns)"));
      }
      break;
    case FunctionSpec::Kind::kTxData:
      if (f_.binding != Binding::Kind::kRelation || outputs_.size() > 5) {
        return absl::InvalidArgumentError(
            StrCat(step_.text,
                   ": tx-data returns a relation; bind it as "
                   "[[?e ?a ?v ?tx ?added]] (at most 5 columns)"));
      }
      break;
    case FunctionSpec::Kind::kGround: {
      // A ground collection or relation is a set.
      const size_t width = f_.binding == Binding::Kind::kRelation
                               ? static_cast<size_t>(f_.ground_width)
                               : 1;
      if (f_.binding == Binding::Kind::kCollection ||
          f_.binding == Binding::Kind::kRelation) {
        RowSet seen(static_cast<int>(width));
        for (size_t i = 0; i + width <= f_.ground_values.size(); i += width) {
          if (seen.Insert(&f_.ground_values[i]).second) {
            ground_.insert(ground_.end(), f_.ground_values.begin() + i,
                           f_.ground_values.begin() + i + width);
          }
        }
      } else {
        ground_ = f_.ground_values;
      }
      break;
    }
    default:
      break;
  }
  return absl::OkStatus();
}

absl::Status FunctionOp::EmitResult(const Value* row, const Value* values,
                                    size_t n) {
  Value* o = out_.AppendCopy(row);
  for (size_t i = 0; i < n && i < outputs_.size(); ++i) {
    const TermRef& t = outputs_[i];
    if (t.kind != TermRef::Kind::kSlot) continue;
    if (t.bound || t.check) {
      if (!JoinEq(o[t.slot], values[i])) {
        out_.PopBack();
        return absl::OkStatus();
      }
    } else {
      o[t.slot] = values[i];
    }
  }
  if (!filters_.Pass(o)) {
    out_.PopBack();
    return filters_.status();
  }
  return EmitIfFull(out_);
}

absl::Status FunctionOp::EmitMany(const Value* row,
                                  const std::vector<Value>& values,
                                  size_t width) {
  if (width == 0) return absl::OkStatus();
  for (size_t i = 0; i + width <= values.size(); i += width) {
    absl::Status s = EmitResult(row, &values[i], width);
    if (!s.ok()) return s;
    if (ctx_->stopped()) break;
  }
  return absl::OkStatus();
}

absl::Status FunctionOp::EmitValue(const Value* row, const Value& value,
                                   bool is_tuple) {
  switch (f_.binding) {
    case Binding::Kind::kScalar:
      return EmitResult(row, &value, 1);
    case Binding::Kind::kTuple:
    case Binding::Kind::kCollection: {
      if (!is_tuple) return absl::OkStatus();
      std::vector<Value> elements;
      bool has_nil = false;
      absl::Status s = DecodeTuple(value, &elements, &has_nil);
      if (!s.ok()) return s;
      if (f_.binding == Binding::Kind::kTuple) {
        // A nil element binds no variable: no row.
        if (has_nil || elements.size() != outputs_.size()) {
          return absl::OkStatus();
        }
        return EmitResult(row, elements.data(), elements.size());
      }
      return EmitMany(row, elements, 1);
    }
    case Binding::Kind::kRelation:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> FunctionOp::FirstValue(storage::EntityId e,
                                            storage::EntityId a, Value* out) {
  if (eavt_ == nullptr) {
    eavt_ = ctx_->view().NewCursor(storage::IndexOrder::kEavt);
  }
  key_.clear();
  storage::EavtKey::EncodePrefix(e, a, &key_);
  for (eavt_->Seek(key_); eavt_->Valid(); eavt_->Next()) {
    if (!eavt_->datom().added) continue;
    *out = eavt_->datom().v;
    return true;
  }
  if (!eavt_->status().ok()) return eavt_->status();
  return false;
}

absl::Status FunctionOp::Apply(const Value* row) {
  switch (f_.kind) {
    case FunctionSpec::Kind::kBuiltin: {
      const size_t n = args_.size();
      for (size_t i = 0; i < n; ++i) scratch_[i] = args_[i].Get(row);
      builtins::FunctionResult r =
          f_.builtin->fn(std::span<const Value>(scratch_.data(), n));
      if (!r.ok()) return r.status();
      if (!r->has_value()) return absl::OkStatus();
      return EmitResult(row, &**r, 1);
    }
    case FunctionSpec::Kind::kGround:
      switch (f_.binding) {
        case Binding::Kind::kScalar:
          return EmitValue(row, ground_[0], false);
        case Binding::Kind::kTuple:
          return EmitResult(row, ground_.data(), ground_.size());
        case Binding::Kind::kCollection:
          return EmitMany(row, ground_, 1);
        case Binding::Kind::kRelation:
          return EmitMany(row, ground_, static_cast<size_t>(f_.ground_width));
      }
      return absl::OkStatus();
    case FunctionSpec::Kind::kGetElse: {
      storage::EntityId e, a;
      Value v;
      bool found = false;
      if (AsEntity(args_[0].Get(row), &e) && AsEntity(args_[1].Get(row), &a)) {
        absl::StatusOr<bool> f = FirstValue(e, a, &v);
        if (!f.ok()) return f.status();
        found = *f;
      }
      return EmitResult(row, found ? &v : &args_[2].Get(row), 1);
    }
    case FunctionSpec::Kind::kGetSome: {
      storage::EntityId e;
      if (!AsEntity(args_[0].Get(row), &e)) return absl::OkStatus();
      for (size_t i = 1; i < args_.size(); ++i) {
        storage::EntityId a;
        if (!AsEntity(args_[i].Get(row), &a)) continue;
        Value pair[2];
        absl::StatusOr<bool> f = FirstValue(e, a, &pair[1]);
        if (!f.ok()) return f.status();
        if (!*f) continue;
        pair[0] = Value::Ref(a);
        if (f_.binding == Binding::Kind::kTuple) {
          if (outputs_.size() != 2) return absl::OkStatus();
          return EmitResult(row, pair, 2);
        }
        return EmitValue(row, EncodeTuple(pair, 2), true);
      }
      return absl::OkStatus();
    }
    case FunctionSpec::Kind::kTuple: {
      const size_t n = args_.size();
      for (size_t i = 0; i < n; ++i) scratch_[i] = args_[i].Get(row);
      if (f_.binding == Binding::Kind::kTuple) {
        if (outputs_.size() != n) return absl::OkStatus();
        return EmitResult(row, scratch_.data(), n);
      }
      return EmitValue(row, EncodeTuple(scratch_.data(), n), true);
    }
    case FunctionSpec::Kind::kUntuple: {
      const TermRef& arg = args_[0];
      // A tuple built in the query or a stored :db.type/tuple value.
      const bool is_tuple = arg.Get(row).type() == storage::ValueType::kTuple;
      if (!is_tuple) return absl::OkStatus();
      if (f_.binding == Binding::Kind::kScalar) {
        return EmitResult(row, &arg.Get(row), 1);
      }
      return EmitValue(row, arg.Get(row), true);
    }
    case FunctionSpec::Kind::kTxIds:
      return TxIds(row);
    case FunctionSpec::Kind::kTxData:
      return TxData(row);
    case FunctionSpec::Kind::kFulltext:
      return Fulltext(row);
  }
  return absl::OkStatus();
}

absl::Status FunctionOp::Push(Batch& in) {
  for (size_t i = 0; i < in.size() && !ctx_->stopped(); ++i) {
    absl::Status s = Apply(in.row(i));
    if (!s.ok()) return s;
    s = ctx_->Tick();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::execution
