// The built-in aggregates and the public aggregate API of functions.h.
//
// Choices where Datomic leaves room (documented here once):
//  - Numeric aggregates (sum avg median variance stddev) skip values that
//    are not numbers instead of failing the query.
//  - sum: a long while all inputs are longs and the total fits, a bigint
//    when it does not (no overflow error); a bigint/bigdec when one is
//    added (Clojure's contagion); a double when any double is added. An
//    empty sum is 0.
//  - avg, variance (population), stddev: doubles. median: the middle value
//    itself for an odd count; for an even count the mean of the two middle
//    values, a long when both are longs and their sum is even, otherwise a
//    double. Empty groups give nil for these and for min/max.
//  - min, max: over all values by TotalCompare (value_compare.h).
//  - (min n ?x) / (max n ?x): the n least / greatest distinct values as a
//    vector, least first for min and greatest first for max.
//  - distinct: an EDN set; sample n: up to n distinct values in random
//    order; rand n: n values drawn with replacement, capped at the number
//    of values added.

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "builtins/decimal.h"
#include "builtins/value_compare.h"
#include "builtins/value_text.h"
#include "mentat/base/str_cat.h"
#include "mentat/query/functions.h"

namespace mentat::query {
namespace builtins {
namespace {

using edn::EdnValue;
using storage::Value;
using ValueSet = absl::flat_hash_set<Value, storage::ValueHash>;

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

// Random index in [0, n).
size_t RandomIndex(size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(Rng());
}

// The exact sum of numbers: longs in an __int128 (which cannot overflow in
// practice; it spills to the decimal if it does), bigints and bigdecs in a
// Decimal, doubles in a double.
class NumericSum {
 public:
  // False (and nothing added) for non-numbers.
  bool Add(const Value& v) {
    switch (NumberKind(v)) {
      case NumKind::kLong:
        if (__builtin_add_overflow(ints_, static_cast<__int128>(v.as_long()),
                                   &ints_)) {
          decimals_ = Decimal::Add(decimals_, Decimal::FromInt128(ints_));
          ints_ = v.as_long();
        }
        break;
      case NumKind::kDouble:
        has_double_ = true;
        doubles_ += v.as_double();
        break;
      case NumKind::kBigInt:
      case NumKind::kBigDec: {
        Decimal d;
        if (!Decimal::FromValue(v, &d)) return false;
        if (v.type() == storage::ValueType::kBigDec) has_bigdec_ = true;
        has_decimal_ = true;
        decimals_ = Decimal::Add(decimals_, d);
        break;
      }
      case NumKind::kNone:
        return false;
    }
    ++count_;
    return true;
  }

  int64_t count() const { return count_; }

  EdnValue Total() const {
    if (has_double_) return EdnValue::Float(AsDouble());
    if (!has_decimal_ && decimals_.is_zero() &&
        ints_ >= std::numeric_limits<int64_t>::min() &&
        ints_ <= std::numeric_limits<int64_t>::max()) {
      return EdnValue::Int(static_cast<int64_t>(ints_));
    }
    Decimal total = Decimal::Add(decimals_, Decimal::FromInt128(ints_));
    if (has_bigdec_) return EdnValue::BigDec(total.ToText());
    return EdnValue::BigInt(total.ToText());
  }

  double AsDouble() const {
    double d = doubles_ + static_cast<double>(ints_);
    if (!decimals_.is_zero()) d += decimals_.ToDouble();
    return d;
  }

 private:
  __int128 ints_ = 0;
  Decimal decimals_;
  double doubles_ = 0;
  int64_t count_ = 0;
  bool has_double_ = false;
  bool has_decimal_ = false;
  bool has_bigdec_ = false;
};

class CountAggregate : public Aggregate {
 public:
  void Add(const Value&) override { ++count_; }
  EdnValue Result() override { return EdnValue::Int(count_); }

 private:
  int64_t count_ = 0;
};

class CountDistinctAggregate : public Aggregate {
 public:
  void Add(const Value& v) override { seen_.insert(v); }
  EdnValue Result() override {
    return EdnValue::Int(static_cast<int64_t>(seen_.size()));
  }

 private:
  ValueSet seen_;
};

class SumAggregate : public Aggregate {
 public:
  void Add(const Value& v) override { sum_.Add(v); }
  EdnValue Result() override { return sum_.Total(); }

 private:
  NumericSum sum_;
};

class AvgAggregate : public Aggregate {
 public:
  void Add(const Value& v) override { sum_.Add(v); }
  EdnValue Result() override {
    if (sum_.count() == 0) return EdnValue::Nil();
    return EdnValue::Float(sum_.AsDouble() / static_cast<double>(sum_.count()));
  }

 private:
  NumericSum sum_;
};

// Population variance by Welford's update, which stays accurate when the
// mean is large compared with the spread.
class VarianceAggregate : public Aggregate {
 public:
  explicit VarianceAggregate(bool stddev) : stddev_(stddev) {}
  void Add(const Value& v) override {
    if (NumberKind(v) == NumKind::kNone) return;
    double x = NumberToDouble(v);
    ++count_;
    double delta = x - mean_;
    mean_ += delta / static_cast<double>(count_);
    m2_ += delta * (x - mean_);
  }
  EdnValue Result() override {
    if (count_ == 0) return EdnValue::Nil();
    double variance = m2_ / static_cast<double>(count_);
    return EdnValue::Float(stddev_ ? std::sqrt(variance) : variance);
  }

 private:
  bool stddev_;
  int64_t count_ = 0;
  double mean_ = 0;
  double m2_ = 0;
};

class MedianAggregate : public Aggregate {
 public:
  void Add(const Value& v) override {
    if (NumberKind(v) != NumKind::kNone) values_.push_back(v);
  }
  EdnValue Result() override {
    size_t n = values_.size();
    if (n == 0) return EdnValue::Nil();
    auto mid = values_.begin() + static_cast<ptrdiff_t>(n / 2);
    std::nth_element(values_.begin(), mid, values_.end(), TotalLess());
    if (n % 2 == 1) return ValueToEdnValue(*mid);
    // The lower middle is the greatest of the lower half.
    const Value& upper = *mid;
    const Value& lower = *std::max_element(values_.begin(), mid, TotalLess());
    if (IsLongLike(lower.type()) && IsLongLike(upper.type())) {
      __int128 sum = static_cast<__int128>(lower.as_long()) + upper.as_long();
      if (sum % 2 == 0) return EdnValue::Int(static_cast<int64_t>(sum / 2));
      return EdnValue::Float(static_cast<double>(sum) / 2);
    }
    return EdnValue::Float(
        std::midpoint(NumberToDouble(lower), NumberToDouble(upper)));
  }

 private:
  std::vector<Value> values_;
};

class ExtremumAggregate : public Aggregate {
 public:
  explicit ExtremumAggregate(bool max) : max_(max) {}
  void Add(const Value& v) override {
    if (!best_) {
      best_ = v;
      return;
    }
    std::strong_ordering c = TotalCompare(v, *best_);
    if (max_ ? c > 0 : c < 0) best_ = v;
  }
  EdnValue Result() override {
    return best_ ? ValueToEdnValue(*best_) : EdnValue::Nil();
  }

 private:
  bool max_;
  std::optional<Value> best_;
};

// Values sorted by TotalCompare, without values that convert to equal EDN
// (a ref and a long with the same id).
std::vector<EdnValue> SortedEdn(std::vector<Value> values) {
  std::sort(values.begin(), values.end(), TotalLess());
  std::vector<EdnValue> out;
  out.reserve(values.size());
  for (const Value& v : values) {
    EdnValue e = ValueToEdnValue(v);
    if (!out.empty() && out.back() == e) continue;
    out.push_back(std::move(e));
  }
  return out;
}

class DistinctAggregate : public Aggregate {
 public:
  void Add(const Value& v) override { seen_.insert(v); }
  EdnValue Result() override {
    return EdnValue::Set(
        SortedEdn(std::vector<Value>(seen_.begin(), seen_.end())));
  }

 private:
  ValueSet seen_;
};

class SampleAggregate : public Aggregate {
 public:
  explicit SampleAggregate(int64_t n) : n_(static_cast<size_t>(n)) {}
  void Add(const Value& v) override { seen_.insert(v); }
  EdnValue Result() override {
    std::vector<Value> values(seen_.begin(), seen_.end());
    size_t take = std::min(n_, values.size());
    // A partial Fisher-Yates shuffle: the first `take` are the sample.
    for (size_t i = 0; i < take; ++i) {
      std::swap(values[i], values[i + RandomIndex(values.size() - i)]);
    }
    std::vector<EdnValue> out;
    out.reserve(take);
    for (size_t i = 0; i < take; ++i) out.push_back(ValueToEdnValue(values[i]));
    return EdnValue::Vector(std::move(out));
  }

 private:
  size_t n_;
  ValueSet seen_;
};

// Keeps the n least (or greatest) distinct values seen so far.
class ExtremaAggregate : public Aggregate {
 public:
  ExtremaAggregate(int64_t n, bool max)
      : n_(static_cast<size_t>(n)), max_(max) {}
  void Add(const Value& v) override {
    if (n_ == 0) return;
    if (kept_.size() == n_) {
      // Skip values that cannot enter before touching the set.
      const Value& worst = max_ ? *kept_.begin() : *kept_.rbegin();
      std::strong_ordering c = TotalCompare(v, worst);
      if (max_ ? c <= 0 : c >= 0) return;
    }
    kept_.insert(v);
    if (kept_.size() > n_) {
      kept_.erase(max_ ? kept_.begin() : std::prev(kept_.end()));
    }
  }
  EdnValue Result() override {
    std::vector<EdnValue> out;
    out.reserve(kept_.size());
    if (max_) {
      for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
        out.push_back(ValueToEdnValue(*it));
      }
    } else {
      for (const Value& v : kept_) out.push_back(ValueToEdnValue(v));
    }
    return EdnValue::Vector(std::move(out));
  }

 private:
  size_t n_;
  bool max_;
  std::set<Value, TotalLess> kept_;
};

// One value chosen uniformly: reservoir sampling with a reservoir of one.
class RandAggregate : public Aggregate {
 public:
  void Add(const Value& v) override {
    ++seen_;
    if (seen_ == 1 || RandomIndex(seen_) == 0) chosen_ = v;
  }
  EdnValue Result() override {
    return chosen_ ? ValueToEdnValue(*chosen_) : EdnValue::Nil();
  }

 private:
  size_t seen_ = 0;
  std::optional<Value> chosen_;
};

class RandNAggregate : public Aggregate {
 public:
  explicit RandNAggregate(int64_t n) : n_(static_cast<size_t>(n)) {}
  void Add(const Value& v) override { values_.push_back(v); }
  EdnValue Result() override {
    size_t take = std::min(n_, values_.size());
    std::vector<EdnValue> out;
    out.reserve(take);
    for (size_t i = 0; i < take; ++i) {
      out.push_back(ValueToEdnValue(values_[RandomIndex(values_.size())]));
    }
    return EdnValue::Vector(std::move(out));
  }

 private:
  size_t n_;
  std::vector<Value> values_;
};

constexpr std::string_view kSingleAggregates[] = {
    "count",  "count-distinct", "sum",    "avg",      "min",  "max",
    "median", "variance",       "stddev", "distinct", "rand",
};
constexpr std::string_view kCountedAggregates[] = {"sample", "min", "max",
                                                   "rand"};

template <size_t N>
bool Contains(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

std::unique_ptr<Aggregate> MakeSingle(std::string_view name) {
  if (name == "count") return std::make_unique<CountAggregate>();
  if (name == "count-distinct") {
    return std::make_unique<CountDistinctAggregate>();
  }
  if (name == "sum") return std::make_unique<SumAggregate>();
  if (name == "avg") return std::make_unique<AvgAggregate>();
  if (name == "min") return std::make_unique<ExtremumAggregate>(false);
  if (name == "max") return std::make_unique<ExtremumAggregate>(true);
  if (name == "median") return std::make_unique<MedianAggregate>();
  if (name == "variance") return std::make_unique<VarianceAggregate>(false);
  if (name == "stddev") return std::make_unique<VarianceAggregate>(true);
  if (name == "distinct") return std::make_unique<DistinctAggregate>();
  if (name == "rand") return std::make_unique<RandAggregate>();
  return nullptr;
}

std::unique_ptr<Aggregate> MakeCounted(std::string_view name, int64_t n) {
  if (name == "sample") return std::make_unique<SampleAggregate>(n);
  if (name == "min") return std::make_unique<ExtremaAggregate>(n, false);
  if (name == "max") return std::make_unique<ExtremaAggregate>(n, true);
  if (name == "rand") return std::make_unique<RandNAggregate>(n);
  return nullptr;
}

}  // namespace
}  // namespace builtins

bool IsAggregate(std::string_view name, size_t arity) {
  if (arity == 1) return builtins::Contains(builtins::kSingleAggregates, name);
  if (arity == 2) return builtins::Contains(builtins::kCountedAggregates, name);
  return false;
}

absl::StatusOr<std::unique_ptr<Aggregate>> MakeAggregate(
    std::string_view name, std::optional<int64_t> n) {
  bool single = builtins::Contains(builtins::kSingleAggregates, name);
  bool counted = builtins::Contains(builtins::kCountedAggregates, name);
  if (!single && !counted) {
    return absl::InvalidArgumentError(StrCat("unknown aggregate ", name));
  }
  if (!n.has_value()) {
    if (!single) {
      return absl::InvalidArgumentError(
          StrCat("aggregate ", name, " needs a count: (", name, " n ?x)"));
    }
    return builtins::MakeSingle(name);
  }
  if (!counted) {
    return absl::InvalidArgumentError(
        StrCat("aggregate ", name, " takes no count: (", name, " ?x)"));
  }
  if (*n < 0) {
    return absl::InvalidArgumentError(
        StrCat("aggregate ", name, " needs a count of 0 or more, got ", *n));
  }
  return builtins::MakeCounted(name, *n);
}

bool AggregateWantsDistinct(std::string_view name) {
  return name == "count-distinct" || name == "distinct" || name == "sample";
}

}  // namespace mentat::query
