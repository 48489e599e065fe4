#ifndef MENTAT_EDN_TESTING_RANDOM_EDN_H_
#define MENTAT_EDN_TESTING_RANDOM_EDN_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mentat/edn/edn_value.h"

namespace mentat::edn::testing {

// Random EDN values for property tests (the printer's round trip, the
// scanner against the reader): every kind, nested up to a few levels,
// with the edge cases of each (int64 limits, NaN, -0.0, code points up to
// U+10FFFF, names with every allowed character). Deterministic for a seed.
// Test-only; not thread-safe.
class RandomEdn {
 public:
  explicit RandomEdn(uint64_t seed) : rng_(seed) {}

  EdnValue Value(int depth) {
    const int kinds = depth > 4 ? 12 : 17;
    switch (Uniform(0, kinds - 1)) {
      case 0:
        return EdnValue::Nil();
      case 1:
        return EdnValue::Bool(Uniform(0, 1) == 1);
      case 2:
        return EdnValue::Int(Int64());
      case 3:
        return EdnValue::Float(Double());
      case 4:
        return EdnValue::String(Text());
      case 5:
        return EdnValue::Keyword(Name());
      case 6:
        return EdnValue::Symbol(Name());
      case 7:
        return EdnValue::Char(CodePoint());
      case 8: {
        std::string digits = Uniform(0, 1) ? "-" : "";
        digits += static_cast<char>('1' + Uniform(0, 8));
        for (int i = Uniform(0, 40); i > 0; --i) {
          digits += static_cast<char>('0' + Uniform(0, 9));
        }
        return EdnValue::BigInt(digits);
      }
      case 9: {
        std::string text = std::to_string(Int64() % 100000);
        if (Uniform(0, 1)) text += "." + std::to_string(Uniform(0, 99999));
        if (Uniform(0, 3) == 0) text += "e" + std::to_string(Uniform(-20, 20));
        return EdnValue::BigDec(text);
      }
      case 10:
        return EdnValue::Inst(Int64());
      case 11: {
        std::string bytes(16, '\0');
        for (char& b : bytes) b = static_cast<char>(Uniform(0, 255));
        return EdnValue::Uuid(bytes);
      }
      case 12:
        return EdnValue::List(Items(depth));
      case 13:
        return EdnValue::Vector(Items(depth));
      case 14: {
        // Distinct keys: each new key is checked against the previous.
        std::vector<EdnValue> kv;
        for (int n = Uniform(0, 20); n > 0; --n) {
          EdnValue key = Value(depth + 1);
          bool dup = false;
          for (size_t i = 0; i < kv.size(); i += 2) dup = dup || kv[i] == key;
          if (dup) continue;
          kv.push_back(std::move(key));
          kv.push_back(Value(depth + 1));
        }
        return EdnValue::Map(std::move(kv));
      }
      case 15: {
        std::vector<EdnValue> items;
        for (EdnValue& item : Items(depth)) {
          bool dup = false;
          for (const EdnValue& seen : items) dup = dup || seen == item;
          if (!dup) items.push_back(std::move(item));
        }
        return EdnValue::Set(std::move(items));
      }
      default:
        return EdnValue::Tagged(Uniform(0, 1) ? "my/tag" : "point",
                                Value(depth + 1));
    }
  }

 private:
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }

  int64_t Int64() {
    switch (Uniform(0, 3)) {
      case 0:
        return Uniform(-10, 10);
      case 1:
        return Uniform(0, 1) ? std::numeric_limits<int64_t>::max()
                             : std::numeric_limits<int64_t>::min();
      default:
        return static_cast<int64_t>(rng_());
    }
  }

  double Double() {
    switch (Uniform(0, 5)) {
      case 0:
        return Uniform(-1000, 1000) / 8.0;
      case 1: {
        const double specials[] = {std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::nan(""),
                                   -0.0,
                                   0.0,
                                   std::numeric_limits<double>::denorm_min()};
        return specials[Uniform(0, 5)];
      }
      default: {
        // Any finite bit pattern.
        for (;;) {
          const uint64_t bits = rng_();
          double d;
          std::memcpy(&d, &bits, sizeof d);
          if (std::isfinite(d)) return d;
        }
      }
    }
  }

  uint32_t CodePoint() {
    switch (Uniform(0, 4)) {
      case 0:
        return static_cast<uint32_t>(Uniform(0, 0x7F));
      case 1:
        return static_cast<uint32_t>(Uniform(0x80, 0xD7FF));
      case 2:
        return static_cast<uint32_t>(Uniform(0xE000, 0x10FFFF));
      default:
        return static_cast<uint32_t>(Uniform(0x20, 0x7E));
    }
  }

  std::string Text() {
    std::string s;
    for (int n = Uniform(0, 30); n > 0; --n) {
      const uint32_t cp = CodePoint();
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        s.push_back(static_cast<char>(0xC0 | cp >> 6));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        s.push_back(static_cast<char>(0xE0 | cp >> 12));
        s.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        s.push_back(static_cast<char>(0xF0 | cp >> 18));
        s.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    }
    return s;
  }

  std::string Part() {
    static constexpr char kFirst[] = "abcxyzABZ*!_?$%&=<>";
    static constexpr char kRest[] = "abcxyzABZ0123456789*+!-_?$%&=<>.:#";
    std::string s(1, kFirst[Uniform(0, sizeof kFirst - 2)]);
    for (int n = Uniform(0, 10); n > 0; --n) {
      s.push_back(kRest[Uniform(0, sizeof kRest - 2)]);
    }
    return s;
  }

  std::string Name() {
    if (Uniform(0, 1)) return Part();
    return Part() + "/" + Part();
  }

  std::vector<EdnValue> Items(int depth) {
    std::vector<EdnValue> items;
    for (int n = Uniform(0, 6); n > 0; --n) items.push_back(Value(depth + 1));
    return items;
  }

  std::mt19937_64 rng_;
};

}  // namespace mentat::edn::testing

#endif  // MENTAT_EDN_TESTING_RANDOM_EDN_H_
