// Tuple values (:db.type/tuple, value_codec.h): building them from their
// elements, reading the elements back, and checking a tuple against the
// element types an attribute declares.

#include <optional>
#include <string>
#include <vector>

#include "mentat/base/str_cat.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/value_codec.h"

namespace mentat::storage {
namespace {

std::string ElementsText(const std::vector<std::optional<Value>>& elements) {
  std::string s = "[";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) s.push_back(' ');
    s += elements[i].has_value() ? elements[i]->DebugString() : "nil";
  }
  s.push_back(']');
  return s;
}

// `v` as an element of `type`, with the coercions a scalar value of an
// attribute gets (a long for a double, bigint or bigdec; a long for a
// ref). False: it is not one.
bool CoerceElement(ValueType type, Value* v) {
  if (v->type() == type) return true;
  if (v->type() != ValueType::kLong) {
    if (v->type() == ValueType::kBigInt && type == ValueType::kBigDec) {
      absl::StatusOr<Value> d = ParseBigDec(v->text());
      if (!d.ok()) return false;
      *v = *std::move(d);
      return true;
    }
    return false;
  }
  switch (type) {
    case ValueType::kRef:
      // Stored as the long it equals (AppendTupleElement).
      return v->as_long() >= 0;
    case ValueType::kDouble:
      *v = Value::Double(static_cast<double>(v->as_long()));
      return true;
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      absl::StatusOr<Value> big =
          type == ValueType::kBigInt
              ? ParseBigInt(std::to_string(v->as_long()))
              : ParseBigDec(std::to_string(v->as_long()));
      if (!big.ok()) return false;
      *v = *std::move(big);
      return true;
    }
    default:
      return false;
  }
}

// "1 element", "3 elements".
std::string Count(size_t n, std::string_view noun) {
  return StrCat(n, " ", noun, n == 1 ? "" : "s");
}

}  // namespace

void AppendTupleElement(const Value& v, std::string* out) {
  // A ref is written as the long it equals, so that a tuple built from
  // entity ids and one built from integers are the same tuple.
  if (v.type() == ValueType::kRef) {
    EncodeValue(Value::Long(v.as_long()), out);
    return;
  }
  EncodeValue(v, out);
}

void AppendTupleNil(std::string* out) { out->push_back(kTupleNilTag); }

Value MakeTuple(const std::vector<std::optional<Value>>& elements) {
  std::string body;
  for (const std::optional<Value>& e : elements) {
    if (e.has_value()) {
      AppendTupleElement(*e, &body);
    } else {
      AppendTupleNil(&body);
    }
  }
  return Value::Tuple(body);
}

absl::Status DecodeTupleElements(std::string_view body,
                                 std::vector<std::optional<Value>>* out) {
  out->clear();
  while (!body.empty()) {
    const char tag = body[0];
    if (tag == kTupleNilTag) {
      out->emplace_back();
      body.remove_prefix(1);
      continue;
    }
    if (static_cast<ValueType>(static_cast<uint8_t>(tag)) ==
        ValueType::kTuple) {
      return absl::DataLossError(
          "malformed encoded value: a tuple inside a tuple");
    }
    Value v;
    if (absl::Status s = DecodeValue(&body, &v); !s.ok()) return s;
    out->push_back(std::move(v));
  }
  return absl::OkStatus();
}

std::string TupleSpecText(const Attribute& attr) {
  if (attr.is_composite()) {
    std::string s = ":db/tupleAttrs [";
    for (size_t i = 0; i < attr.tuple_attr_idents.size(); ++i) {
      StrAppend(&s, i > 0 ? " :" : ":", attr.tuple_attr_idents[i]);
    }
    s.push_back(']');
    return s;
  }
  if (attr.tuple_homogeneous && !attr.tuple_types.empty()) {
    return StrCat(":db/tupleType ", ValueTypeIdent(attr.tuple_types[0]));
  }
  std::string s = ":db/tupleTypes [";
  for (size_t i = 0; i < attr.tuple_types.size(); ++i) {
    if (i > 0) s.push_back(' ');
    StrAppend(&s, ValueTypeIdent(attr.tuple_types[i]));
  }
  s.push_back(']');
  return s;
}

absl::StatusOr<Value> CheckTupleValue(const Attribute& attr,
                                      const Value& tuple) {
  if (tuple.type() != ValueType::kTuple) {
    return absl::InvalidArgumentError(
        StrCat("value ", tuple.DebugString(), " of :", attr.ident, " is a ",
               ValueTypeIdent(tuple.type()), "; :", attr.ident,
               " takes :db.type/tuple (a vector)"));
  }
  std::vector<std::optional<Value>> elements;
  if (absl::Status s = DecodeTupleElements(tuple.text(), &elements); !s.ok()) {
    return absl::InvalidArgumentError(
        StrCat("value of :", attr.ident, ": ", s.message()));
  }
  const std::string shown = ElementsText(elements);
  if (attr.tuple_types.empty()) {
    // Only an attribute whose definition was refused has none.
    return absl::InvalidArgumentError(
        StrCat(":", attr.ident, " has no usable tuple definition"));
  }
  const size_t n = elements.size();
  if (attr.tuple_homogeneous) {
    if (n < kMinTupleSize || n > kMaxTupleSize) {
      return absl::InvalidArgumentError(StrCat(
          "value ", shown, " of :", attr.ident, " has ", Count(n, "element"),
          "; a tuple has ", kMinTupleSize, " to ", kMaxTupleSize));
    }
  } else if (n != attr.tuple_types.size()) {
    return absl::InvalidArgumentError(
        StrCat("value ", shown, " of :", attr.ident, " has ",
               Count(n, "element"), "; :", attr.ident, "'s ",
               TupleSpecText(attr), " has ", attr.tuple_types.size()));
  }
  bool all_nil = true;
  for (size_t i = 0; i < n; ++i) {
    if (!elements[i].has_value()) continue;
    all_nil = false;
    const ValueType want =
        attr.tuple_homogeneous ? attr.tuple_types[0] : attr.tuple_types[i];
    const ValueType got = elements[i]->type();
    if (!CoerceElement(want, &*elements[i])) {
      return absl::InvalidArgumentError(
          StrCat("value ", shown, " of :", attr.ident, ": element ", i + 1,
                 " (", elements[i]->DebugString(), ") is a ",
                 ValueTypeIdent(got), "; position ", i + 1, " of :", attr.ident,
                 " takes ", ValueTypeIdent(want)));
    }
  }
  if (all_nil) {
    return absl::InvalidArgumentError(
        StrCat("value ", shown, " of :", attr.ident,
               " has no element but nil (retract the value instead)"));
  }
  return MakeTuple(elements);
}

absl::Status CheckTupleSpec(const Attribute& attr) {
  const int given = (attr.tuple_spec & kTupleSpecType ? 1 : 0) +
                    (attr.tuple_spec & kTupleSpecTypes ? 1 : 0) +
                    (attr.tuple_spec & kTupleSpecAttrs ? 1 : 0);
  if (attr.type != ValueType::kTuple) {
    if (given == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(
        StrCat(":db/tupleType, :db/tupleTypes and :db/tupleAttrs need a "
               ":db.type/tuple attribute; :",
               attr.ident, " is ", ValueTypeIdent(attr.type)));
  }
  if (given != 1) {
    return absl::InvalidArgumentError(StrCat(
        ":db.type/tuple attribute :", attr.ident,
        " needs exactly one of :db/tupleType (homogeneous), :db/tupleTypes "
        "(heterogeneous) and :db/tupleAttrs (composite); it has ",
        given));
  }
  if (!attr.tuple_error.empty()) {
    return absl::InvalidArgumentError(
        StrCat(":", attr.ident, ": ", attr.tuple_error));
  }
  if (attr.tuple_spec & kTupleSpecTypes) {
    const size_t n = attr.tuple_types.size();
    if (n < kMinTupleSize || n > kMaxTupleSize) {
      return absl::InvalidArgumentError(
          StrCat(":", attr.ident, ": :db/tupleTypes names ", Count(n, "type"),
                 "; a tuple has ", kMinTupleSize, " to ", kMaxTupleSize));
    }
  }
  if (attr.is_composite()) {
    const size_t n = attr.tuple_attrs.size();
    if (n < kMinTupleSize || n > kMaxTupleSize) {
      return absl::InvalidArgumentError(StrCat(
          ":", attr.ident, ": :db/tupleAttrs names ", Count(n, "attribute"),
          "; a composite tuple has ", kMinTupleSize, " to ", kMaxTupleSize));
    }
    // One value per entity, computed from the members' one values.
    if (attr.many()) {
      return absl::InvalidArgumentError(
          StrCat(":", attr.ident,
                 ": a composite tuple (:db/tupleAttrs) is cardinality one"));
    }
  }
  for (ValueType t : attr.tuple_types) {
    if (t == ValueType::kTuple) {
      return absl::InvalidArgumentError(StrCat(":", attr.ident,
                                               ": a tuple cannot hold tuples (",
                                               TupleSpecText(attr), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage
