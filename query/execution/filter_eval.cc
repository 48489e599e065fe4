#include "execution/filter_eval.h"

#include "builtins/builtin_table.h"
#include "mentat/storage/keys.h"

namespace mentat::query::execution {

absl::StatusOr<TermRef> MakeTermRef(ExecContext* ctx,
                                    const planner::PlanTerm& term,
                                    OwnedValues* owned) {
  TermRef r;
  switch (term.kind) {
    case planner::PlanTerm::Kind::kAbsent:
      return r;
    case planner::PlanTerm::Kind::kConst:
      r.kind = TermRef::Kind::kConst;
      r.value = &term.value;
      return r;
    case planner::PlanTerm::Kind::kSlot:
      r.kind = TermRef::Kind::kSlot;
      r.slot = term.slot;
      r.bound = term.bound;
      r.check = term.check;
      return r;
    case planner::PlanTerm::Kind::kLookup: {
      absl::StatusOr<std::optional<storage::EntityId>> e =
          ctx->view().LookupUnique(term.lookup_attr, term.value);
      if (!e.ok()) return e.status();
      owned->push_back(storage::Value::Ref(e->value_or(-1)));
      r.kind = TermRef::Kind::kConst;
      r.value = &owned->back();
      return r;
    }
  }
  return r;
}

absl::Status FilterEval::Init(
    const std::vector<planner::PredicateSpec>& specs) {
  size_t most = 0;
  for (const planner::PredicateSpec& spec : specs) {
    Pred p;
    p.kind = spec.kind;
    if (spec.kind == planner::PredicateSpec::Kind::kBuiltin) {
      p.fn = spec.builtin->fn;
    } else if (eavt_ == nullptr) {
      eavt_ = ctx_->view().NewCursor(storage::IndexOrder::kEavt);
    }
    for (const planner::PlanTerm& t : spec.args) {
      absl::StatusOr<TermRef> r = MakeTermRef(ctx_, t, &owned_);
      if (!r.ok()) return r.status();
      p.args.push_back(*r);
    }
    most = std::max(most, p.args.size());
    preds_.push_back(std::move(p));
  }
  scratch_.resize(most);
  return absl::OkStatus();
}

bool FilterEval::Missing(const Pred& p, const storage::Value* row) {
  storage::EntityId e, a;
  if (!AsEntity(p.args[0].Get(row), &e)) return true;
  if (!AsEntity(p.args[1].Get(row), &a)) return true;
  key_.clear();
  storage::EavtKey::EncodePrefix(e, a, &key_);
  eavt_->Seek(key_);
  if (!eavt_->status().ok()) {
    status_ = eavt_->status();
    return false;
  }
  if (!ctx_->history()) return !eavt_->Valid();
  // In history, "missing" means no assertion at all.
  for (; eavt_->Valid(); eavt_->Next()) {
    if (eavt_->datom().added) return false;
  }
  return true;
}

bool FilterEval::PassAll(const storage::Value* row) {
  for (const Pred& p : preds_) {
    if (p.kind == planner::PredicateSpec::Kind::kMissing) {
      if (!Missing(p, row)) return false;
      continue;
    }
    const size_t n = p.args.size();
    for (size_t i = 0; i < n; ++i) scratch_[i] = p.args[i].Get(row);
    if (!p.fn(std::span<const storage::Value>(scratch_.data(), n))) {
      return false;
    }
  }
  return true;
}

}  // namespace mentat::query::execution
