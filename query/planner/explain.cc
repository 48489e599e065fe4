#include "planner/explain.h"

#include <cmath>
#include <cstdio>

#include "mentat/base/str_cat.h"

namespace mentat::query::planner {
namespace {

std::string Rows(double est) {
  char buf[32];
  if (est < 10) {
    std::snprintf(buf, sizeof buf, "%.1f", est);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", std::round(est));
  }
  return buf;
}

std::string Micros(int64_t nanos) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fus", static_cast<double>(nanos) / 1e3);
  return buf;
}

std::string Names(const ScopePlan& scope, const std::vector<Slot>& slots) {
  std::string out;
  for (Slot s : slots) {
    if (s < 0) continue;
    StrAppend(&out, out.empty() ? "" : " ",
              scope.slots[static_cast<size_t>(s)].name);
  }
  return out;
}

std::string Kind(const Step& step) {
  switch (step.kind) {
    case Step::Kind::kPattern:
      if (step.pattern.hash_join) return "HashJoin";
      if (step.pattern.entity_order) return "MergeJoin";
      return step.pattern.lower.has_value() || step.pattern.upper.has_value()
                 ? "RangeScan"
                 : "IndexScan";
    case Step::Kind::kFilter:
      return "Filter";
    case Step::Kind::kFunction:
      return "Bind";
    case Step::Kind::kCall:
      return step.call.anti ? "AntiJoin" : "RuleCall";
    case Step::Kind::kFetch:
      return "EntityFetch";
  }
  return "Step";
}

void ExplainScope(const ScopePlan& scope, const std::vector<TablePlan>& tables,
                  const std::string& indent, const PlanProfile* profile,
                  std::string* out) {
  if (!scope.entry_slots.empty()) {
    StrAppend(out, indent, "bound on entry: ", Names(scope, scope.entry_slots),
              "\n");
  }
  for (size_t i = 0; i < scope.steps.size(); ++i) {
    const Step& step = scope.steps[i];
    StrAppend(out, indent, i + 1, ". ", Kind(step), " ", step.text, "  ",
              step.access);
    if (step.kind == Step::Kind::kCall) {
      const TablePlan& t = tables[static_cast<size_t>(step.call.table)];
      if (t.recursive) StrAppend(out, " recursive");
    }
    if (!step.binds.empty()) {
      StrAppend(out, "  binds ", Names(scope, step.binds));
    }
    if (!step.filters.empty()) {
      StrAppend(out, "  filters");
      for (const PredicateSpec& f : step.filters) StrAppend(out, " ", f.text);
    }
    if (step.never) StrAppend(out, "  (matches nothing)");
    StrAppend(out, "  est ", Rows(step.est_rows));
    if (profile != nullptr && i < profile->steps.size()) {
      const int64_t next =
          i + 1 < profile->steps.size() ? profile->steps[i + 1].nanos : 0;
      const int64_t own = profile->steps[i].nanos - next;
      StrAppend(out, "  actual ", profile->steps[i].rows, " rows ",
                Micros(own > 0 ? own : 0));
      if (!profile->steps[i].ran_as.empty()) {
        StrAppend(out, "  ran as ", profile->steps[i].ran_as);
      }
    }
    StrAppend(out, "\n");
  }
}

}  // namespace

std::string ExplainPlan(const QueryPlan& plan, const PlanProfile* profile) {
  std::string out = "plan:\n";
  if (profile != nullptr && profile->used_statistics) {
    StrAppend(&out, "  answered from the attribute statistics (no scan)\n");
  } else if (profile != nullptr && profile->counted_by_scan) {
    StrAppend(&out,
              "  counted by one pass over the attribute's AVET keys (no rows "
              "bound)  ",
              Micros(profile->total_nanos), "\n");
  } else if (plan.shortcut.kind != StatsShortcut::Kind::kNone) {
    StrAppend(&out,
              "  answered from the attribute statistics when the basis is "
              "current and the values are tracked; else counted by one pass "
              "over the attribute's AVET keys; on history:\n");
  }
  ExplainScope(plan.where, plan.tables, "  ", profile, &out);
  std::string find;
  for (const FindPlan& f : plan.find) {
    StrAppend(&find, find.empty() ? "" : " ", f.text);
  }
  StrAppend(&out, "  ", plan.has_aggregates ? "Aggregate " : "Project ", find);
  if (!plan.with.empty()) {
    StrAppend(&out, " :with ", Names(plan.where, plan.with));
  }
  StrAppend(&out, plan.dedupe ? "  (distinct by hash set)"
                              : "  (rows already distinct)");
  if (profile != nullptr && !profile->steps.empty()) {
    StrAppend(&out, "  actual ", profile->result_rows, " rows ",
              Micros(profile->steps.back().nanos));
  }
  StrAppend(&out, "\n");
  if (!plan.order.empty()) {
    StrAppend(&out, "  Order by");
    for (const QueryPlan::Order& o : plan.order) {
      StrAppend(&out, " ", plan.find[static_cast<size_t>(o.column)].text,
                o.descending ? " desc" : " asc");
    }
    StrAppend(&out, "\n");
  }
  if (plan.limit.has_value() || plan.offset > 0) {
    StrAppend(&out, "  Limit ",
              plan.limit.has_value() ? StrCat(*plan.limit) : "none", " offset ",
              plan.offset, "\n");
  }
  for (size_t t = 0; t < plan.tables.size(); ++t) {
    const TablePlan& table = plan.tables[t];
    std::string bound;
    for (int i = 0; i < table.arity; ++i) {
      bound.push_back(table.bound[static_cast<size_t>(i)] ? 'b' : 'f');
    }
    StrAppend(&out, "rule ", table.name, " [", bound, "]",
              table.recursive ? " (recursive)" : "", ":\n");
    for (const RuleBody& body : table.bodies) {
      StrAppend(&out, "  body ", body.text, "\n");
      ExplainScope(body.scope, plan.tables, "    ", nullptr, &out);
    }
  }
  if (profile != nullptr) {
    StrAppend(&out, "total ", Micros(profile->total_nanos), ", ",
              profile->result_rows, " rows\n");
  }
  return out;
}

}  // namespace mentat::query::planner
