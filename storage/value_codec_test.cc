#include "mentat/storage/value_codec.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mentat::storage {
namespace {

std::string Enc(const Value& v) {
  std::string out;
  EncodeValue(v, &out);
  return out;
}

int Sign(int x) { return (x > 0) - (x < 0); }

int Sign(std::strong_ordering o) { return o < 0 ? -1 : (o > 0 ? 1 : 0); }

int MemSign(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return Sign(c);
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// ---------------------------------------------------------------------------
// Reference comparisons, written without the codec.

int CompareInt(int64_t a, int64_t b) { return (a > b) - (a < b); }

// Numeric order with -0.0 == 0.0, NaN equal to itself and above +inf.
int CompareDouble(double a, double b) {
  bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an && bn ? 0 : (an ? 1 : -1);
  return (a > b) - (a < b);
}

int CompareBytes(std::string_view a, std::string_view b) {
  bool less = std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
      });
  if (less) return -1;
  return a == b ? 0 : 1;
}

// Compares two canonical decimal texts ("-12.5", "0", "0.003") by value:
// integer parts by length then digits, fractions padded with zeros.
int CompareDecimalText(std::string_view a, std::string_view b) {
  bool an = !a.empty() && a[0] == '-';
  bool bn = !b.empty() && b[0] == '-';
  bool az = a == "0", bz = b == "0";
  int as = az ? 0 : (an ? -1 : 1);
  int bs = bz ? 0 : (bn ? -1 : 1);
  if (as != bs) return as < bs ? -1 : 1;
  if (as == 0) return 0;
  if (an) a.remove_prefix(1);
  if (bn) b.remove_prefix(1);
  auto split = [](std::string_view s, std::string* ip, std::string* fp) {
    size_t dot = s.find('.');
    *ip = std::string(s.substr(0, dot));
    *fp = dot == std::string_view::npos ? "" : std::string(s.substr(dot + 1));
    size_t nz = ip->find_first_not_of('0');
    *ip = nz == std::string::npos ? "" : ip->substr(nz);
  };
  std::string ai, af, bi, bf;
  split(a, &ai, &af);
  split(b, &bi, &bf);
  int mag;
  if (ai.size() != bi.size()) {
    mag = ai.size() < bi.size() ? -1 : 1;
  } else if (ai != bi) {
    mag = ai < bi ? -1 : 1;
  } else {
    size_t n = std::max(af.size(), bf.size());
    af.resize(n, '0');
    bf.resize(n, '0');
    mag = af == bf ? 0 : (af < bf ? -1 : 1);
  }
  return as > 0 ? mag : -mag;
}

int ReferenceCompare(const Value& a, const Value& b) {
  if (a.type() != b.type()) {
    return a.type() < b.type() ? -1 : 1;
  }
  switch (a.type()) {
    case ValueType::kRef:
    case ValueType::kLong:
    case ValueType::kInstant:
      return CompareInt(a.as_long(), b.as_long());
    case ValueType::kBoolean:
      return CompareInt(a.as_bool(), b.as_bool());
    case ValueType::kDouble:
      return CompareDouble(a.as_double(), b.as_double());
    case ValueType::kUuid:
    case ValueType::kKeyword:
    case ValueType::kString:
    case ValueType::kBytes:
    case ValueType::kUri:
    case ValueType::kSymbol:
      return CompareBytes(a.text(), b.text());
    case ValueType::kBigInt:
    case ValueType::kBigDec:
      return CompareDecimalText(a.text(), b.text());
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Random values.

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  uint64_t U64() { return rng_(); }
  size_t Below(size_t n) { return static_cast<size_t>(rng_() % n); }
  bool Coin() { return rng_() & 1; }

  int64_t Long() {
    static constexpr int64_t kEdges[] = {
        std::numeric_limits<int64_t>::min(),
        std::numeric_limits<int64_t>::min() + 1,
        -1,
        0,
        1,
        255,
        256,
        -256,
        std::numeric_limits<int64_t>::max() - 1,
        std::numeric_limits<int64_t>::max()};
    switch (Below(4)) {
      case 0:
        return kEdges[Below(std::size(kEdges))];
      case 1:
        return static_cast<int64_t>(Below(2000)) - 1000;
      default:
        return static_cast<int64_t>(U64() >> Below(64));  // all magnitudes
    }
  }

  double Double() {
    static const double kEdges[] = {0.0,
                                    -0.0,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    -std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::denorm_min(),
                                    -std::numeric_limits<double>::denorm_min(),
                                    std::numeric_limits<double>::min(),
                                    -std::numeric_limits<double>::min(),
                                    std::numeric_limits<double>::max(),
                                    -std::numeric_limits<double>::max(),
                                    1.0,
                                    -1.0,
                                    1.5,
                                    0.1};
    switch (Below(4)) {
      case 0:
        return kEdges[Below(std::size(kEdges))];
      case 1: {
        double d = static_cast<double>(static_cast<int64_t>(Below(200)) - 100);
        return d / 4;
      }
      default: {
        // Any bit pattern: covers denormals, NaN payloads, all exponents.
        uint64_t bits = U64();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
      }
    }
  }

  std::string Text(size_t max_len = 12) {
    static const char kAlphabet[] = {'\0', '\x01', '\xFF', '\xFE', 'a',
                                     'b',  'c',    '0',    '/',    '\x7F'};
    std::string s;
    size_t n = Below(max_len + 1);
    for (size_t i = 0; i < n; ++i) {
      s.push_back(Coin() ? kAlphabet[Below(std::size(kAlphabet))]
                         : static_cast<char>(U64()));
    }
    return s;
  }

  std::string Digits(size_t n, bool nonzero_first, bool nonzero_last) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      // Bias towards 0 and 9 to exercise pair boundaries.
      size_t r = Below(14);
      char c = r < 10 ? static_cast<char>('0' + r) : (r < 12 ? '0' : '9');
      if ((i == 0 && nonzero_first) || (i + 1 == n && nonzero_last)) {
        while (c == '0') c = static_cast<char>('1' + Below(9));
      }
      s.push_back(c);
    }
    return s;
  }

  size_t Length() {
    switch (Below(4)) {
      case 0:
        return 1 + Below(3);
      case 1:
        return 1 + Below(20);
      case 2:
        return 1 + Below(300);  // hundreds of digits
      default:
        return 1 + Below(40);
    }
  }

  // Canonical bigint text, built directly.
  std::string BigIntText() {
    if (Below(10) == 0) return "0";
    std::string s = Coin() ? "-" : "";
    return s + Digits(Length(), true, false);
  }

  // Canonical bigdec text, built directly, with wide exponents (long runs
  // of zeros either side of the point).
  std::string BigDecText() {
    if (Below(10) == 0) return "0";
    std::string s = Coin() ? "-" : "";
    switch (Below(3)) {
      case 0:  // integer, maybe with many trailing zeros
        s += Digits(Length(), true, false);
        s.append(Below(3) == 0 ? Below(500) : 0, '0');
        return s;
      case 1:  // integer part and fraction
        s += Digits(Length(), true, false);
        s += ".";
        s += Digits(Length(), false, true);
        return s;
      default:  // pure fraction, maybe tiny
        s += "0.";
        s.append(Below(3) == 0 ? Below(500) : Below(3), '0');
        s += Digits(Length(), false, true);
        return s;
    }
  }

  Value Of(ValueType t) {
    switch (t) {
      case ValueType::kRef:
        return Value::Ref(Long());
      case ValueType::kBoolean:
        return Value::Boolean(Coin());
      case ValueType::kLong:
        return Value::Long(Long());
      case ValueType::kBigInt:
        return Value::BigInt(BigIntText());
      case ValueType::kDouble:
        return Value::Double(Double());
      case ValueType::kBigDec:
        return Value::BigDec(BigDecText());
      case ValueType::kInstant:
        return Value::Instant(Long());
      case ValueType::kUuid: {
        std::string b(16, '\0');
        if (Below(5) != 0) {
          for (char& c : b) c = Coin() ? static_cast<char>(U64()) : '\xFF';
        }
        return Value::Uuid(b);
      }
      case ValueType::kKeyword:
        return Value::Keyword(Text());
      case ValueType::kString:
        return Value::String(Text());
      case ValueType::kBytes:
        return Value::Bytes(Text(40));
      // The codec takes any bytes; ParseUri checks user text first.
      case ValueType::kUri:
        return Value::Uri(Text(30));
      case ValueType::kSymbol:
        return Value::Symbol(Text());
    }
    return Value();
  }

 private:
  std::mt19937_64 rng_;
};

constexpr ValueType kAllTypes[] = {
    ValueType::kRef,     ValueType::kBoolean, ValueType::kLong,
    ValueType::kBigInt,  ValueType::kDouble,  ValueType::kBigDec,
    ValueType::kInstant, ValueType::kUuid,    ValueType::kKeyword,
    ValueType::kString,  ValueType::kBytes,   ValueType::kUri,
    ValueType::kSymbol};

// Prefix relations that a naive encoding gets wrong.
std::vector<Value> FixedTextValues() {
  std::vector<Value> out;
  for (std::string_view s :
       {std::string_view(""), std::string_view("\0", 1),
        std::string_view("\0\0", 2), std::string_view("\x01", 1),
        std::string_view("ab"), std::string_view("ab\0", 3),
        std::string_view("ab\0\0", 4), std::string_view("ab\x01", 3),
        std::string_view("ab\xFF", 3), std::string_view("abc"),
        std::string_view("\xFF"), std::string_view("\xFF\xFF")}) {
    out.push_back(Value::String(s));
    out.push_back(Value::Keyword(s));
    out.push_back(Value::Bytes(s));
    out.push_back(Value::Uri(s));
    out.push_back(Value::Symbol(s));
  }
  return out;
}

void CheckRoundTrip(const Value& v, const std::string& enc) {
  // With and without bytes after it, as inside a key.
  for (std::string_view suffix :
       {std::string_view(""), std::string_view("\0\x01\xFF", 3)}) {
    std::string buf = enc + std::string(suffix);
    std::string_view in = buf;
    Value got;
    absl::Status s = DecodeValue(&in, &got);
    REQUIRE_MESSAGE(s.ok(), s.ToString(), " for ", v.DebugString());
    CHECK_MESSAGE(got == v, got.DebugString(), " vs ", v.DebugString());
    CHECK(got.type() == v.type());
    CHECK(in == suffix);
    CHECK(Enc(got) == enc);
    std::string_view skipped = buf;
    REQUIRE(SkipValue(&skipped).ok());
    CHECK(skipped == suffix);
  }
  if (v.type() == ValueType::kDouble) {
    std::string_view in = enc;
    Value got;
    REQUIRE(DecodeValue(&in, &got).ok());
    double a = v.as_double(), b = got.as_double();
    if (std::isnan(a)) {
      CHECK(std::isnan(b));
    } else {
      CHECK(a == b);
      if (a != 0) CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    }
  }
}

TEST_CASE("value codec: randomized order and round trip") {
  Gen gen(0x5eed1234abcdULL);
  std::vector<Value> values = FixedTextValues();
  for (ValueType t : kAllTypes) {
    for (int i = 0; i < 400; ++i) values.push_back(gen.Of(t));
  }
  std::vector<std::string> encs;
  encs.reserve(values.size());
  for (const Value& v : values) encs.push_back(Enc(v));

  for (size_t i = 0; i < values.size(); ++i) {
    CHECK(encs[i][0] == static_cast<char>(values[i].type()));
    CheckRoundTrip(values[i], encs[i]);
  }

  // Every pair of the same type; a sample across types.
  size_t checked = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < values.size(); ++j) {
      bool same_type = values[i].type() == values[j].type();
      if (!same_type && gen.Below(50) != 0) continue;
      int ref = ReferenceCompare(values[i], values[j]);
      int mem = MemSign(encs[i], encs[j]);
      int op = Sign(values[i] <=> values[j]);
      if (ref != mem || ref != op) {
        FAIL_CHECK("order mismatch: ", values[i].DebugString(), " vs ",
                   values[j].DebugString(), " ref=", ref, " mem=", mem,
                   " op=", op);
      }
      CHECK((values[i] == values[j]) == (ref == 0));
      if (ref == 0) CHECK(encs[i] == encs[j]);
      ++checked;
    }
  }
  CHECK(checked > 1000000);

  // Self-delimiting: bytes after a value never change the order of two
  // different values.
  for (int n = 0; n < 200000; ++n) {
    size_t i = gen.Below(values.size()), j = gen.Below(values.size());
    int ref = ReferenceCompare(values[i], values[j]);
    if (ref == 0) continue;
    std::string a = encs[i] + gen.Text(10);
    std::string b = encs[j] + gen.Text(10);
    CHECK(MemSign(a, b) == ref);
  }

  // Sorting by encoding sorts by value.
  std::vector<size_t> idx(values.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(),
            [&](size_t a, size_t b) { return encs[a] < encs[b]; });
  for (size_t k = 1; k < idx.size(); ++k) {
    CHECK(ReferenceCompare(values[idx[k - 1]], values[idx[k]]) <= 0);
  }
}

TEST_CASE("value codec: truncated encodings are rejected") {
  Gen gen(42);
  for (ValueType t : kAllTypes) {
    for (int i = 0; i < 50; ++i) {
      std::string enc = Enc(gen.Of(t));
      for (size_t len = 0; len < enc.size(); ++len) {
        std::string_view in(enc.data(), len);
        Value v;
        absl::Status s = DecodeValue(&in, &v);
        CHECK_MESSAGE(absl::IsDataLoss(s), "prefix of length ", len);
      }
    }
  }
}

TEST_CASE("value codec: garbage never decodes to a non-canonical value") {
  Gen gen(7);
  size_t ok = 0;
  for (int n = 0; n < 200000; ++n) {
    std::string buf;
    buf.push_back(static_cast<char>(gen.Below(13)));
    if (gen.Coin() && (buf[0] == 4 || buf[0] == 6)) {
      buf.push_back(static_cast<char>(1 + gen.Below(3)));  // sign class
    }
    size_t len = gen.Below(24);
    for (size_t i = 0; i < len; ++i) {
      buf.push_back(gen.Coin() ? static_cast<char>(gen.U64())
                               : static_cast<char>(gen.Below(4)));
    }
    std::string_view in = buf;
    Value v;
    absl::Status s = DecodeValue(&in, &v);
    // Skipping accepts and consumes exactly what decoding does.
    std::string_view skipped = buf;
    const absl::Status skip = SkipValue(&skipped);
    CHECK(skip.ok() == s.ok());
    if (!s.ok()) {
      CHECK(absl::IsDataLoss(s));
      CHECK(absl::IsDataLoss(skip));
      continue;
    }
    CHECK(skipped.size() == in.size());
    ++ok;
    size_t consumed = buf.size() - in.size();
    CHECK(Enc(v) == buf.substr(0, consumed));
  }
  CHECK(ok > 1000);
}

TEST_CASE("value codec: malformed input messages") {
  auto decode = [](std::string bytes) {
    std::string_view in = bytes;
    Value v;
    return DecodeValue(&in, &v);
  };
  CHECK(absl::IsDataLoss(decode("")));
  absl::Status bad_tag = decode(std::string("\x7F", 1));
  CHECK(absl::IsDataLoss(bad_tag));
  CHECK(bad_tag.message().find("tag") != std::string_view::npos);
  CHECK(absl::IsDataLoss(decode(std::string("\x00", 1))));
  absl::Status bad_escape =
      decode(std::string("\x0A"
                         "ab\x00\x02",
                         5));
  CHECK(absl::IsDataLoss(bad_escape));
  CHECK(bad_escape.message().find("escape") != std::string_view::npos);
  CHECK(
      absl::IsDataLoss(decode(std::string("\x0A"
                                          "ab\x00",
                                          4))));
  CHECK(absl::IsDataLoss(decode(std::string("\x02\x02", 2))));  // bool 2
  // Non-canonical doubles: -0.0 and a NaN with a payload.
  std::string neg_zero = Enc(Value::Double(0.0));
  neg_zero.replace(1, 8, "\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFF");
  CHECK(absl::IsDataLoss(decode(neg_zero)));
  CHECK(absl::IsDataLoss(
      decode(std::string("\x05\xFF\xF8\x00\x00\x00\x00\x00\x01", 9))));
  // Big numbers: bad sign byte, leading zero, trailing zero, fraction in a
  // bigint, exponent out of range.
  std::string one = Enc(Value::BigDec("1"));
  CHECK(absl::IsDataLoss(decode(std::string("\x06\x04", 2))));
  std::string lead = one;
  lead.back() = 2;  // pair "01"
  CHECK(absl::IsDataLoss(decode(lead)));
  std::string trail = Enc(Value::BigDec("123"));
  trail.back() = 0;  // pair "00"
  CHECK(absl::IsDataLoss(decode(trail)));
  std::string frac = Enc(Value::BigDec("1.5"));
  frac[0] = static_cast<char>(ValueType::kBigInt);
  CHECK(absl::IsDataLoss(decode(frac)));
  std::string huge = one;
  huge.replace(2, 4, std::string("\xFF\x00\x00\x00", 4));
  CHECK(absl::IsDataLoss(decode(huge)));
  std::string odd_digit = one;
  odd_digit.back() = static_cast<char>(201);
  CHECK(absl::IsDataLoss(decode(odd_digit)));
}

TEST_CASE("value codec: fixed encodings") {
  CHECK(Enc(Value::Long(0)) == std::string("\x03\x80\0\0\0\0\0\0\0", 9));
  CHECK(Enc(Value::Long(-1)) ==
        std::string("\x03\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 9));
  CHECK(Enc(Value::Boolean(true)) == std::string("\x02\x01", 2));
  CHECK(Enc(Value::String(std::string_view("a\0b", 3))) ==
        std::string("\x0A"
                    "a\x00\xFF"
                    "b\x00\x01",
                    7));
  CHECK(Enc(Value::Double(-0.0)) == Enc(Value::Double(0.0)));
  CHECK(Enc(Value::Double(std::nan("1"))) ==
        Enc(Value::Double(-std::numeric_limits<double>::quiet_NaN())));
  CHECK(Enc(Value::BigInt("0")) == std::string("\x04\x02", 2));
  // 15 = 0.15e2: positive, exponent 2, one final pair 15 -> 30.
  CHECK(Enc(Value::BigInt("15")) ==
        std::string("\x04\x03\x80\x00\x00\x02\x1E", 7));
  CHECK(Enc(Value::BigInt("1000")) ==
        std::string("\x04\x03\x80\x00\x00\x04\x14", 7));
}

TEST_CASE("value codec: doubles sort numerically") {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> ds = {-inf,
                            -1e300,
                            -1.5,
                            -std::numeric_limits<double>::denorm_min(),
                            0.0,
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(),
                            1.0,
                            1.5,
                            1e300,
                            inf,
                            std::nan("")};
  for (size_t i = 1; i < ds.size(); ++i) {
    CHECK(Enc(Value::Double(ds[i - 1])) < Enc(Value::Double(ds[i])));
    CHECK(Value::Double(ds[i - 1]) < Value::Double(ds[i]));
  }
}

TEST_CASE("value codec: big number order examples") {
  auto dec = [](std::string_view s) { return Enc(*ParseBigDec(s)); };
  CHECK(dec("1.5") < dec("1.50001"));
  CHECK(dec("1.50001") < dec("2"));
  CHECK(dec("2") < dec("10"));
  CHECK(dec("-2") < dec("-1.5"));
  CHECK(dec("-1.5") < dec("-0.001"));
  CHECK(dec("-0.001") < dec("0"));
  CHECK(dec("0") < dec("0.001"));
  CHECK(dec("0.001") < dec("0.01"));
  CHECK(dec("1e-100") < dec("1e100"));
  auto big = [](std::string_view s) { return Enc(*ParseBigInt(s)); };
  CHECK(big("-1000") < big("-999"));
  CHECK(big("-1") < big("0"));
  CHECK(big("9") < big("10"));
  CHECK(big("99999999999999999999") < big("100000000000000000000"));
}

TEST_CASE("ParseBigInt") {
  struct Case {
    std::string_view in, out;
  };
  for (Case c :
       {Case{"0", "0"}, Case{"-0", "0"}, Case{"+0", "0"}, Case{"007", "7"},
        Case{"-007", "-7"}, Case{"+42", "42"}, Case{"123N", "123"},
        Case{"-123456789012345678901234567890",
             "-123456789012345678901234567890"}}) {
    absl::StatusOr<Value> v = ParseBigInt(c.in);
    REQUIRE_MESSAGE(v.ok(), c.in);
    CHECK(v->type() == ValueType::kBigInt);
    CHECK(v->text() == c.out);
  }
  for (std::string_view bad :
       {"", "-", "+", "1.5", "1e3", "12a", " 1", "1 ", "--1", "N", "0x10"}) {
    absl::StatusOr<Value> v = ParseBigInt(bad);
    CHECK_MESSAGE(absl::IsInvalidArgument(v.status()), bad);
    if (!bad.empty()) {
      CHECK(v.status().message().find(std::string(bad)) !=
            std::string_view::npos);
    }
  }
}

TEST_CASE("ParseBigDec") {
  struct Case {
    std::string_view in, out;
  };
  for (Case c : {Case{"0", "0"}, Case{"-0", "0"}, Case{"0.000", "0"},
                 Case{"-0.0e5", "0"}, Case{"1.50", "1.5"}, Case{"1.5", "1.5"},
                 Case{"1.5e3", "1500"}, Case{"1.5E-3", "0.0015"},
                 Case{"-0.00120", "-0.0012"}, Case{"1000", "1000"},
                 Case{"001000.000", "1000"}, Case{".5", "0.5"}, Case{"5.", "5"},
                 Case{"12.5M", "12.5"}, Case{"+3.25", "3.25"}, Case{"1e0", "1"},
                 Case{"123.456e-1", "12.3456"}, Case{"123.456e+5", "12345600"},
                 Case{"-1e-5", "-0.00001"}}) {
    absl::StatusOr<Value> v = ParseBigDec(c.in);
    REQUIRE_MESSAGE(v.ok(), c.in);
    CHECK(v->type() == ValueType::kBigDec);
    CHECK_MESSAGE(v->text() == c.out, c.in);
  }
  CHECK(*ParseBigDec("1.50") == *ParseBigDec("1.5"));
  for (std::string_view bad :
       {"", ".", "-", "e5", "1e", "1e+", "1.5.5", "1..5", "abc", "1,5", "1e5.5",
        "1e999999999999", "1e-70000", "--1", "1.5MM"}) {
    absl::StatusOr<Value> v = ParseBigDec(bad);
    CHECK_MESSAGE(absl::IsInvalidArgument(v.status()), bad);
  }
}

TEST_CASE("ParseBigDec and ParseBigInt agree with the canonical form") {
  Gen gen(99);
  for (int i = 0; i < 3000; ++i) {
    std::string d = gen.BigDecText();
    absl::StatusOr<Value> v = ParseBigDec(d);
    REQUIRE_MESSAGE(v.ok(), d);
    CHECK(v->text() == d);
    std::string b = gen.BigIntText();
    absl::StatusOr<Value> w = ParseBigInt(b);
    REQUIRE_MESSAGE(w.ok(), b);
    CHECK(w->text() == b);
    // The same number written with an exponent and padding zeros.
    std::string padded = d[0] == '-' ? "-00" + d.substr(1) : "00" + d;
    absl::StatusOr<Value> shifted = ParseBigDec(padded + "0e0");
    if (d.find('.') != std::string::npos) {
      REQUIRE(shifted.ok());
      CHECK(shifted->text() == d);
    }
    absl::StatusOr<Value> times = ParseBigDec(b + "e-3");
    REQUIRE(times.ok());
    absl::StatusOr<Value> back = ParseBigDec(times->text() + "e3");
    REQUIRE(back.ok());
    CHECK(back->text() == b);
  }
}

}  // namespace
}  // namespace mentat::storage

namespace mentat::storage {
namespace {

TEST_CASE("value codec: uris and symbols sort after every older type") {
  // The tags were appended (12, 13): values written before keep their
  // bytes, and a uri never sorts among strings.
  CHECK(Enc(Value::Uri("a"))[0] == '\x0C');
  CHECK(Enc(Value::Symbol("a"))[0] == '\x0D');
  CHECK(Enc(Value::Bytes("\xFF")) < Enc(Value::Uri("")));
  CHECK(Enc(Value::Uri("\xFF")) < Enc(Value::Symbol("")));
  // Within the type, byte order of the text, a prefix first.
  CHECK(Enc(Value::Uri("../a")) < Enc(Value::Uri("HTTPS://x")));
  CHECK(Enc(Value::Uri("https://x")) < Enc(Value::Uri("https://x/")));
  CHECK(Enc(Value::Symbol("alpha")) < Enc(Value::Symbol("beta")));
  CHECK(Value::Uri("x") != Value::String("x"));
  CHECK(Value::Symbol("x") != Value::Keyword("x"));
}

TEST_CASE("ParseUri") {
  for (std::string_view ok :
       {"https://example.com/a?b=1#c", "urn:isbn:0451450523", "../rel/path",
        "mailto:a@b.org", "http://[::1]:8080/", "file:///tmp/x", "a",
        "HTTPS://Example.COM/%7Ex", "?q", "#frag"}) {
    absl::StatusOr<Value> v = ParseUri(ok);
    REQUIRE_MESSAGE(v.ok(), ok, ": ", v.status().ToString());
    CHECK(v->type() == ValueType::kUri);
    CHECK(v->text() == ok);  // kept as written
  }
  struct Bad {
    std::string_view text;
    std::string_view fragment;
  };
  for (const Bad& bad : {
           Bad{"", "the URI is empty"},
           Bad{"http://exa mple.com/",
               "\"http://exa mple.com/\": not RFC "
               "3986 syntax at offset 10"},
           Bad{"http://[::1", "offset"},
           Bad{"a\"b", "offset 1"},
           Bad{"%zz", "offset 1"},
           Bad{std::string_view("a\0b", 3), "\"a\\x00"},
       }) {
    absl::StatusOr<Value> v = ParseUri(bad.text);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(v.status().message());
    CHECK_MESSAGE(message.find(bad.fragment) != std::string::npos, message);
  }
}

}  // namespace
}  // namespace mentat::storage
