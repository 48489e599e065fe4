#include "planner/access_path.h"

#include <algorithm>

#include "mentat/base/str_cat.h"

namespace mentat::query::planner {

using storage::IndexOrder;
using storage::ValueType;

bool RangeableType(ValueType type) {
  switch (type) {
    case ValueType::kLong:
    case ValueType::kDouble:
    case ValueType::kInstant:
    case ValueType::kString:
    case ValueType::kBigInt:
    case ValueType::kBigDec:
    case ValueType::kRef:
      return true;
    default:
      return false;
  }
}

namespace {

// A rough count for lookups whose attribute is not known while planning.
constexpr double kUnknownAttrPerEntity = 10;
constexpr double kUnknownRefsPerEntity = 10;
constexpr double kUnknownAttrScan = 1e6;

const storage::Value* ConstValue(const PlanTerm& t) {
  return t.kind == PlanTerm::Kind::kConst ? &t.value : nullptr;
}

std::string BoundText(const RangeCandidate& r) {
  std::string out;
  if (r.lower.has_value()) StrAppend(&out, r.lower->inclusive ? ">=" : ">");
  if (r.upper.has_value()) {
    StrAppend(&out, out.empty() ? "" : ",", r.upper->inclusive ? "<=" : "<");
  }
  return out;
}

}  // namespace

Access ChooseAccess(const PatternSpec& p, const KnownFn& known,
                    const RangeCandidate& range, Estimator& est) {
  Access acc;
  const bool e = known(p.e), a = known(p.a), v = known(p.v);
  const storage::Attribute* attr = p.attr;
  if (e) {
    acc.usable = true;
    acc.index = IndexOrder::kEavt;
    acc.prefix_len = a ? (v ? 3 : 2) : 1;
    if (attr != nullptr) {
      acc.per_row = v ? 1 : est.PerEntity(*attr);
    } else {
      acc.per_row = v ? 1 : kUnknownAttrPerEntity;
    }
    acc.description = acc.prefix_len == 3   ? "EAVT e+a+v"
                      : acc.prefix_len == 2 ? "EAVT e+a"
                                            : "EAVT e";
    return acc;
  }
  if (a && v) {
    acc.usable = true;
    acc.index = IndexOrder::kAvet;
    acc.prefix_len = 2;
    acc.per_row = attr != nullptr ? est.PerValue(*attr, ConstValue(p.v))
                                  : kUnknownRefsPerEntity;
    acc.description = "AVET a+v";
    return acc;
  }
  if (a) {
    acc.usable = true;
    acc.prefix_len = 1;
    if (attr == nullptr) {
      acc.index = IndexOrder::kAevt;
      acc.per_row = kUnknownAttrScan;
      acc.description = "AEVT a";
      return acc;
    }
    const double datoms = std::max(0.1, est.Datoms(attr->id));
    if ((range.lower.has_value() || range.upper.has_value()) &&
        RangeableType(attr->type)) {
      const storage::Value* lo =
          range.lower.has_value() ? ConstValue(range.lower->term) : nullptr;
      const storage::Value* hi =
          range.upper.has_value() ? ConstValue(range.upper->term) : nullptr;
      const double f = est.RangeFraction(
          *attr, lo, range.lower.has_value() && range.lower->inclusive,
          range.lower.has_value(), hi,
          range.upper.has_value() && range.upper->inclusive,
          range.upper.has_value());
      acc.index = IndexOrder::kAvet;
      acc.range = range;
      acc.per_row = std::max(0.1, datoms * f);
      acc.description = StrCat("AVET a range ", BoundText(range));
      return acc;
    }
    acc.index = IndexOrder::kAevt;
    acc.per_row = datoms;
    acc.description = "AEVT a";
    return acc;
  }
  if (v) {
    const storage::Value* c = ConstValue(p.v);
    if (c != nullptr && c->type() != ValueType::kRef &&
        c->type() != ValueType::kLong) {
      return acc;  // only refs are in VAET
    }
    acc.usable = true;
    acc.index = IndexOrder::kVaet;
    acc.prefix_len = 1;
    acc.per_row = kUnknownRefsPerEntity;
    acc.description = "VAET v";
    return acc;
  }
  return acc;
}

}  // namespace mentat::query::planner
