#include "pull/pull_plan.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"

namespace mentat::query::pull_internal {
namespace {

using edn::EdnValue;

[[nodiscard]] absl::Status ErrorAt(const PullAttrSpec& spec,
                                   std::string_view message) {
  return edn::EdnError({spec.line, spec.column}, message);
}

// The attribute as the user wrote it: ":issue/title", ":issue/_assignee".
std::string Written(const PullAttrSpec& spec) {
  if (!spec.reverse) return StrCat(":", spec.attr);
  const size_t slash = spec.attr.find('/');
  if (slash == std::string::npos) return StrCat(":_", spec.attr);
  return StrCat(":", std::string_view(spec.attr).substr(0, slash + 1), "_",
                std::string_view(spec.attr).substr(slash + 1));
}

EdnValue DefaultKey(const PullAttrSpec& spec) {
  return EdnValue::Keyword(Written(spec).substr(1));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PullPlan>> PullPlan::Compile(
    const PullPattern& pattern, const storage::Schema& schema) {
  std::unique_ptr<PullPlan> plan(new PullPlan());
  plan->schema_ = &schema;
  plan->patterns_.push_back(std::make_unique<PlanPattern>());
  plan->patterns_.push_back(std::make_unique<PlanPattern>());
  plan->patterns_[1]->wildcard = true;
  absl::Status s = plan->CompileInto(pattern, plan->patterns_[0].get());
  if (!s.ok()) return s;
  return plan;
}

absl::Status PullPlan::CompileInto(const PullPattern& pattern,
                                   PlanPattern* out) {
  out->wildcard = pattern.wildcard;
  out->attrs.resize(pattern.attrs.size());
  for (size_t i = 0; i < pattern.attrs.size(); ++i) {
    const PullAttrSpec& spec = pattern.attrs[i];
    absl::Status s = CompileSpec(spec, out, &out->attrs[i]);
    if (!s.ok()) return s;
    // Two specs with one key would make a map with a duplicate key.
    for (size_t j = 0; j < i; ++j) {
      if (out->attrs[j].key == out->attrs[i].key) {
        return ErrorAt(spec,
                       StrCat("two specs of one pull pattern give the "
                              "key ",
                              edn::PrintEdnAbbreviated(out->attrs[i].key, 60)));
      }
    }
  }
  for (size_t i = 0; i < out->attrs.size(); ++i) {
    const PlanAttr& a = out->attrs[i];
    if (a.kind == PlanAttrKind::kForward) {
      out->forward.emplace_back(a.attr->id, static_cast<int>(i));
      out->wildcard_skip.insert(a.attr->id);
    } else if (a.kind == PlanAttrKind::kReverse) {
      out->has_reverse = true;
    }
    if (a.key.is_keyword("db/id")) out->explicit_db_id = true;
    if (out->wildcard && a.key.is_keyword()) {
      // `[* (:a :as :b)]`: the wildcard must not also emit :b.
      if (const storage::Attribute* taken =
              schema_->FindAttribute(a.key.text())) {
        out->wildcard_skip.insert(taken->id);
      }
    }
  }
  std::stable_sort(
      out->forward.begin(), out->forward.end(),
      [](const auto& x, const auto& y) { return x.first < y.first; });
  return absl::OkStatus();
}

absl::Status PullPlan::CompileSpec(const PullAttrSpec& spec, PlanPattern* owner,
                                   PlanAttr* out) {
  const bool has_limit = spec.no_limit || spec.limit != 1000;
  out->key = spec.as.has_value() ? *spec.as : DefaultKey(spec);
  if (spec.attr == "db/id") {
    if (spec.reverse) {
      return ErrorAt(spec,
                     ":db/_id is not an attribute: :db/id is the "
                     "entity id, not a reference");
    }
    if (has_limit || spec.default_value.has_value() || spec.sub ||
        spec.recursive) {
      return ErrorAt(spec,
                     ":db/id takes no :limit, :default or nested "
                     "pattern (only :as)");
    }
    out->kind = PlanAttrKind::kDbId;
    return absl::OkStatus();
  }
  const storage::Attribute* attr = schema_->FindAttribute(spec.attr);
  if (attr == nullptr) {
    return ErrorAt(spec, StrCat(":", spec.attr, " is not an attribute"));
  }
  out->attr = attr;
  if (spec.reverse && !attr->is_ref()) {
    return ErrorAt(
        spec, StrCat("reverse lookup ", Written(spec),
                     " needs a ref attribute, but :", spec.attr, " is of type ",
                     storage::ValueTypeIdent(attr->type)));
  }
  if ((spec.sub || spec.recursive) && !attr->is_ref()) {
    return ErrorAt(spec, StrCat("a nested pattern needs a ref attribute, but ",
                                Written(spec), " is of type ",
                                storage::ValueTypeIdent(attr->type)));
  }
  if (!spec.no_limit && spec.limit <= 0) {
    return ErrorAt(
        spec, StrCat("pull option :limit must be positive, got ", spec.limit));
  }
  if (spec.recursion_depth.has_value() && *spec.recursion_depth <= 0) {
    return ErrorAt(spec, StrCat("a recursion depth must be positive, got ",
                                *spec.recursion_depth));
  }
  out->kind = spec.reverse ? PlanAttrKind::kReverse : PlanAttrKind::kForward;
  // A component belongs to one entity, so its reverse is a single map.
  out->many = spec.reverse ? !attr->is_component : attr->many();
  // :limit is accepted anywhere, as in Datomic, and means nothing for a
  // single value.
  out->limit = (out->many && !spec.no_limit) ? spec.limit : -1;
  out->default_value = spec.default_value;
  if (spec.recursive) {
    out->recursive = true;
    out->sub = owner;
    out->max_depth = spec.recursion_depth.value_or(-1);
    out->recursion_slot = recursion_slots_++;
  } else if (spec.sub) {
    patterns_.push_back(std::make_unique<PlanPattern>());
    PlanPattern* sub = patterns_.back().get();
    absl::Status s = CompileInto(*spec.sub, sub);
    if (!s.ok()) return s;
    out->sub = sub;
  } else {
    out->expand_component = !spec.reverse && attr->is_component;
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::pull_internal
