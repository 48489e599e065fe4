#include "execution/input_binder.h"

#include "execution/row_set.h"
#include "execution/tuple_codec.h"
#include "mentat/base/str_cat.h"
#include "planner/edn_to_value.h"

namespace mentat::query::execution {

using edn::EdnValue;
using planner::SlotInfo;
using storage::Value;

namespace {

std::string_view Msg(const absl::Status& s) {
  return std::string_view(s.message().data(), s.message().size());
}

[[nodiscard]] absl::Status InputError(size_t index,
                                      const planner::InputPlan& in,
                                      std::string_view message) {
  return absl::InvalidArgumentError(
      StrCat("input ", index + 1, " (", in.text, "): ", message));
}

// One value for a slot. False: it names nothing, so it matches nothing.
[[nodiscard]] absl::StatusOr<bool> Convert(ExecContext* ctx, const EdnValue& v,
                                           const SlotInfo& info, Value* out) {
  const storage::Schema& schema = ctx->schema();
  if (info.entity) {
    absl::StatusOr<planner::EntityConst> e = planner::EdnToEntity(v, schema);
    if (!e.ok()) {
      return absl::InvalidArgumentError(
          StrCat(info.name, " is used as an entity: ", Msg(e.status())));
    }
    switch (e->kind) {
      case planner::EntityConst::Kind::kId:
        *out = Value::Ref(e->id);
        return true;
      case planner::EntityConst::Kind::kNone:
        return false;
      case planner::EntityConst::Kind::kLookup: {
        absl::StatusOr<std::optional<storage::EntityId>> id =
            ctx->view().LookupUnique(e->lookup_attr, e->lookup_value);
        if (!id.ok()) return id.status();
        if (!id->has_value()) return false;
        *out = Value::Ref(**id);
        return true;
      }
    }
  }
  if (info.attribute && (v.is_keyword() || v.is_int())) {
    const storage::Attribute* attr = v.is_keyword()
                                         ? schema.FindAttribute(v.text())
                                         : schema.FindAttribute(v.as_int());
    if (attr == nullptr) return false;
    *out = Value::Ref(attr->id);
    return true;
  }
  if (info.tuple && v.is_list()) {
    // A vector is a tuple through EdnToValue below; a list is one here.
    std::vector<Value> elements;
    for (const EdnValue& item : v.items()) {
      absl::StatusOr<Value> x = planner::EdnToValue(item);
      if (!x.ok()) return x.status();
      elements.push_back(*std::move(x));
    }
    *out = EncodeTuple(elements.data(), elements.size());
    return true;
  }
  absl::StatusOr<Value> x = planner::EdnToValue(v);
  if (!x.ok()) return x.status();
  if (info.value_type.has_value() &&
      !planner::CoerceValue(*info.value_type, &*x)) {
    return absl::InvalidArgumentError(
        StrCat(info.name, " takes ", storage::ValueTypeIdent(*info.value_type),
               " values, got ", edn::EdnKindName(v.kind()), " ",
               planner::EdnForMessage(v)));
  }
  *out = *std::move(x);
  return true;
}

// Converts `items` (each a tuple of `slots.size()` values, or one value
// when `single`) into distinct rows of `slots` values, back to back in
// `out`.
[[nodiscard]] absl::Status ConvertRows(ExecContext* ctx,
                                       const planner::QueryPlan& plan,
                                       size_t index,
                                       const planner::InputPlan& in,
                                       const std::vector<EdnValue>& items,
                                       bool single, std::vector<Value>* out) {
  const size_t w = in.slots.size();
  // The distinct rows are the set's own: converted values move in once.
  RowSet seen(static_cast<int>(w));
  seen.Reserve(items.size());
  std::vector<Value> row(w);
  for (const EdnValue& item : items) {
    const std::vector<EdnValue>* parts = nullptr;
    if (!single) {
      if (!item.is_sequential() || item.items().size() != w) {
        return InputError(
            index, in,
            StrCat("each element must be a vector of ", w, " values, got ",
                   planner::EdnForMessage(item)));
      }
      parts = &item.items();
    }
    bool keep = true;
    for (size_t i = 0; i < w && keep; ++i) {
      const planner::Slot s = in.slots[i];
      if (s == planner::kNoSlot) continue;
      const EdnValue& v = single ? item : (*parts)[i];
      absl::StatusOr<bool> ok =
          Convert(ctx, v, plan.where.slots[static_cast<size_t>(s)], &row[i]);
      if (!ok.ok()) return InputError(index, in, Msg(ok.status()));
      keep = *ok;
    }
    if (!keep || !seen.InsertMoving(row.data()).second) continue;
    absl::Status s = ctx->Tick();
    if (!s.ok()) return s;
  }
  *out = seen.ReleaseRows();
  return absl::OkStatus();
}

}  // namespace

absl::Status BindInputs(ExecContext* ctx, const planner::QueryPlan& plan,
                        const std::vector<EdnValue>& inputs, Batch* rows) {
  if (inputs.size() != plan.inputs.size()) {
    std::string names;
    for (const planner::InputPlan& in : plan.inputs) {
      StrAppend(&names, names.empty() ? "" : " ", in.text);
    }
    return absl::InvalidArgumentError(
        StrCat("the query takes ", plan.inputs.size(), " input",
               plan.inputs.size() == 1 ? "" : "s",
               names.empty() ? "" : StrCat(" (", names, ")"), " after $, got ",
               inputs.size()));
  }
  rows->Clear();
  rows->Append();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const planner::InputPlan& in = plan.inputs[k];
    const EdnValue& v = inputs[k];
    std::vector<Value> values;
    size_t w = in.slots.size();
    absl::Status s;
    switch (in.kind) {
      case InputSpec::Kind::kScalar:
        if (v.is_collection() && !v.is_sequential()) {
          return InputError(k, in, "expected a single value");
        }
        s = ConvertRows(ctx, plan, k, in, {v}, true, &values);
        break;
      case InputSpec::Kind::kTuple:
        if (!v.is_sequential()) {
          return InputError(k, in,
                            StrCat("expected a vector of ", w, " values, got ",
                                   planner::EdnForMessage(v)));
        }
        s = ConvertRows(ctx, plan, k, in, {v}, false, &values);
        break;
      case InputSpec::Kind::kCollection:
        if (!v.is_sequential() && !v.is_set()) {
          return InputError(
              k, in,
              StrCat("expected a collection, got ", planner::EdnForMessage(v)));
        }
        s = ConvertRows(ctx, plan, k, in, v.items(), true, &values);
        break;
      case InputSpec::Kind::kRelation:
        if (!v.is_sequential() && !v.is_set()) {
          return InputError(k, in,
                            StrCat("expected a collection of tuples, got ",
                                   planner::EdnForMessage(v)));
        }
        s = ConvertRows(ctx, plan, k, in, v.items(), false, &values);
        break;
      default:
        return InputError(k, in, "unsupported input");
    }
    if (!s.ok()) return s;
    if (w == 0) continue;
    const size_t n = values.size() / w;
    // Rows times elements.
    const size_t before = rows->size();
    Batch next(rows->width(), std::max<size_t>(1, before * n));
    for (size_t r = 0; r < before; ++r) {
      // The last row's turn is the values' last use: they move.
      const bool last = r + 1 == before;
      for (size_t e = 0; e < n; ++e) {
        Value* o = next.AppendCopy(rows->row(r));
        for (size_t i = 0; i < w; ++i) {
          if (in.slots[i] == planner::kNoSlot) continue;
          Value& v = values[e * w + i];
          if (last) {
            o[in.slots[i]] = std::move(v);
          } else {
            o[in.slots[i]] = v;
          }
        }
      }
    }
    *rows = std::move(next);
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::execution
