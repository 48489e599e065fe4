// The query results' encoder writes the bytes protobuf writes: every value
// kind, nested collections, maps, tags, and whole QueryResponse messages.

#include "wire_encoding.h"

#include <doctest/doctest.h>

#include "mentat/edn/edn_reader.h"
#include "mentat/query/pull.h"
#include "mentat/storage/value.h"
#include "mentat/v1/mentat.pb.h"
#include "query_response_encoder.h"
#include "value_convert.h"

namespace mentat::server {
namespace {

namespace pb = mentat::v1;
using edn::EdnValue;

std::string Protobuf(const EdnValue& v) {
  pb::Value out;
  EdnToProto(v, &out);
  return out.SerializeAsString();
}

std::string Direct(const EdnValue& v) {
  std::string out;
  AppendValueWire(v, &out);
  CHECK(out.size() == ValueWireSize(v));
  return out;
}

EdnValue Edn(std::string_view text) {
  auto v = edn::ParseEdn(text);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return *std::move(v);
}

TEST_CASE("wire encoding: every value as protobuf encodes it") {
  const char* texts[] = {
      "nil", "true", "false", "0", "1", "-1", "127", "128", "300",
      "9223372036854775807", "-9223372036854775808", "1.5", "-0.0",
      "12345678901234567890123N", "1.25M", "\\a", "\\u00e9", "\"\"", "\"text\"",
      ":kw", ":ns/kw", "sym", "#inst \"2024-01-02T03:04:05Z\"",
      "#inst \"1960-01-01T00:00:00Z\"",
      "#uuid \"6f8b3c5e-2f4a-4b8e-9c1d-0a1b2c3d4e5f\"", "[]", "()", "#{}", "{}",
      "[1 [2 [3 \"x\"]] #{:a}]", "(1 2)", "#{1 2 3}",
      "{:a 1 :b {:c [1 2] :d nil}}", "#bytes \"aGVsbG8=\"", "#my/tag [1 2]",
      "#my/tag \"not bytes\"", "#uri \"https://example.com/a?b#c\"", "#uri 5",
      "[#uri \"../x\" ns/sym]",
      // A string longer than 127 bytes: a two-byte length.
      "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""};
  for (const char* text : texts) {
    CAPTURE(text);
    const EdnValue v = Edn(text);
    CHECK(Direct(v) == Protobuf(v));
    // The same value as a row's cell, through the row encoder's writers,
    // beside a small long (so the row is not one cell only).
    QueryResponseEncoder enc;
    enc.AddRow({v, Edn("5")});
    pb::QueryResponse want;
    pb::Row* row = want.add_rows();
    EdnToProto(v, row->add_values());
    EdnToProto(Edn("5"), row->add_values());
    CHECK(std::string(enc.row(0)) == want.SerializeAsString());
  }
}

// A pull result's shape: maps of maps of vectors, several levels deep,
// whose bodies pass 127 bytes (two-byte lengths) at every level, and a
// tagged value inside. Each size is computed once and used where the
// writer reaches it: one that was off by a byte anywhere shifts all that
// follows.
TEST_CASE(
    "wire encoding: deep and long nested values as protobuf encodes them") {
  std::string text = "{:db/id 17592186045418 :issue/title \"";
  text.append(200, 't');
  text += "\" :issue/labels [";
  for (int i = 0; i < 40; ++i) {
    text += "{:db/id " + std::to_string(1000 + i) + " :label/name \"label-" +
            std::to_string(i) + "\" :label/tags #{:a :b}}";
  }
  text += "] :issue/project {:db/id 5 :project/owner {:db/id 6 :user/name ";
  text += "\"Ann\" :user/meta #my/tag {:k [1 2.5 nil true \\c]}}}}";
  const EdnValue v = Edn(text);
  CHECK(Direct(v) == Protobuf(v));
  QueryResponseEncoder enc;
  enc.AddRow({Edn("1"), v, v});
  pb::QueryResponse want;
  pb::Row* row = want.add_rows();
  EdnToProto(Edn("1"), row->add_values());
  EdnToProto(v, row->add_values());
  EdnToProto(v, row->add_values());
  CHECK(std::string(enc.row(0)) == want.SerializeAsString());
}

TEST_CASE("wire encoding: rows of storage values as their EDN values' rows") {
  // The engine hands plain rows to the server as storage values; their
  // bytes must be those of the EDN values the other path makes of them
  // (query::ValueToEdn), since resume tokens digest rows of either path.
  using storage::Value;
  const std::string uuid(
      "\x6f\x8b\x3c\x5e\x2f\x4a\x4b\x8e\x9c\x1d\x0a\x1b"
      "\x2c\x3d\x4e\x5f",
      16);
  const std::vector<Value> values = {Value::Ref(0),
                                     Value::Ref(72057594037927937),
                                     Value::Long(0),
                                     Value::Long(-1),
                                     Value::Long(300),
                                     Value::Long(INT64_MIN),
                                     Value::Long(INT64_MAX),
                                     Value::Instant(0),
                                     Value::Instant(-86400000000),
                                     Value::Instant(1700000000123456),
                                     Value::Boolean(true),
                                     Value::Boolean(false),
                                     Value::Double(1.5),
                                     Value::Double(-0.0),
                                     Value::String(""),
                                     Value::String("text"),
                                     Value::String(std::string(200, 'a')),
                                     Value::Keyword("ns/kw"),
                                     Value::Uuid(uuid),
                                     Value::BigInt("12345678901234567890123"),
                                     Value::BigDec("1.25"),
                                     Value::Bytes(std::string("\0\x01\xff", 3)),
                                     Value::Bytes(""),
                                     Value::Uri("https://example.com/a?b"),
                                     Value::Symbol("ns/sym")};
  for (size_t i = 0; i < values.size(); ++i) {
    CAPTURE(values[i].DebugString());
    // Each value alone, and beside the next ones (rows of one to three
    // cells).
    for (size_t width : {size_t{1}, size_t{2}, size_t{3}}) {
      const Value* cells[3] = {&values[i], &values[(i + 1) % values.size()],
                               &values[(i + 2) % values.size()]};
      std::vector<EdnValue> edn;
      for (size_t c = 0; c < width; ++c) {
        edn.push_back(query::ValueToEdn(*cells[c]));
      }
      std::string direct, via_edn;
      QueryResponseEncoder::EncodeValueRow(cells, width, &direct);
      QueryResponseEncoder::EncodeRow(edn, &via_edn);
      CHECK(direct == via_edn);
      QueryResponseEncoder enc;
      CHECK(enc.AddValueRow(cells, width) == direct.size());
      CHECK(std::string(enc.row(0)) == direct);
    }
  }
}

TEST_CASE("wire encoding: rows either side of one-byte lengths") {
  // A Row under 128 bytes is written in one pass with one-byte lengths,
  // a longer one sized first: rows whose text grows across that line,
  // beside an entity id, a negative long (a ten-byte varint) and a
  // keyword, must give the EDN path's bytes on both sides of it.
  using storage::Value;
  const Value id = Value::Ref(17592186045418);
  const Value negative = Value::Long(-5);
  const Value state = Value::Keyword("issue.state/open");
  for (size_t len = 60; len <= 140; ++len) {
    CAPTURE(len);
    const Value title = Value::String(std::string(len, 't'));
    const Value uri = Value::Uri(std::string(len, 'u'));
    for (const Value* text : {&title, &uri}) {
      const Value* cells[4] = {&id, text, &negative, &state};
      std::vector<EdnValue> edn;
      for (const Value* c : cells) edn.push_back(query::ValueToEdn(*c));
      std::string via_edn;
      QueryResponseEncoder::EncodeRow(edn, &via_edn);
      QueryResponseEncoder enc;
      CHECK(enc.AddValueRow(cells, 4) == via_edn.size());
      CHECK(std::string(enc.row(0)) == via_edn);
    }
  }
}

TEST_CASE("wire encoding: many rows in one encoder, its buffer growing") {
  using storage::Value;
  QueryResponseEncoder enc;
  std::string expected;
  for (int i = 0; i < 5000; ++i) {
    const Value id = Value::Ref(17592186045418 + i);
    const Value name = Value::String("Person " + std::to_string(i));
    const Value* cells[2] = {&id, &name};
    QueryResponseEncoder::EncodeValueRow(cells, 2, &expected);
    enc.AddValueRow(cells, 2);
  }
  CHECK(enc.rows() == 5000);
  CHECK(enc.rows_bytes() == expected);
}

TEST_CASE("wire encoding: whole QueryResponse messages") {
  QueryResponseEncoder enc;
  enc.AddColumn("?e");
  enc.AddColumn("(pull ?e [*])");
  enc.set_find_kind(pb::FIND_TUPLE);
  std::vector<EdnValue> row1 = {Edn("42"), Edn("{:user/name \"Ann\"}")};
  std::vector<EdnValue> row2 = {Edn("-7"), Edn("nil")};
  const size_t bytes = enc.AddRow(row1);
  enc.AddRow(row2);
  CHECK(enc.rows() == 2);
  CHECK(enc.row(0).size() == bytes);

  pb::QueryResponse expected;
  expected.add_columns("?e");
  expected.add_columns("(pull ?e [*])");
  expected.set_find_kind(pb::FIND_TUPLE);
  for (const auto* row : {&row1, &row2}) {
    pb::Row* r = expected.add_rows();
    for (const EdnValue& v : *row) EdnToProto(v, r->add_values());
  }
  expected.set_basis_tx(13194139534312);
  expected.set_resume_token(std::string("tok\0en", 6));
  expected.set_rows_so_far(2);
  expected.set_more(true);

  grpc::ByteBuffer buffer;
  enc.Render(13194139534312, std::string("tok\0en", 6), 2, /*more=*/true,
             &buffer);
  std::vector<grpc::Slice> slices;
  REQUIRE(buffer.Dump(&slices).ok());
  std::string got;
  for (const grpc::Slice& s : slices) {
    got.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  CHECK(got == expected.SerializeAsString());

  // Emptied; the next message has neither columns nor rows, and a zero
  // basis is left out as protobuf leaves it (a relation's kind is 1, not
  // the enum's zero, so it is written).
  CHECK(enc.rows() == 0);
  enc.set_find_kind(pb::FIND_RELATION);
  enc.AddRow(row2);
  enc.Render(0, "", 0, /*more=*/false, &buffer);
  slices.clear();
  REQUIRE(buffer.Dump(&slices).ok());
  got.clear();
  for (const grpc::Slice& s : slices) {
    got.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  pb::QueryResponse second;
  second.set_find_kind(pb::FIND_RELATION);
  pb::Row* r = second.add_rows();
  for (const EdnValue& v : row2) EdnToProto(v, r->add_values());
  CHECK(got == second.SerializeAsString());
}

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  REQUIRE(buffer.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

TEST_CASE(
    "wire encoding: value rows and EDN rows in messages one after another") {
  // The encoder keeps its row bytes between messages and writes over them:
  // a long message, then a short one of both kinds of rows, must each be
  // exactly what protobuf writes, with nothing of the first in the second.
  using storage::Value;
  QueryResponseEncoder enc;
  pb::QueryResponse first;
  std::vector<Value> held;
  held.reserve(600);
  for (int i = 0; i < 300; ++i) {
    held.push_back(Value::Ref(17592186045418 + i));
    held.push_back(Value::String(std::string(40 + i % 7, 'a' + i % 26)));
  }
  for (int i = 0; i < 300; ++i) {
    const Value* cells[2] = {&held[2 * i], &held[2 * i + 1]};
    enc.AddValueRow(cells, 2);
    pb::Row* r = first.add_rows();
    for (const Value* c : cells) {
      EdnToProto(query::ValueToEdn(*c), r->add_values());
    }
  }
  std::string all_rows;
  for (int i = 0; i < enc.rows(); ++i) all_rows += std::string(enc.row(i));
  CHECK(std::string(enc.rows_bytes()) == all_rows);
  grpc::ByteBuffer buffer;
  enc.Render(0, "", 0, /*more=*/false, &buffer);
  CHECK(Bytes(buffer) == first.SerializeAsString());

  pb::QueryResponse second;
  const Value small = Value::Long(-3);
  const Value* cells[1] = {&small};
  enc.AddValueRow(cells, 1);
  const std::vector<EdnValue> edn_row = {Edn("[1 \"two\" :three]")};
  enc.AddRow(edn_row);
  enc.AddValueRow(cells, 1);
  for (int i = 0; i < 3; ++i) {
    EdnToProto(i == 1 ? edn_row[0] : query::ValueToEdn(small),
               second.add_rows()->add_values());
  }
  enc.Render(0, "", 3, /*more=*/false, &buffer);
  second.set_rows_so_far(3);
  CHECK(Bytes(buffer) == second.SerializeAsString());
}

TEST_CASE("wire encoding: a message of one-column rows of every value type") {
  // One-column rows take their own path (no per-cell sizes; integers
  // below 2^56 as one 8-byte store); their lengths take one, two and three
  // bytes, and the buffer grows under them many times over. Each row and the
  // whole message are protobuf's bytes.
  using storage::Value;
  const std::vector<Value> kinds = {Value::Ref(17592186045418),
                                    Value::Ref(0),
                                    Value::Long(-1),
                                    Value::Long(127),
                                    Value::Long(128),
                                    Value::Long((int64_t{1} << 49) - 1),
                                    Value::Long((int64_t{1} << 56) - 1),
                                    Value::Long(int64_t{1} << 56),
                                    Value::Long(INT64_MAX),
                                    Value::Instant(1700000000123456),
                                    Value::Boolean(false),
                                    Value::Double(-2.25),
                                    Value::String(""),
                                    Value::String(std::string(120, 's')),
                                    Value::String(std::string(200, 't')),
                                    Value::String(std::string(20000, 'u')),
                                    Value::Keyword("issue.state/open"),
                                    Value::Uuid(std::string(16, '\x5a')),
                                    Value::BigInt("-98765432109876543210"),
                                    Value::BigDec("0.001"),
                                    Value::Bytes(std::string(300, '\0')),
                                    Value::Uri("urn:x"),
                                    Value::Symbol("sym")};
  QueryResponseEncoder enc;
  enc.AddColumn("?v");
  enc.set_find_kind(pb::FIND_RELATION);
  pb::QueryResponse expected;
  expected.add_columns("?v");
  expected.set_find_kind(pb::FIND_RELATION);
  std::vector<std::string> rows;
  for (int round = 0; round < 40; ++round) {
    for (const Value& v : kinds) {
      const Value* cells[1] = {&v};
      std::string alone;
      QueryResponseEncoder::EncodeValueRow(cells, 1, &alone);
      CHECK(enc.AddValueRow(cells, 1) == alone.size());
      rows.push_back(alone);
      EdnToProto(query::ValueToEdn(v), expected.add_rows()->add_values());
    }
  }
  REQUIRE(enc.rows() == static_cast<int>(rows.size()));
  for (int i = 0; i < enc.rows(); ++i) {
    CAPTURE(i);
    CHECK(std::string(enc.row(i)) == rows[static_cast<size_t>(i)]);
  }
  grpc::ByteBuffer buffer;
  enc.Render(4398046511104, "", 0, /*more=*/false, &buffer);
  expected.set_basis_tx(4398046511104);
  CHECK(Bytes(buffer) == expected.SerializeAsString());
  CHECK(enc.rows() == 0);
  CHECK(enc.rows_bytes().empty());
}

TEST_CASE("wire encoding: Pull and PullMany responses") {
  const EdnValue result =
      Edn("{:db/id 7 :user/name \"Ann\" :user/tags #{\"a\"}}");
  grpc::ByteBuffer buffer;
  EncodePullResponse(result, 13194139534312, &buffer);
  pb::PullResponse pull;
  EdnToProto(result, pull.mutable_result());
  pull.set_basis_tx(13194139534312);
  CHECK(Bytes(buffer) == pull.SerializeAsString());

  std::vector<EdnValue> results = {result, EdnValue::Nil()};
  EncodePullManyResponse(results, 0, &buffer);
  pb::PullManyResponse many;
  for (const EdnValue& r : results) EdnToProto(r, many.add_results());
  CHECK(Bytes(buffer) == many.SerializeAsString());
}

}  // namespace
}  // namespace mentat::server
