#ifndef MENTAT_STORAGE_EXCERPT_H_
#define MENTAT_STORAGE_EXCERPT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace mentat {

// How much of a caller's value, form or query text a message or a log line
// quotes. Values can be megabytes: quoting them whole made error metadata
// exceed a client's limit and wrote megabyte log lines.
inline constexpr size_t kExcerptBytes = 64;

// The one way mentat quotes text it did not write into a message: `text`
// whole when it has at most `max_bytes` bytes, else its first `max_bytes`
// bytes (cut back to a UTF-8 character boundary) followed by
// "…(N bytes)", N being the whole text's size. Costs O(max_bytes), never
// O(text.size()). Thread-safe.
std::string Excerpt(std::string_view text, size_t max_bytes = kExcerptBytes);

// The part of `text` an excerpt keeps: at most `max_bytes` bytes, cut back
// to a UTF-8 character boundary. For callers that escape what they quote
// (a string value prints with its quotes and escapes) and then add
// ExcerptMarker.
std::string_view ExcerptPrefix(std::string_view text,
                               size_t max_bytes = kExcerptBytes);

// "…(N bytes)" when `text` is longer than `max_bytes`, else "".
std::string ExcerptMarker(std::string_view text,
                          size_t max_bytes = kExcerptBytes);

}  // namespace mentat

#endif  // MENTAT_STORAGE_EXCERPT_H_
