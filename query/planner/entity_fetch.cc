#include "planner/entity_fetch.h"

#include <algorithm>

#include "mentat/base/str_cat.h"

namespace mentat::query::planner {
namespace {

bool Fusable(const Step& step) {
  if (step.kind != Step::Kind::kPattern || step.never) return false;
  const PatternSpec& p = step.pattern;
  return !p.hash_join && p.index == storage::IndexOrder::kEavt &&
         p.prefix_len == 2 && !p.lower.has_value() && !p.upper.has_value() &&
         p.e.is_slot() && p.e.bound && p.attr != nullptr && !p.attr->many() &&
         (p.v.is_absent() || (p.v.is_slot() && !p.v.bound && !p.v.check)) &&
         p.tx.is_absent() && p.added.is_absent();
}

}  // namespace

void FuseEntityLookups(ScopePlan* scope) {
  std::vector<Step> out;
  std::vector<Step>& steps = scope->steps;
  for (size_t i = 0; i < steps.size();) {
    size_t j = i;
    if (Fusable(steps[i])) {
      j = i + 1;
      while (j < steps.size() && Fusable(steps[j]) &&
             steps[j].pattern.e.slot == steps[i].pattern.e.slot) {
        bool repeated = false;
        for (size_t k = i; k < j; ++k) {
          repeated |= steps[k].pattern.attr == steps[j].pattern.attr;
        }
        if (repeated) break;
        ++j;
      }
    }
    if (j <= i + 1) {
      out.push_back(std::move(steps[i]));
      ++i;
      continue;
    }
    Step fused;
    fused.kind = Step::Kind::kFetch;
    std::string attrs;
    for (size_t k = i; k < j; ++k) {
      Step& s = steps[k];
      StrAppend(&fused.text, k == i ? "" : " ", s.text);
      fused.fetch.push_back(s.pattern);
      fused.binds.insert(fused.binds.end(), s.binds.begin(), s.binds.end());
      for (PredicateSpec& f : s.filters) fused.filters.push_back(std::move(f));
      fused.est_rows = s.est_rows;
    }
    std::sort(fused.fetch.begin(), fused.fetch.end(),
              [](const PatternSpec& a, const PatternSpec& b) {
                return a.attr->id < b.attr->id;
              });
    for (const PatternSpec& p : fused.fetch) {
      StrAppend(&attrs, attrs.empty() ? "" : " ", ":", p.attr->ident);
    }
    fused.pattern = fused.fetch.front();
    fused.access = StrCat("EAVT e, one seek for ", attrs);
    out.push_back(std::move(fused));
    i = j;
  }
  steps = std::move(out);
}

}  // namespace mentat::query::planner
