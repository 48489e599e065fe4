#include "value_convert.h"

#include <doctest/doctest.h>

#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/query/pull.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::server {
namespace {

TEST_CASE("typed values: EDN and storage round trips") {
  auto round = [](const std::string& text) {
    auto v = edn::ParseEdn(text);
    REQUIRE(v.ok());
    v1::Value p;
    EdnToProto(*v, &p);
    auto back = ProtoToEdn(p, "input 1");
    REQUIRE_MESSAGE(back.ok(), back.status().ToString());
    return edn::PrintEdn(*back);
  };
  CHECK(round("[1 \"two\" :three 4.5 true nil]") ==
        "[1 \"two\" :three 4.5 true nil]");
  CHECK(round("#{1 2}") == "#{1 2}");
  CHECK(round("{:a [1 2], :b {:c 3}}") == "{:a [1 2], :b {:c 3}}");
  CHECK(round("#inst \"2024-05-06T07:08:09.123Z\"") ==
        "#inst \"2024-05-06T07:08:09.123Z\"");
  CHECK(round("#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"") ==
        "#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"");
  CHECK(round("12345678901234567890123N") == "12345678901234567890123N");
  CHECK(round("#my/tag [1]") == "#my/tag [1]");
  CHECK(round("#uri \"https://example.com/a\"") ==
        "#uri \"https://example.com/a\"");
  CHECK(round("[ns/sym #uri \"../x\"]") == "[ns/sym #uri \"../x\"]");

  // Uris travel as the uri field; symbols as symbol.
  v1::Value u;
  EdnToProto(query::ValueToEdn(storage::Value::Uri("urn:x:y")), &u);
  CHECK(u.uri() == "urn:x:y");
  storage::Datom d{1, 2, storage::Value::Symbol("ns/s"), 3, true};
  v1::Datom pd;
  DatomToProto(d, &pd);
  CHECK(pd.v().symbol() == "ns/s");
  DatomToProto({1, 2, storage::Value::Uri("urn:x:y"), 3, true}, &pd);
  CHECK(pd.v().uri() == "urn:x:y");
  v1::Value bad_uri;
  bad_uri.set_uri("http://a b/");
  auto refused = ProtoToEdn(bad_uri, "input 2");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(refused.status().message() ==
        "input 2: invalid URI \"http://a b/\": not RFC 3986 syntax at offset "
        "8");

  // Bytes travel as bytes_value, and as #bytes in EDN.
  v1::Value b;
  EdnToProto(query::ValueToEdn(storage::Value::Bytes(std::string("\0\1\2", 3))),
             &b);
  CHECK(b.bytes_value() == std::string("\0\1\2", 3));

  v1::Value unset;
  CHECK_FALSE(ProtoToEdn(unset, "input 1").ok());
  v1::Value bad_uuid;
  bad_uuid.set_uuid("short");
  CHECK_FALSE(ProtoToEdn(bad_uuid, "input 1").ok());
  v1::Value deep;
  v1::Value* at = &deep;
  for (int i = 0; i < kMaxInputDepth + 5; ++i) {
    at = at->mutable_list()->add_values();
  }
  at->set_long_value(1);
  CHECK_FALSE(ProtoToEdn(deep, "input 1").ok());

  std::string decoded;
  CHECK(Base64Decode(Base64Encode("hello!?"), &decoded));
  CHECK(decoded == "hello!?");
  CHECK_FALSE(Base64Decode("a=bc", &decoded));
}

TEST_CASE("typed values: coercion to an attribute's type") {
  storage::Attribute ref;
  ref.ident = "a/ref";
  ref.type = storage::ValueType::kRef;
  storage::Attribute dbl;
  dbl.ident = "a/double";
  dbl.type = storage::ValueType::kDouble;
  auto schema = storage::Schema::Bootstrap();
  v1::Value v;
  v.set_long_value(7);
  CHECK(ProtoToAttributeValue(v, ref, *schema, "c")->as_ref() == 7);
  CHECK(ProtoToAttributeValue(v, dbl, *schema, "c")->as_double() == 7.0);
  v.set_keyword(":db/ident");
  CHECK(ProtoToAttributeValue(v, ref, *schema, "c")->as_ref() ==
        storage::ids::kDbIdent);
  v.set_keyword(":no/such");
  CHECK(ProtoToAttributeValue(v, ref, *schema, "c").status().code() ==
        absl::StatusCode::kNotFound);
  v.set_string_value("x");
  CHECK(ProtoToAttributeValue(v, dbl, *schema, "c").status().code() ==
        absl::StatusCode::kInvalidArgument);

  storage::Attribute uri;
  uri.ident = "a/uri";
  uri.type = storage::ValueType::kUri;
  storage::Attribute sym;
  sym.ident = "a/sym";
  sym.type = storage::ValueType::kSymbol;
  v.set_uri("https://example.com/");
  CHECK(*ProtoToAttributeValue(v, uri, *schema, "c") ==
        storage::Value::Uri("https://example.com/"));
  CHECK(ProtoToAttributeValue(v, sym, *schema, "c").status().code() ==
        absl::StatusCode::kInvalidArgument);
  v.set_uri("https://exa mple.com/");
  auto bad = ProtoToAttributeValue(v, uri, *schema, "c");
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find("invalid URI") !=
        std::string::npos);
  v.set_string_value("https://example.com/");
  CHECK(ProtoToAttributeValue(v, uri, *schema, "c").status().code() ==
        absl::StatusCode::kInvalidArgument);
  v.set_symbol("ns/s");
  CHECK(*ProtoToAttributeValue(v, sym, *schema, "c") ==
        storage::Value::Symbol("ns/s"));
}

}  // namespace
}  // namespace mentat::server
