#include "mentat/storage/keys.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "mentat/storage/value_codec.h"

namespace mentat::storage {
namespace {

constexpr IndexOrder kOrders[] = {IndexOrder::kEavt, IndexOrder::kAevt,
                                  IndexOrder::kAvet, IndexOrder::kVaet};

std::string Key(IndexOrder order, const Datom& d) {
  std::string out;
  EncodeKey(order, d, &out);
  return out;
}

// Random datoms with few distinct ids, so tuples share prefixes.
class DatomGen {
 public:
  explicit DatomGen(uint64_t seed) : rng_(seed) {}

  size_t Below(size_t n) { return static_cast<size_t>(rng_() % n); }

  EntityId Id() {
    switch (Below(4)) {
      case 0:
        return static_cast<EntityId>(Below(4));
      case 1:
        return static_cast<EntityId>(255 + Below(3));  // byte carry
      case 2:
        return 17592186045418 + static_cast<EntityId>(Below(3));
      default:
        return static_cast<EntityId>(rng_() >> 1);  // any nonnegative id
    }
  }

  Value AnyValue(bool ref_only) {
    if (ref_only) return Value::Ref(Id());
    switch (Below(6)) {
      case 0:
        return Value::Ref(Id());
      case 1:
        return Value::Long(static_cast<int64_t>(Below(7)) - 3);
      case 2: {
        static const char* kStrings[] = {"", "a", "ab", "abc", "b"};
        std::string s = kStrings[Below(5)];
        if (Below(3) == 0) s.push_back('\0');
        return Value::String(s);
      }
      case 3:
        return Value::Keyword(Below(2) ? "a/b" : "a/c");
      case 4:
        return Value::Double(static_cast<double>(Below(5)) - 2.5);
      default:
        return Value::BigDec(Below(2) ? "1.5" : "-0.25");
    }
  }

  Datom Next(bool ref_only) {
    Datom d;
    d.e = Id();
    d.a = Id();
    d.v = AnyValue(ref_only);
    return d;
  }

 private:
  std::mt19937_64 rng_;
};

// The tuple each order sorts by.
bool TupleLess(IndexOrder order, const Datom& x, const Datom& y) {
  switch (order) {
    case IndexOrder::kEavt:
      return std::tie(x.e, x.a, x.v) < std::tie(y.e, y.a, y.v);
    case IndexOrder::kAevt:
      return std::tie(x.a, x.e, x.v) < std::tie(y.a, y.e, y.v);
    case IndexOrder::kAvet:
      return std::tie(x.a, x.v, x.e) < std::tie(y.a, y.v, y.e);
    case IndexOrder::kVaet:
      return std::tie(x.v, x.a, x.e) < std::tie(y.v, y.a, y.e);
  }
  return false;
}

TEST_CASE("IndexOrderName") {
  CHECK(IndexOrderName(IndexOrder::kEavt) == "eavt");
  CHECK(IndexOrderName(IndexOrder::kAevt) == "aevt");
  CHECK(IndexOrderName(IndexOrder::kAvet) == "avet");
  CHECK(IndexOrderName(IndexOrder::kVaet) == "vaet");
}

TEST_CASE("entity ids are 8 bytes big-endian") {
  std::string out;
  AppendEntityId(0x0102030405060708, &out);
  CHECK(out == "\x01\x02\x03\x04\x05\x06\x07\x08");
  out.append("rest");
  std::string_view in = out;
  EntityId id = 0;
  REQUIRE(ReadEntityId(&in, &id).ok());
  CHECK(id == 0x0102030405060708);
  CHECK(in == "rest");
  EntityId untouched = 5;
  CHECK(absl::IsDataLoss(ReadEntityId(&in, &untouched)));
  CHECK(untouched == 5);
}

TEST_CASE("key layouts") {
  const Value v = Value::String("x");
  std::string venc;
  EncodeValue(v, &venc);
  std::string e, a, ref;
  AppendEntityId(5, &e);
  AppendEntityId(72, &a);
  AppendEntityId(9, &ref);

  std::string k;
  EavtKey::Encode(5, 72, v, &k);
  CHECK(k == e + a + venc);
  k.clear();
  AevtKey::Encode(72, 5, v, &k);
  CHECK(k == a + e + venc);
  k.clear();
  AvetKey::Encode(72, v, 5, &k);
  CHECK(k == a + venc + e);
  k.clear();
  VaetKey::Encode(9, 72, 5, &k);
  CHECK(k == ref + a + e);

  Datom d{.e = 5, .a = 72, .v = v};
  CHECK(Key(IndexOrder::kEavt, d) == e + a + venc);
  CHECK(Key(IndexOrder::kAevt, d) == a + e + venc);
  CHECK(Key(IndexOrder::kAvet, d) == a + venc + e);
  d.v = Value::Ref(9);
  CHECK(Key(IndexOrder::kVaet, d) == ref + a + e);

  k.clear();
  EavtKey::EncodePrefix(5, &k);
  CHECK(k == e);
  k.clear();
  EavtKey::EncodePrefix(5, 72, &k);
  CHECK(k == e + a);
  k.clear();
  AevtKey::EncodePrefix(72, &k);
  CHECK(k == a);
  k.clear();
  AevtKey::EncodePrefix(72, 5, &k);
  CHECK(k == a + e);
  k.clear();
  AvetKey::EncodePrefix(72, &k);
  CHECK(k == a);
  k.clear();
  AvetKey::EncodePrefix(72, v, &k);
  CHECK(k == a + venc);
  k.clear();
  VaetKey::EncodePrefix(9, &k);
  CHECK(k == ref);
  k.clear();
  VaetKey::EncodePrefix(9, 72, &k);
  CHECK(k == ref + a);
}

TEST_CASE("keys: round trip, order and prefixes (randomized)") {
  DatomGen gen(2024);
  for (IndexOrder order : kOrders) {
    CAPTURE(IndexOrderName(order));
    const bool refs = order == IndexOrder::kVaet;
    std::vector<Datom> datoms;
    for (int i = 0; i < 1500; ++i) datoms.push_back(gen.Next(refs));
    std::vector<std::string> keys;
    for (const Datom& d : datoms) keys.push_back(Key(order, d));

    for (size_t i = 0; i < datoms.size(); ++i) {
      Datom got;
      got.tx = 77;
      got.added = false;
      absl::Status s = DecodeKey(order, keys[i], &got);
      REQUIRE_MESSAGE(s.ok(), s.ToString());
      CHECK(got.e == datoms[i].e);
      CHECK(got.a == datoms[i].a);
      CHECK(got.v == datoms[i].v);
      CHECK(got.v.type() == datoms[i].v.type());
      CHECK(got.tx == 77);  // left alone
      CHECK(got.added == false);
    }

    for (int n = 0; n < 100000; ++n) {
      const size_t i = gen.Below(datoms.size());
      const size_t j = gen.Below(datoms.size());
      const bool less = TupleLess(order, datoms[i], datoms[j]);
      const bool greater = TupleLess(order, datoms[j], datoms[i]);
      CHECK((keys[i] < keys[j]) == less);
      CHECK((keys[i] > keys[j]) == greater);
      CHECK((keys[i] == keys[j]) == (!less && !greater));
    }

    // Each prefix selects exactly the datoms that match it, and every
    // matching key is below the prefix's successor.
    for (size_t i = 0; i < 200; ++i) {
      const Datom& p = datoms[gen.Below(datoms.size())];
      std::string p1, p2;
      switch (order) {
        case IndexOrder::kEavt:
          EavtKey::EncodePrefix(p.e, &p1);
          EavtKey::EncodePrefix(p.e, p.a, &p2);
          break;
        case IndexOrder::kAevt:
          AevtKey::EncodePrefix(p.a, &p1);
          AevtKey::EncodePrefix(p.a, p.e, &p2);
          break;
        case IndexOrder::kAvet:
          AvetKey::EncodePrefix(p.a, &p1);
          AvetKey::EncodePrefix(p.a, p.v, &p2);
          break;
        case IndexOrder::kVaet:
          VaetKey::EncodePrefix(p.v.as_ref(), &p1);
          VaetKey::EncodePrefix(p.v.as_ref(), p.a, &p2);
          break;
      }
      const std::string s1 = PrefixSuccessor(p1), s2 = PrefixSuccessor(p2);
      for (size_t j = 0; j < datoms.size(); ++j) {
        const Datom& d = datoms[j];
        bool m1 = false, m2 = false;
        switch (order) {
          case IndexOrder::kEavt:
            m1 = d.e == p.e;
            m2 = m1 && d.a == p.a;
            break;
          case IndexOrder::kAevt:
            m1 = d.a == p.a;
            m2 = m1 && d.e == p.e;
            break;
          case IndexOrder::kAvet:
            m1 = d.a == p.a;
            m2 = m1 && d.v == p.v;
            break;
          case IndexOrder::kVaet:
            m1 = d.v == p.v;
            m2 = m1 && d.a == p.a;
            break;
        }
        const std::string_view k = keys[j];
        CHECK(k.starts_with(p1) == m1);
        CHECK(k.starts_with(p2) == m2);
        // A seek range [prefix, successor) holds exactly the matches.
        CHECK((k >= p1 && (s1.empty() || k < s1)) == m1);
        CHECK((k >= p2 && (s2.empty() || k < s2)) == m2);
      }
    }
  }
}

TEST_CASE("keys: DecodeKeyIds reads e and a and leaves v alone") {
  DatomGen gen(11);
  for (int n = 0; n < 2000; ++n) {
    for (IndexOrder order : kOrders) {
      const Datom d = gen.Next(order == IndexOrder::kVaet);
      Datom got;
      got.v = Value::String("untouched");
      REQUIRE(DecodeKeyIds(order, Key(order, d), &got).ok());
      CHECK(got.e == d.e);
      CHECK(got.a == d.a);
      // VAET's value is an id, read as the others are.
      CHECK(got.v ==
            (order == IndexOrder::kVaet ? d.v : Value::String("untouched")));
    }
  }
}

TEST_CASE("keys: every key with e=5 starts with the e=5 prefix") {
  std::string prefix;
  EavtKey::EncodePrefix(5, &prefix);
  for (EntityId a : {0, 1, 72, 255, 256}) {
    for (const Value& v :
         {Value::Long(-1), Value::String(""), Value::BigInt("-99"),
          Value::Double(-0.0), Value::Bytes(std::string(3, '\xFF'))}) {
      std::string k;
      EavtKey::Encode(5, a, v, &k);
      CHECK(k.starts_with(prefix));
      std::string other;
      EavtKey::Encode(6, a, v, &other);
      CHECK_FALSE(other.starts_with(prefix));
      std::string four;
      EavtKey::Encode(4, a, v, &four);
      CHECK(four < k);
      CHECK(k < other);
    }
  }
}

TEST_CASE("keys: malformed keys are rejected") {
  Datom d{.e = 5, .a = 72, .v = Value::String("hello")};
  for (IndexOrder order : kOrders) {
    CAPTURE(IndexOrderName(order));
    Datom src = d;
    if (order == IndexOrder::kVaet) src.v = Value::Ref(9);
    const std::string key = Key(order, src);
    Datom out;
    REQUIRE(DecodeKey(order, key, &out).ok());
    for (size_t len = 0; len < key.size(); ++len) {
      absl::Status s = DecodeKey(order, key.substr(0, len), &out);
      CHECK_MESSAGE(absl::IsDataLoss(s), "length ", len);
    }
    absl::Status trailing = DecodeKey(order, key + "x", &out);
    CHECK(absl::IsDataLoss(trailing));
    CHECK(std::string(trailing.message()).find(IndexOrderName(order)) !=
          std::string::npos);
  }
  // A bad value tag inside the key.
  std::string bad;
  AppendEntityId(5, &bad);
  AppendEntityId(72, &bad);
  bad.push_back('\x7F');
  Datom out;
  CHECK(absl::IsDataLoss(DecodeKey(IndexOrder::kEavt, bad, &out)));
  // On failure the datom is left alone.
  out.e = 1234;
  CHECK_FALSE(DecodeKey(IndexOrder::kEavt, "short", &out).ok());
  CHECK(out.e == 1234);
}

TEST_CASE("PrefixSuccessor") {
  CHECK(PrefixSuccessor("abc") == "abd");
  CHECK(PrefixSuccessor(std::string_view("a\xFF\xFF")) == "b");
  CHECK(PrefixSuccessor(std::string_view("\x01\xFE")) == "\x01\xFF");
  CHECK(PrefixSuccessor(std::string_view("\xFF\xFF")).empty());
  CHECK(PrefixSuccessor("").empty());
  CHECK(PrefixSuccessor(std::string_view("\0", 1)) == "\x01");
}

}  // namespace
}  // namespace mentat::storage
