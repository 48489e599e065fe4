#include "wire_nesting.h"

#include <algorithm>
#include <limits>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace {

using edn::EdnKind;
using edn::EdnValue;

struct Nesting {
  int messages = 0;  // Value messages and the messages between them
  int maps = 0;      // maps within maps (pulled entities)
};

// The nesting of `v` as value_convert.cc's EdnToProto encodes it, walked
// no further than `room` messages.
Nesting Measure(const EdnValue& v, int room) {
  int own = 1;  // the Value
  bool map = false;
  switch (v.kind()) {
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kSet:
      own = 2;  // Value, ValueList
      break;
    case EdnKind::kMap:
      own = v.items().empty() ? 2 : 3;  // Value, ValueMap, MapEntry
      map = true;
      break;
    case EdnKind::kTagged:
      // #bytes travels as bytes_value; other tags as a TaggedValue.
      if (v.text() == "bytes" && v.tagged_value().is_string()) return {1, 0};
      own = 2;
      break;
    default:
      return {1, 0};
  }
  Nesting deepest;
  for (const EdnValue& item : v.items()) {
    if (own + deepest.messages > room) break;  // over already
    const Nesting n = Measure(item, room - own);
    deepest.messages = std::max(deepest.messages, n.messages);
    deepest.maps = std::max(deepest.maps, n.maps);
  }
  return {own + deepest.messages, deepest.maps + (map ? 1 : 0)};
}

}  // namespace

[[nodiscard]] absl::Status CheckWireNesting(const EdnValue& v, int enclosing,
                                            std::string_view what) {
  if (!v.is_collection() && !v.is_tagged()) return absl::OkStatus();
  const int room = kMaxWireNesting - enclosing;
  if (Measure(v, room).messages <= room) return absl::OkStatus();
  // The whole depth, for the message (the value is bounded: the engine
  // nests pulls at most 256 entities deep).
  const Nesting n = Measure(v, std::numeric_limits<int>::max());
  return absl::ResourceExhaustedError(StrCat(
      what, " nests too deep to send: maps ", n.maps, " deep, ",
      n.messages + enclosing, " levels of protobuf messages, past the ",
      kMaxWireNesting,
      " that clients' protobuf parsers accept; pull fewer levels (give "
      "recursion a depth, {:attr 10} rather than {:attr ...}, or nest fewer "
      "patterns)"));
}

}  // namespace mentat::server
