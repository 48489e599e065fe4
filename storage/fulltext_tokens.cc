// The fulltext tokenizer: ICU finds the words, ICU folds their case, and
// Snowball's English stemmer stems them. No word rules of our own.

#include <libstemmer.h>
#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <memory>

#include "mentat/storage/fulltext.h"

namespace mentat::storage {
namespace {

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

// Per thread: neither a BreakIterator nor a stemmer may be shared.
struct Tokenizer {
  std::unique_ptr<icu::BreakIterator> words;
  std::unique_ptr<sb_stemmer, StemmerDeleter> stemmer;
  bool ok = false;

  Tokenizer() {
    UErrorCode status = U_ZERO_ERROR;
    words.reset(
        icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
    stemmer.reset(sb_stemmer_new("english", "UTF_8"));
    ok = U_SUCCESS(status) && words != nullptr && stemmer != nullptr;
  }
};

}  // namespace

absl::Status TokenizeFulltext(std::string_view text,
                              std::vector<FulltextToken>* out) {
  thread_local Tokenizer tokenizer;
  if (!tokenizer.ok) {
    return absl::InternalError(
        "fulltext: cannot set up ICU's word break iterator or the English "
        "Snowball stemmer");
  }
  const icu::UnicodeString u = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  icu::BreakIterator& it = *tokenizer.words;
  it.setText(u);
  uint32_t position = 0;
  for (int32_t start = it.first(), end = it.next();
       end != icu::BreakIterator::DONE; start = end, end = it.next()) {
    // Spaces and punctuation have the status UBRK_WORD_NONE; words,
    // numbers, kana and ideographs have their own ranges above it.
    if (it.getRuleStatus() == UBRK_WORD_NONE) continue;
    icu::UnicodeString w = u.tempSubStringBetween(start, end);
    w.foldCase();
    FulltextToken token;
    w.toUTF8String(token.word);
    if (token.word.empty() || token.word.size() > kFulltextMaxWordBytes ||
        token.word.find('\0') != std::string::npos) {
      continue;
    }
    const sb_symbol* stem =
        sb_stemmer_stem(tokenizer.stemmer.get(),
                        reinterpret_cast<const sb_symbol*>(token.word.data()),
                        static_cast<int>(token.word.size()));
    if (stem == nullptr) {
      return absl::ResourceExhaustedError(
          "fulltext: the stemmer ran out of "
          "memory");
    }
    token.stem.assign(
        reinterpret_cast<const char*>(stem),
        static_cast<size_t>(sb_stemmer_length(tokenizer.stemmer.get())));
    token.position = position++;
    out->push_back(std::move(token));
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage
