#ifndef MENTAT_CLIENT_SHELL_CELL_H_
#define MENTAT_CLIENT_SHELL_CELL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mentat::cli {

// A value as the shell prints it: a scalar of one of the database's types,
// or a collection (pull results, tuples). The shell converts the wire's
// typed values into cells so formatting needs nothing from gRPC.
struct Cell {
  enum class Kind : uint8_t {
    kNil,
    kBoolean,
    kLong,
    kDouble,
    kString,
    kKeyword,  // text without the leading ':'
    kSymbol,
    kRef,      // number: an entity id
    kInstant,  // number: microseconds since the epoch, UTC
    kUuid,     // text: canonical 36-character form
    kBigInt,   // text: decimal digits with optional sign
    kBigDec,   // text: decimal with optional sign, point and exponent
    kBytes,    // text: raw bytes
    kUri,      // text: the URI as written
    kVector,
    kList,
    kSet,
    kMap,  // items alternate key, value
  };
  Kind kind = Kind::kNil;
  bool boolean = false;
  int64_t number = 0;
  double real = 0;
  std::string text;
  std::vector<Cell> items;

  static Cell Nil() { return Cell(); }
  static Cell Boolean(bool b);
  static Cell Long(int64_t v);
  static Cell Double(double v);
  static Cell String(std::string s);
  static Cell Keyword(std::string name);
  static Cell Symbol(std::string name);
  static Cell Ref(int64_t id);
  static Cell Instant(int64_t micros);
  static Cell Uuid(std::string canonical);
  static Cell BigInt(std::string digits);
  static Cell BigDec(std::string digits);
  static Cell Bytes(std::string raw);
  static Cell Uri(std::string text);
  static Cell Collection(Kind kind, std::vector<Cell> items);

  bool is_collection() const { return kind >= Kind::kVector; }
  // Numbers align right in tables.
  bool is_numeric() const {
    return kind == Kind::kLong || kind == Kind::kDouble || kind == Kind::kRef ||
           kind == Kind::kBigInt || kind == Kind::kBigDec;
  }
};

// EDN text of a cell, printed by the shared printer (mentat/edn) so that
// it reads back: "#inst \"...\"", strings quoted and escaped. Refs print
// as their ids, bytes as #bytes "base64", uris as #uri "...".
void AppendEdn(const Cell& cell, std::string* out);
std::string ToEdn(const Cell& cell);

// JSON text of a cell. The mapping (the server's JSON input mapping, so
// output can be fed back): keywords are ":ns/name" strings, refs and longs
// are numbers, instants {"#inst": "..."}, uuids {"#uuid": "..."}, bigints
// and bigdecs {"#bigint": "..."} / {"#bigdec": "..."} (text, to keep every
// digit), bytes {"#bytes": base64}, uris {"#uri": "..."}, NaN and infinities
// {"#double": "NaN"}. Vectors, lists and sets are arrays; maps with keyword or
// string keys are objects (keyword keys keep their ':'), other maps arrays of
// [k, v] pairs.
void AppendJson(const Cell& cell, std::string* out);
std::string ToJson(const Cell& cell);

// A JSON string literal for `s` (quoted, escaped; invalid UTF-8 bytes
// become U+FFFD).
void AppendJsonString(std::string_view s, std::string* out);

// Text for a table or CSV cell: strings raw, nil empty, everything else as
// EDN.
std::string ToPlainText(const Cell& cell);

// Standard base64 with padding.
std::string Base64(std::string_view raw);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_CELL_H_
