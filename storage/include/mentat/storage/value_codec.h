#ifndef MENTAT_STORAGE_VALUE_CODEC_H_
#define MENTAT_STORAGE_VALUE_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mentat/storage/value.h"

namespace mentat::storage {

// Order-preserving, self-delimiting byte encoding of values.
//
// The encoding starts with the type tag (ValueType as one byte) and is
// followed by a body whose bytewise order equals the value order:
//   kRef, kLong, kInstant  8 bytes big-endian with the sign bit flipped
//   kBoolean               one byte, 0 or 1
//   kDouble                8 bytes: IEEE bits, sign flipped for positives,
//                          all bits inverted for negatives; -0.0 encodes as
//                          +0.0 and every NaN as the one canonical NaN,
//                          which sorts after +infinity
//   kUuid                  16 raw bytes
//   kKeyword, kString,     the bytes with 0x00 escaped as 0x00 0xFF and a
//   kBytes, kUri, kSymbol  terminator 0x00 0x01, so a prefix sorts first
//   kBigInt, kBigDec       sign, ordered exponent and digits (see .cc)
// Because every body is self-delimiting, an encoded value can sit in the
// middle of a key (AVET: a | v | e) and still sort correctly.

// Appends the encoding of `v` to `out`.
void EncodeValue(const Value& v, std::string* out);

// Decodes one value from the front of `*in` and advances `*in` past it.
// Returns DataLoss on malformed bytes (stored keys are never malformed
// unless corrupt), leaving `*in` where it was; `*out` may have changed.
[[nodiscard]] absl::Status DecodeValue(std::string_view* in, Value* out);

// Advances `*in` past one encoded value, accepting exactly what DecodeValue
// accepts, without building the value: strings are not copied. For
// checking the shape of a key whose value is not needed.
[[nodiscard]] absl::Status SkipValue(std::string_view* in);

// Parses user text into canonical kBigInt / kBigDec values. Accept an
// optional sign, digits, and for decimals a fraction and an exponent
// ("1.5e3"). InvalidArgument names the problem.
[[nodiscard]] absl::StatusOr<Value> ParseBigInt(std::string_view text);
[[nodiscard]] absl::StatusOr<Value> ParseBigDec(std::string_view text);

// Checks user text as an RFC 3986 URI reference (absolute, "https://x/y",
// or relative, "../a?b", as java.net.URI and so Datomic accept) and returns
// it as a kUri value, unchanged (no normalisation: the text written is the
// text read back). InvalidArgument names the text and the offset of the
// first character that cannot be there; the empty text is refused.
[[nodiscard]] absl::StatusOr<Value> ParseUri(std::string_view text);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_VALUE_CODEC_H_
