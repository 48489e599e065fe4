#ifndef MENTAT_STORAGE_FULLTEXT_H_
#define MENTAT_STORAGE_FULLTEXT_H_

// Fulltext search support for :db/fulltext attributes: the tokenizer
// (ICU's word break iterator, Unicode case folding, Snowball's English
// stemmer; storage/fulltext_tokens.cc) and reads of the postings that the
// transactor writes to the `fulltext` column family in the same batch as
// the datoms (storage/fulltext_index.cc).
//
// The postings only name candidates: a posting (attribute, term, entity)
// is written when a value holding the term is asserted and never removed,
// so it outlives retractions and changed values. A reader checks each
// candidate's datoms at its basis (current, as_of, since, history) and
// tokenizes the value again; the datoms decide, so answers are exact at
// every basis.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "mentat/storage/datom.h"

namespace mentat::storage {

class Db;

// One word of a text: `word` is its Unicode case folding (UTF-8), `stem`
// the English Snowball stem of that, `position` its index among the
// text's words (0, 1, ...).
struct FulltextToken {
  std::string word;
  std::string stem;
  uint32_t position = 0;
};

// Words longer than this many bytes (after folding) are neither indexed
// nor matched: they would only make long keys.
inline constexpr size_t kFulltextMaxWordBytes = 100;

// The words of `text` (UTF-8; invalid sequences read as U+FFFD), in order:
// the spans ICU's word break iterator marks as words or numbers, folded
// and stemmed. Punctuation and spaces are not words. Thread-safe (each
// thread keeps its own iterator and stemmer). Errors: Internal if ICU or
// the stemmer cannot be set up.
[[nodiscard]] absl::Status TokenizeFulltext(std::string_view text,
                                            std::vector<FulltextToken>* out);

// The kinds of posting: by stem (word searches and phrases), and by the
// folded word where it differs from its stem (prefix searches match
// folded words: "runn*" finds "running", whose stem is "run").
enum class PostingKind : char { kStem = 's', kWord = 'w' };

// Calls fn(e) for every entity with a posting of `attribute` whose term of
// `kind` is `term` (prefix = false) or starts with `term` (prefix = true),
// as of the Db's snapshot, until fn returns false. An entity may come more
// than once (under several terms of a prefix). Errors: Unavailable
// (RocksDB failed), DataLoss (a malformed key).
[[nodiscard]] absl::Status ScanFulltextPostings(
    const Db& db, EntityId attribute, PostingKind kind, std::string_view term,
    bool prefix, const std::function<bool(EntityId)>& fn);

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_FULLTEXT_H_
