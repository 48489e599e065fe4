#ifndef MENTAT_QUERY_EXECUTION_FULLTEXT_SEARCH_H_
#define MENTAT_QUERY_EXECUTION_FULLTEXT_SEARCH_H_

// The search string of the `fulltext` function, parsed, and how a value
// matches it (docs/query.md, "Fulltext search"):
//
//   crash          a word: values with a word of the same English stem
//   "disk full"    a phrase: the stems in this order, side by side
//   replic*        a prefix: values with a (case-folded) word starting so
//   +word -word    required / excluded (either kind of term)
//
// Terms without + or - are optional: a value matches when it has every
// required term, no excluded one and at least one term that is not
// excluded. Its score is the share of the non-excluded terms it has (a
// double in (0, 1]). Words are found, folded and stemmed by
// storage::TokenizeFulltext, exactly as the index does it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/storage/fulltext.h"

namespace mentat::query::execution {

struct FulltextTerm {
  enum class Kind { kWord, kPhrase, kPrefix };
  enum class Occur { kShould, kMust, kMustNot };
  Kind kind = Kind::kWord;
  Occur occur = Occur::kShould;
  std::vector<std::string> stems;  // kWord: one; kPhrase: two or more
  std::string prefix;              // kPrefix: a folded word's start
};

// Immutable once parsed; safe to share.
class FulltextSearch {
 public:
  // Errors: InvalidArgument naming the problem (no words, an unclosed
  // phrase, a prefix of no or several words, an operator without a term,
  // only excluded terms).
  [[nodiscard]] static absl::StatusOr<FulltextSearch> Parse(
      std::string_view text);

  const std::vector<FulltextTerm>& terms() const { return terms_; }

  // Whether any term is required (+): then the entities that can match
  // are those in the postings of every required term, else those in the
  // postings of any optional one.
  bool HasRequired() const { return required_ > 0; }

  // The score of `value` (a double in (0, 1]), or nullopt if it does not
  // match. Errors: those of storage::TokenizeFulltext.
  [[nodiscard]] absl::StatusOr<std::optional<double>> Score(
      std::string_view value) const;

 private:
  std::vector<FulltextTerm> terms_;
  int positive_ = 0;  // terms that are not excluded
  int required_ = 0;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_FULLTEXT_SEARCH_H_
