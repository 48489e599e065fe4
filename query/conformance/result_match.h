#ifndef MENTAT_QUERY_CONFORMANCE_RESULT_MATCH_H_
#define MENTAT_QUERY_CONFORMANCE_RESULT_MATCH_H_

// Comparing a query's result with a case's :expect (rules in
// query/conformance/README.md). Test-only, header-only.

#include <algorithm>
#include <cmath>
#include <vector>

#include "mentat/edn/edn_value.h"
#include "mentat/query/query_engine.h"

namespace mentat::query::conformance {

using edn::EdnKind;
using edn::EdnValue;

inline bool IsSequence(const EdnValue& v) {
  return v.is_vector() || v.is_list();
}

// True if `actual` matches `expected`:
//  - #any _ matches anything;
//  - a float matches a float within `tolerance` (relative to the expected
//    value, absolute below 1);
//  - a set matches any collection (set, vector, list) holding matching
//    elements in any order, as many as the set has;
//  - a vector or list matches a vector or list element by element;
//  - a map matches a map with the same keys and matching values;
//  - anything else must be equal, kind included (1 is not 1.0).
inline bool Matches(const EdnValue& expected, const EdnValue& actual,
                    double tolerance) {
  if (expected.is_tagged() && expected.text() == "any") return true;
  if (expected.is_float()) {
    if (!actual.is_float()) return false;
    double e = expected.as_double(), a = actual.as_double();
    if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
    if (std::isinf(e) || std::isinf(a)) return e == a;
    return std::fabs(e - a) <= tolerance * std::max(1.0, std::fabs(e));
  }
  if (expected.is_set()) {
    if (!actual.is_set() && !IsSequence(actual)) return false;
    const auto& want = expected.items();
    const auto& got = actual.items();
    if (want.size() != got.size()) return false;
    // Greedy matching is exact here unless two expected elements match
    // overlapping actual ones only through the float tolerance.
    std::vector<bool> used(got.size(), false);
    for (const EdnValue& w : want) {
      bool found = false;
      for (size_t i = 0; i < got.size() && !found; ++i) {
        if (!used[i] && Matches(w, got[i], tolerance)) {
          used[i] = true;
          found = true;
        }
      }
      if (!found) return false;
    }
    return true;
  }
  if (IsSequence(expected)) {
    if (!IsSequence(actual)) return false;
    if (expected.items().size() != actual.items().size()) return false;
    for (size_t i = 0; i < expected.items().size(); ++i) {
      if (!Matches(expected.items()[i], actual.items()[i], tolerance)) {
        return false;
      }
    }
    return true;
  }
  if (expected.is_map()) {
    if (!actual.is_map() || expected.size() != actual.size()) return false;
    const auto& want = expected.items();
    const auto& got = actual.items();
    for (size_t i = 0; i < want.size(); i += 2) {
      bool found = false;
      for (size_t j = 0; j < got.size() && !found; j += 2) {
        if (want[i] == got[j]) {
          if (!Matches(want[i + 1], got[j + 1], tolerance)) return false;
          found = true;
        }
      }
      if (!found) return false;
    }
    return true;
  }
  return expected == actual;
}

// The result shaped by its find spec, in the form :expect is written in:
// relation: a vector of row vectors (compare with a set, or with a vector
// when the order matters); collection: a vector of values; tuple: one
// vector or nil; scalar: one value or nil.
inline EdnValue ShapeResult(const QueryResult& result) {
  switch (result.kind) {
    case FindSpec::Kind::kRelation: {
      std::vector<EdnValue> rows;
      rows.reserve(result.rows.size());
      for (const Row& r : result.rows) rows.push_back(EdnValue::Vector(r));
      return EdnValue::Vector(std::move(rows));
    }
    case FindSpec::Kind::kCollection: {
      std::vector<EdnValue> values;
      values.reserve(result.rows.size());
      for (const Row& r : result.rows) {
        values.push_back(r.empty() ? EdnValue::Nil() : r[0]);
      }
      return EdnValue::Vector(std::move(values));
    }
    case FindSpec::Kind::kTuple:
      if (result.rows.empty()) return EdnValue::Nil();
      return EdnValue::Vector(result.rows[0]);
    case FindSpec::Kind::kScalar:
      if (result.rows.empty() || result.rows[0].empty()) {
        return EdnValue::Nil();
      }
      return result.rows[0][0];
  }
  return EdnValue::Nil();
}

// For messages: a relation or collection compared with a set prints as a
// set, so that expected and actual read alike. Sets cannot hold equal
// elements, so duplicates keep the vector form.
inline EdnValue ForDisplay(const EdnValue& expected, const EdnValue& actual) {
  if (!expected.is_set() || !IsSequence(actual)) return actual;
  for (size_t i = 0; i < actual.items().size(); ++i) {
    for (size_t j = i + 1; j < actual.items().size(); ++j) {
      if (actual.items()[i] == actual.items()[j]) return actual;
    }
  }
  return EdnValue::Set(actual.items());
}

}  // namespace mentat::query::conformance

#endif  // MENTAT_QUERY_CONFORMANCE_RESULT_MATCH_H_
