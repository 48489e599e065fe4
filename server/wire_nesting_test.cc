#include "wire_nesting.h"

#include <doctest/doctest.h>

#include <string>

#include "mentat/query/edn/edn_printer.h"
#include "value_convert.h"

namespace mentat::server {
namespace {

using edn::EdnValue;

// `levels` maps, each holding the next under :a/next (a card-one pull).
EdnValue MapChain(int levels) {
  EdnValue v = EdnValue::Int(1);
  for (int i = 0; i < levels; ++i) {
    v = EdnValue::Map({EdnValue::Keyword("a/next"), std::move(v)});
  }
  return v;
}

// `levels` maps, each holding the next in a vector (a card-many pull).
EdnValue VectorChain(int levels) {
  EdnValue v = EdnValue::Map({});
  for (int i = 0; i < levels; ++i) {
    v = EdnValue::Map({EdnValue::Keyword("a/many"),
                       EdnValue::Vector({EdnValue::Int(i), std::move(v)})});
  }
  return v;
}

// Sets and tagged values, around a map chain.
EdnValue Mixed(int levels) {
  EdnValue v = MapChain(2);
  for (int i = 0; i < levels; ++i) {
    v = i % 2 == 0 ? EdnValue::Set({std::move(v)})
                   : EdnValue::Tagged("my/tag", std::move(v));
  }
  return v;
}

// Whether protobuf's own parser reads `v` back as PullResponse.result and
// as a value in a QueryResponse's row.
bool ParsesAsPull(const EdnValue& v) {
  pb::PullResponse response;
  EdnToProto(v, response.mutable_result());
  pb::PullResponse back;
  return back.ParseFromString(response.SerializeAsString());
}
bool ParsesInRow(const EdnValue& v) {
  pb::QueryResponse response;
  EdnToProto(v, response.add_rows()->add_values());
  pb::QueryResponse back;
  return back.ParseFromString(response.SerializeAsString());
}

TEST_CASE("wire nesting: the check agrees with protobuf's parser") {
  for (auto make : {MapChain, VectorChain, Mixed}) {
    bool saw_ok = false, saw_refused = false;
    for (int levels = 1; levels < 60; ++levels) {
      const EdnValue v = make(levels);
      const bool pull_ok = CheckWireNesting(v, 0, "the pull result").ok();
      CHECK_MESSAGE(pull_ok == ParsesAsPull(v), edn::PrintEdn(v));
      const bool row_ok = CheckWireNesting(v, 1, "the value").ok();
      CHECK_MESSAGE(row_ok == ParsesInRow(v), edn::PrintEdn(v));
      saw_ok |= pull_ok;
      saw_refused |= !pull_ok;
    }
    CHECK(saw_ok);
    CHECK(saw_refused);
  }
  // Scalars and #bytes (sent as bytes_value) nest nothing.
  CHECK(CheckWireNesting(EdnValue::Int(1), 99, "x").ok());
  CHECK(CheckWireNesting(EdnValue::Tagged("bytes", EdnValue::String("AAAA")),
                         99, "x")
            .ok());
}

TEST_CASE("wire nesting: the error names the depth, the limit and a fix") {
  // A card-one chain fits 33 maps deep in a PullResponse.
  CHECK(CheckWireNesting(MapChain(33), 0, "the pull result").ok());
  absl::Status s = CheckWireNesting(MapChain(34), 0, "the pull result");
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(s.message()) ==
        "the pull result nests too deep to send: maps 34 deep, 103 levels of "
        "protobuf messages, past the 100 that clients' protobuf parsers "
        "accept; pull fewer levels (give recursion a depth, {:attr 10} "
        "rather than {:attr ...}, or nest fewer patterns)");
}

}  // namespace
}  // namespace mentat::server
