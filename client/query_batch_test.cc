// QueryBatch reads a QueryResponse from its wire bytes as protobuf's parser
// does: every value type, fields in any order, unknown fields, and bytes
// that are not a message (a clear error, never a crash).

#include "mentat/client/query_batch.h"

#include <doctest/doctest.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <bit>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mentat::client {
namespace {

using google::protobuf::util::MessageDifferencer;

// One value of every kind, with the edges of each encoding.
std::vector<v1::Value> EveryKind() {
  std::vector<v1::Value> out;
  const auto add = [&](auto set) {
    v1::Value v;
    set(v);
    out.push_back(v);
  };
  add([](v1::Value& v) { v.set_nil(true); });
  for (int64_t n :
       {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{127}, int64_t{128},
        int64_t{1} << 56, std::numeric_limits<int64_t>::min(),
        std::numeric_limits<int64_t>::max()}) {
    add([n](v1::Value& v) { v.set_long_value(n); });
    add([n](v1::Value& v) { v.set_ref(n); });
    add([n](v1::Value& v) { v.set_instant_micros(n); });
  }
  for (double d :
       {0.0, -0.0, 1.5, -1e300, std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::denorm_min(),
        std::numeric_limits<double>::quiet_NaN()}) {
    add([d](v1::Value& v) { v.set_double_value(d); });
  }
  add([](v1::Value& v) { v.set_string_value(""); });
  add([](v1::Value& v) { v.set_string_value("Issue 42: crash"); });
  add([](v1::Value& v) {
    v.set_string_value("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 " +
                       std::string(300, 'x'));
  });
  add([](v1::Value& v) { v.set_keyword("state/open"); });
  add([](v1::Value& v) { v.set_boolean(true); });
  add([](v1::Value& v) { v.set_boolean(false); });
  add([](v1::Value& v) {
    v.set_uuid(std::string("\x00\x01\xff\x80", 4) + std::string(12, '\x7f'));
  });
  add([](v1::Value& v) { v.set_bigint("-123456789012345678901234567890"); });
  add([](v1::Value& v) { v.set_bigdec("-12.50"); });
  add([](v1::Value& v) { v.set_bytes_value(std::string("\x00\xff\x00", 3)); });
  add([](v1::Value& v) { v.set_symbol("ns/foo"); });
  add([](v1::Value& v) { v.set_char_value(0x1F600); });
  add([](v1::Value& v) { v.set_uri("https://example.com/a?b"); });
  add([](v1::Value& v) { v.mutable_list(); });  // empty
  add([](v1::Value& v) {
    v.mutable_list()->add_values()->set_long_value(1);
    v.mutable_list()->add_values()->set_string_value("two");
    v.mutable_list()->add_values()->mutable_set()->add_values()->set_ref(3);
  });
  add([](v1::Value& v) {
    v.mutable_set()->add_values()->set_keyword("a/b");
    v.mutable_set()->add_values();  // a value of no kind
  });
  add([](v1::Value& v) {
    v.mutable_tuple()->add_values()->set_long_value(7);
    v.mutable_tuple()->add_values()->set_nil(true);
  });
  add([](v1::Value& v) {
    v1::ValueMap* m = v.mutable_map();
    v1::MapEntry* e = m->add_entries();
    e->mutable_key()->set_keyword("issue/title");
    e->mutable_value()->set_string_value("Issue 1: crash");
    e = m->add_entries();
    e->mutable_key()->set_keyword("issue/tags");
    e->mutable_value()->mutable_map()->add_entries()->mutable_key()->set_ref(9);
    m->add_entries();  // neither key nor value
  });
  add([](v1::Value& v) {
    v.mutable_tagged()->set_tag("my/tag");
    v.mutable_tagged()->mutable_value()->mutable_list()->add_values()->set_uri(
        "urn:x");
  });
  add([](v1::Value& v) { v.mutable_tagged()->set_tag("only/tag"); });
  out.emplace_back();  // no kind at all
  return out;
}

v1::QueryResponse Sample() {
  v1::QueryResponse m;
  m.add_columns("?e");
  m.add_columns("(pull ?e [*])");
  m.set_find_kind(v1::FIND_RELATION);
  m.set_basis_tx(13194139534312);
  for (const v1::Value& v : EveryKind()) {
    v1::Row* row = m.add_rows();
    *row->add_values() = v;
    row->add_values()->set_ref(17592186045418);
  }
  m.add_rows();  // a row of no values
  m.set_resume_token(std::string("\x00tok\xff", 5));
  m.set_rows_so_far(1234567);
  m.set_more(true);
  return m;
}

// Equal messages, a NaN equal to a NaN.
bool SameValue(const google::protobuf::Message& a,
               const google::protobuf::Message& b, std::string* why = nullptr) {
  MessageDifferencer differencer;
  google::protobuf::util::DefaultFieldComparator nan_is_nan;
  nan_is_nan.set_treat_nan_as_equal(true);
  differencer.set_field_comparator(&nan_is_nan);
  if (why != nullptr) differencer.ReportDifferencesToString(why);
  return differencer.Compare(a, b);
}

// What protobuf makes of `bytes`, against what QueryBatch does: the same
// verdict, and when both read it, the same message.
void CheckAgainstProtobuf(const std::string& bytes) {
  v1::QueryResponse parsed;
  const bool protobuf_ok = parsed.ParseFromString(bytes);
  QueryBatch batch;
  const absl::Status s = batch.Decode(bytes);
  if (!s.ok() && protobuf_ok &&
      std::string(s.message()).find("twice") != std::string::npos) {
    return;  // protobuf merged a message field given twice (see header)
  }
  REQUIRE_MESSAGE(s.ok() == protobuf_ok, s.ToString());
  if (s.ok()) {
    parsed.DiscardUnknownFields();  // QueryBatch keeps none
    std::string differences;
    CHECK_MESSAGE(SameValue(batch.ToMessage(), parsed, &differences),
                  differences);
  } else {
    CHECK(s.code() == absl::StatusCode::kDataLoss);
    CHECK(batch.rows_size() == 0);
  }
}

// Appends a tag and a varint, for hand-made messages.
void Varint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void Tag(int field, int type, std::string* out) {
  Varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(type), out);
}
void LenField(int field, const std::string& body, std::string* out) {
  Tag(field, 2, out);
  Varint(body.size(), out);
  out->append(body);
}

TEST_CASE("QueryBatch: every value type reads as protobuf parses it") {
  const v1::QueryResponse m = Sample();
  const std::string bytes = m.SerializeAsString();
  QueryBatch batch;
  REQUIRE(batch.Decode(bytes).ok());

  SUBCASE("the message's fields") {
    CHECK(batch.columns() ==
          std::vector<std::string_view>{"?e", "(pull ?e [*])"});
    CHECK(batch.find_kind() == v1::FIND_RELATION);
    CHECK(batch.basis_tx() == 13194139534312);
    CHECK(batch.resume_token() == std::string_view("\x00tok\xff", 5));
    CHECK(batch.rows_so_far() == 1234567);
    CHECK(batch.more());
    CHECK(batch.rows_size() == m.rows_size());
  }

  SUBCASE("each value, through its accessors") {
    for (int i = 0; i < m.rows_size(); ++i) {
      CAPTURE(i);
      const v1::Row& want = m.rows(i);
      const WireRow got = batch.row(i);
      REQUIRE(got.size() == static_cast<size_t>(want.values_size()));
      for (size_t j = 0; j < got.size(); ++j) {
        const v1::Value& w = want.values(static_cast<int>(j));
        const WireValue& g = got[j];
        CHECK(g.kind_case() == w.kind_case());
        CHECK(g.nil() == w.nil());
        CHECK(g.long_value() == w.long_value());
        CHECK(g.ref() == w.ref());
        CHECK(std::bit_cast<uint64_t>(g.double_value()) ==
              std::bit_cast<uint64_t>(w.double_value()));
        CHECK(g.string_value() == w.string_value());
        CHECK(g.keyword() == w.keyword());
        CHECK(g.boolean() == w.boolean());
        CHECK(g.instant_micros() == w.instant_micros());
        CHECK(g.uuid() == w.uuid());
        CHECK(g.bigint() == w.bigint());
        CHECK(g.bigdec() == w.bigdec());
        CHECK(g.bytes_value() == w.bytes_value());
        CHECK(g.symbol() == w.symbol());
        CHECK(g.char_value() == w.char_value());
        CHECK(g.uri() == w.uri());
        CHECK(g.list().size() == static_cast<size_t>(w.list().values_size()));
        CHECK(g.set().size() == static_cast<size_t>(w.set().values_size()));
        CHECK(g.tuple().size() == static_cast<size_t>(w.tuple().values_size()));
        CHECK(g.map().size() == static_cast<size_t>(w.map().entries_size()));
        CHECK(g.tagged().tag() == w.tagged().tag());
        CHECK(SameValue(g.ToMessage(), w));
      }
    }
  }

  SUBCASE("nested collections, element by element") {
    v1::Value list;
    list.mutable_list()->add_values()->set_long_value(1);
    list.mutable_list()->add_values()->set_keyword("k/w");
    v1::QueryResponse one;
    *one.add_rows()->add_values() = list;
    const std::string b = one.SerializeAsString();
    QueryBatch nested;
    REQUIRE(nested.Decode(b).ok());
    std::vector<std::string> seen;
    for (const WireValue& v : nested.row(0)[0].list()) {
      seen.push_back(v.kind_case() == v1::Value::kLongValue
                         ? std::to_string(v.long_value())
                         : std::string(v.keyword()));
    }
    CHECK(seen == std::vector<std::string>{"1", "k/w"});
    // Another kind's collection is empty, as protobuf's default is.
    CHECK(nested.row(0)[0].set().empty());
    CHECK(nested.row(0)[0].map().size() == 0);
  }

  SUBCASE("the whole message equals protobuf's parse") {
    CheckAgainstProtobuf(bytes);
  }

  SUBCASE("a batch decoded again forgets the last") {
    REQUIRE(batch.Decode(std::string()).ok());
    CHECK(batch.rows_size() == 0);
    CHECK(batch.columns().empty());
    CHECK_FALSE(batch.more());
  }
}

TEST_CASE("QueryBatch: what protobuf accepts beyond what mentatd writes") {
  std::string value;  // a Value: long 5, then ref 6 (the last kind wins)
  Tag(2, 0, &value);
  Varint(5, &value);
  Tag(3, 0, &value);
  Varint(6, &value);

  SUBCASE("fields out of order, scalars repeated, kinds replaced") {
    std::string row;
    LenField(1, value, &row);
    std::string m;
    Tag(3, 0, &m);  // basis_tx before the columns, given twice
    Varint(1, &m);
    LenField(4, row, &m);
    LenField(1, "?x", &m);
    Tag(3, 0, &m);
    Varint(99, &m);
    CheckAgainstProtobuf(m);
    QueryBatch b;
    REQUIRE(b.Decode(m).ok());
    CHECK(b.basis_tx() == 99);
    CHECK(b.row(0)[0].kind_case() == v1::Value::kRef);
    CHECK(b.row(0)[0].ref() == 6);
  }

  SUBCASE("unknown fields of every wire type, and known ones mistyped") {
    std::string unknown;
    Tag(99, 0, &unknown);
    Varint(1ull << 63, &unknown);
    Tag(98, 1, &unknown);
    unknown.append(8, '\x01');
    Tag(97, 5, &unknown);
    unknown.append(4, '\x02');
    LenField(96, "anything", &unknown);
    Tag(95, 3, &unknown);  // a group holding a field and a group
    Tag(1, 0, &unknown);
    Varint(7, &unknown);
    Tag(94, 3, &unknown);
    Tag(94, 4, &unknown);
    Tag(95, 4, &unknown);
    std::string v = unknown + value + unknown;
    LenField(2, "a long_value given as bytes", &v);  // unknown to protobuf
    std::string row = unknown;
    LenField(1, v, &row);
    std::string m = unknown;
    LenField(4, row, &m);
    Tag(4, 0, &m);  // rows as a varint
    Varint(3, &m);
    m += unknown;
    CheckAgainstProtobuf(m);
  }

  SUBCASE("a collection a later field replaces is still checked") {
    // As protobuf parses it on the way: a tagged value whose body is cut,
    // then a list, is not a value.
    std::string tagged;
    LenField(1, "my/tag", &tagged);
    Tag(2, 2, &tagged);
    Varint(12, &tagged);  // a value's length, with no value after it
    std::string list;
    LenField(1, value, &list);
    std::string v;
    LenField(18, tagged, &v);
    LenField(15, list, &v);
    std::string row, m;
    LenField(1, v, &row);
    LenField(4, row, &m);
    CheckAgainstProtobuf(m);
    QueryBatch b;
    CHECK_FALSE(b.Decode(m).ok());
  }

  SUBCASE("a collection given twice in one value is refused, not half read") {
    std::string list;
    LenField(1, value, &list);
    std::string v;
    LenField(15, list, &v);
    LenField(15, list, &v);
    std::string row, m;
    LenField(1, v, &row);
    LenField(4, row, &m);
    QueryBatch b;
    const absl::Status s = b.Decode(m);
    CHECK(s.code() == absl::StatusCode::kDataLoss);
    CHECK(std::string(s.message()).find("twice") != std::string::npos);
  }
}

TEST_CASE("QueryBatch: bytes that are not a QueryResponse") {
  const std::string good = Sample().SerializeAsString();

  SUBCASE("a clear error that says where") {
    QueryBatch b;
    const absl::Status s = b.Decode(good.substr(0, good.size() / 2 + 1));
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == absl::StatusCode::kDataLoss);
    CHECK_MESSAGE(
        std::string(s.message()).find(" at byte ") != std::string::npos,
        s.ToString());
  }

  SUBCASE("the message cut at every length") {
    for (size_t n = 0; n < good.size(); ++n) {
      CAPTURE(n);
      CheckAgainstProtobuf(good.substr(0, n));
    }
  }

  SUBCASE("bytes changed at random") {
    std::mt19937_64 rng(18);
    for (int round = 0; round < 3000; ++round) {
      std::string bad = good;
      const int changes = 1 + static_cast<int>(rng() % 4);
      for (int c = 0; c < changes; ++c) {
        bad[rng() % bad.size()] = static_cast<char>(rng());
      }
      CAPTURE(round);
      CheckAgainstProtobuf(bad);
    }
  }

  SUBCASE("the edges of varints, tags and lengths") {
    const std::vector<std::string> cases = {
        std::string("\x18\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11),
        std::string("\x18\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12),
        std::string("\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11),
        std::string("\x80\x80\x80\x80\x10\x00", 6),  // a tag over 32 bits
        std::string("\xf8\xff\xff\xff\x0f\x00", 6),  // the largest field
        std::string("\x00", 1),                      // field 0
        std::string("\x0f", 1),                      // wire type 7
        std::string("\x0c", 1),                      // an unopened group's end
        std::string("\x0b\x10\x01", 3),              // an unclosed group
        std::string("\x0b\x14", 2),                  // a group closed wrongly
        std::string("\x0a\xff\xff\xff\xff\x07", 6),  // a length of 2^31 - 1
        std::string("\x0a\x80\x80\x80\x80\x08", 6),  // a length of 2^31
        std::string("\x0a\x02\xc3\x28", 4),          // a column not UTF-8
        std::string("\x0a\x03\xed\xa0\x80", 5),      // a surrogate
        std::string("\x0a\x02\xc0\x80", 4),          // an overlong form
        std::string("\x0a\x04\xf4\x90\x80\x80", 6),  // past U+10FFFF
        std::string("\x2a\x02\xc3\x28", 4),          // resume_token: bytes
        std::string("\x22\x04\x0a\x02\x2a\x00", 6),  // an empty string value
    };
    for (size_t i = 0; i < cases.size(); ++i) {
      CAPTURE(i);
      CheckAgainstProtobuf(cases[i]);
    }
  }

  SUBCASE("a byte that is not UTF-8 anywhere in strings of 1 to 24 bytes") {
    for (size_t size = 1; size <= 24; ++size) {
      for (size_t at = 0; at < size; ++at) {
        CAPTURE(size);
        CAPTURE(at);
        for (const std::string& odd :
             {std::string("\xff"), std::string("\xc3\xa9")}) {
          std::string text(size, 'a');
          text.replace(at, 1, odd);
          std::string value, row, m;
          LenField(6, text, &value);  // a keyword
          LenField(1, value, &row);
          LenField(4, row, &m);
          CheckAgainstProtobuf(m);
        }
      }
    }
  }

  SUBCASE("values nested up to protobuf's limit and past it") {
    for (int levels = 90; levels <= 102; ++levels) {
      CAPTURE(levels);
      v1::QueryResponse m;
      v1::Value* v = m.add_rows()->add_values();
      for (int i = 0; i < levels; ++i) v = v->mutable_list()->add_values();
      v->set_long_value(1);
      CheckAgainstProtobuf(m.SerializeAsString());
      // Maps nest 3 messages a level; tagged values 2.
      v1::QueryResponse maps;
      v = maps.add_rows()->add_values();
      for (int i = 0; i < levels / 3; ++i) {
        v = v->mutable_map()->add_entries()->mutable_value();
      }
      v->mutable_tagged()->mutable_value()->set_ref(1);
      CheckAgainstProtobuf(maps.SerializeAsString());
    }
  }

  SUBCASE("groups nested up to the limit and past it") {
    for (int levels = 95; levels <= 101; ++levels) {
      CAPTURE(levels);
      std::string m;
      for (int i = 0; i < levels; ++i) Tag(50, 3, &m);
      for (int i = 0; i < levels; ++i) Tag(50, 4, &m);
      CheckAgainstProtobuf(m);
    }
  }
}

}  // namespace
}  // namespace mentat::client
