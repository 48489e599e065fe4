#include "execution/fulltext_search.h"

#include <algorithm>

#include "mentat/base/str_cat.h"

namespace mentat::query::execution {

using storage::FulltextToken;

namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

// Words of a term as stems: one makes a word term, several a phrase.
absl::Status StemTerm(std::string_view text, FulltextTerm* term) {
  std::vector<FulltextToken> tokens;
  absl::Status s = storage::TokenizeFulltext(text, &tokens);
  if (!s.ok()) return s;
  for (FulltextToken& t : tokens) term->stems.push_back(std::move(t.stem));
  term->kind = term->stems.size() > 1 ? FulltextTerm::Kind::kPhrase
                                      : FulltextTerm::Kind::kWord;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FulltextSearch> FulltextSearch::Parse(std::string_view text) {
  FulltextSearch search;
  size_t i = 0;
  while (i < text.size()) {
    if (IsSpace(text[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    FulltextTerm term;
    if (text[i] == '+' || text[i] == '-') {
      term.occur = text[i] == '+' ? FulltextTerm::Occur::kMust
                                  : FulltextTerm::Occur::kMustNot;
      ++i;
      if (i == text.size() || IsSpace(text[i])) {
        return absl::InvalidArgumentError(StrCat("the search's ", text[start],
                                                 " at character ", start + 1,
                                                 " has no term after it"));
      }
    }
    if (text[i] == '"') {
      const size_t close = text.find('"', i + 1);
      if (close == std::string_view::npos) {
        return absl::InvalidArgumentError(
            StrCat("the search's phrase opened at character ", i + 1,
                   " has no closing \""));
      }
      absl::Status s = StemTerm(text.substr(i + 1, close - i - 1), &term);
      if (!s.ok()) return s;
      if (term.stems.empty()) {
        return absl::InvalidArgumentError(StrCat(
            "the search's phrase at character ", i + 1, " has no words"));
      }
      i = close + 1;
    } else {
      size_t end = i;
      while (end < text.size() && !IsSpace(text[end])) ++end;
      std::string_view chunk = text.substr(i, end - i);
      i = end;
      if (chunk.ends_with('*')) {
        std::vector<FulltextToken> tokens;
        absl::Status s = storage::TokenizeFulltext(
            chunk.substr(0, chunk.size() - 1), &tokens);
        if (!s.ok()) return s;
        if (tokens.size() != 1) {
          return absl::InvalidArgumentError(
              StrCat("the search's prefix term ", chunk, " at character ",
                     start + 1, " must be one word followed by *"));
        }
        term.kind = FulltextTerm::Kind::kPrefix;
        term.prefix = std::move(tokens[0].word);
      } else {
        absl::Status s = StemTerm(chunk, &term);
        if (!s.ok()) return s;
        // Punctuation alone, with no operator, is no term (as the same
        // punctuation in a value is no word).
        if (term.stems.empty()) {
          if (term.occur == FulltextTerm::Occur::kShould) continue;
          return absl::InvalidArgumentError(
              StrCat("the search's term ", text.substr(start, i - start),
                     " at character ", start + 1, " has no words"));
        }
      }
    }
    if (term.occur != FulltextTerm::Occur::kMustNot) ++search.positive_;
    if (term.occur == FulltextTerm::Occur::kMust) ++search.required_;
    search.terms_.push_back(std::move(term));
  }
  if (search.terms_.empty()) {
    return absl::InvalidArgumentError("the search has no words");
  }
  if (search.positive_ == 0) {
    return absl::InvalidArgumentError(
        "the search only excludes (-term): it needs a term to find");
  }
  return search;
}

absl::StatusOr<std::optional<double>> FulltextSearch::Score(
    std::string_view value) const {
  std::vector<FulltextToken> tokens;
  absl::Status s = storage::TokenizeFulltext(value, &tokens);
  if (!s.ok()) return s;
  int found = 0;
  for (const FulltextTerm& term : terms_) {
    bool has = false;
    switch (term.kind) {
      case FulltextTerm::Kind::kWord:
        has = std::any_of(
            tokens.begin(), tokens.end(),
            [&](const FulltextToken& t) { return t.stem == term.stems[0]; });
        break;
      case FulltextTerm::Kind::kPhrase: {
        const size_t n = term.stems.size();
        for (size_t i = 0; !has && i + n <= tokens.size(); ++i) {
          has = true;
          for (size_t j = 0; has && j < n; ++j) {
            has = tokens[i + j].stem == term.stems[j];
          }
        }
        break;
      }
      case FulltextTerm::Kind::kPrefix:
        has = std::any_of(tokens.begin(), tokens.end(),
                          [&](const FulltextToken& t) {
                            return t.word.starts_with(term.prefix);
                          });
        break;
    }
    switch (term.occur) {
      case FulltextTerm::Occur::kMustNot:
        if (has) return std::nullopt;
        break;
      case FulltextTerm::Occur::kMust:
        if (!has) return std::nullopt;
        ++found;
        break;
      case FulltextTerm::Occur::kShould:
        if (has) ++found;
        break;
    }
  }
  if (found == 0) return std::nullopt;
  return static_cast<double>(found) / positive_;
}

}  // namespace mentat::query::execution
