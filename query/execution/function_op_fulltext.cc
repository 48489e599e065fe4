// FunctionOp's `fulltext`: [(fulltext $ :attr search) [[?e ?v ?tx ?score]]].
// Candidates come from the store's postings (storage/fulltext.h), which
// name every entity that ever held a matching word; each candidate's
// datoms of the attribute are then read at the view's basis and their
// values tokenized and scored again, so a retracted or changed value, an
// as_of, since or history basis all answer exactly.

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "execution/exec_context.h"
#include "execution/fulltext_search.h"
#include "execution/function_op.h"
#include "execution/row_set.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/fulltext.h"
#include "mentat/storage/keys.h"

namespace mentat::query::execution {

using storage::EntityId;
using storage::Value;

namespace {

std::vector<EntityId> Intersect(const std::vector<EntityId>& a,
                                const std::vector<EntityId>& b) {
  std::vector<EntityId> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(out));
  return out;
}

std::vector<EntityId> Union(const std::vector<EntityId>& a,
                            const std::vector<EntityId>& b) {
  std::vector<EntityId> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(),
                 std::back_inserter(out));
  return out;
}

void SortUnique(std::vector<EntityId>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

absl::StatusOr<std::vector<EntityId>> FunctionOp::TermEntities(
    EntityId a, const FulltextTerm& term) {
  const storage::Db& db = ctx_->view().db();
  std::vector<EntityId> out;
  // Every posting counts against the scan limit and the deadline, and
  // what is kept against the memory budget, as the scan goes: a prefix
  // of one letter may read millions.
  absl::Status limit;
  MemoryHold hold(ctx_, "fulltext postings");
  auto keep = [&](std::vector<EntityId>* v, EntityId e) {
    v->push_back(e);
    limit = ctx_->Tick();
    if (limit.ok() && (v->size() & 0xffff) == 0) {
      limit = hold.Update(v->size() * sizeof(EntityId));
    }
    return limit.ok();
  };
  auto add = [&](EntityId e) { return keep(&out, e); };
  absl::Status s;
  switch (term.kind) {
    case FulltextTerm::Kind::kPrefix:
      // Words that are their own stem are posted only by stem.
      s = storage::ScanFulltextPostings(db, a, storage::PostingKind::kStem,
                                        term.prefix, /*prefix=*/true, add);
      if (s.ok()) {
        s = storage::ScanFulltextPostings(db, a, storage::PostingKind::kWord,
                                          term.prefix, /*prefix=*/true, add);
      }
      break;
    case FulltextTerm::Kind::kWord:
    case FulltextTerm::Kind::kPhrase:
      for (size_t i = 0; s.ok() && i < term.stems.size(); ++i) {
        std::vector<EntityId> word;
        s = storage::ScanFulltextPostings(
            db, a, storage::PostingKind::kStem, term.stems[i],
            /*prefix=*/false, [&](EntityId e) { return keep(&word, e); });
        if (s.ok()) s = limit;
        // One term's postings come in entity order already.
        SortUnique(&word);
        out = i == 0 ? std::move(word) : Intersect(out, word);
        if (out.empty()) break;
      }
      break;
  }
  if (!s.ok()) return s;
  if (!limit.ok()) return limit;
  SortUnique(&out);
  return out;
}

absl::Status FunctionOp::Fulltext(const Value* row) {
  const EntityId a = args_[0].Get(row).as_ref();
  const Value& text = args_[1].Get(row);
  if (text.type() != storage::ValueType::kString) {
    return absl::InvalidArgumentError(
        StrCat(step_.text,
               ": fulltext's search (argument 3) must be a "
               "string; got ",
               text.DebugString()));
  }
  // A constant search is parsed once; a bound one when it changes.
  if (!fulltext_ || fulltext_text_ != text.text()) {
    absl::StatusOr<FulltextSearch> search = FulltextSearch::Parse(text.text());
    if (!search.ok()) {
      const absl::Status& s = search.status();
      return absl::Status(
          s.code(),
          StrCat(step_.text, ": ",
                 std::string_view(s.message().data(), s.message().size()),
                 " (search ", text.DebugString(), ")"));
    }
    fulltext_ = std::make_unique<FulltextSearch>(*std::move(search));
    fulltext_text_ = std::string(text.text());
  }
  // Candidates, sorted and once each: the entities in the postings of
  // every required term, or else of any optional term. A term's entities
  // are those of its word, of every word of its phrase, or of any word
  // starting with its prefix.
  MemoryHold hold(ctx_, "fulltext candidates");
  size_t held = 0;
  std::vector<EntityId> candidates;
  bool first = true;
  const bool required = fulltext_->HasRequired();
  for (const FulltextTerm& term : fulltext_->terms()) {
    if (term.occur != (required ? FulltextTerm::Occur::kMust
                                : FulltextTerm::Occur::kShould)) {
      continue;
    }
    absl::StatusOr<std::vector<EntityId>> entities = TermEntities(a, term);
    if (!entities.ok()) return entities.status();
    held += entities->size();
    absl::Status s = hold.Update((held + candidates.size()) * sizeof(EntityId));
    if (!s.ok()) return s;
    if (first) {
      candidates = *std::move(entities);
      first = false;
    } else if (required) {
      candidates = Intersect(candidates, *entities);
    } else {
      candidates = Union(candidates, *entities);
    }
    held -= entities->size();
    if (required && candidates.empty()) break;
  }
  if (eavt_ == nullptr) {
    eavt_ = ctx_->view().NewCursor(storage::IndexOrder::kEavt);
  }
  // A binding of fewer columns, or with `_`, projects the rows: the
  // relation is a set, so each projected row goes out once.
  const size_t width = outputs_.size();
  bool project = width < 4;
  for (const TermRef& t : outputs_) {
    project = project || t.kind != TermRef::Kind::kSlot;
  }
  std::optional<RowSet> seen;
  if (project) seen.emplace(static_cast<int>(width));
  Value cols[4];
  for (EntityId e : candidates) {
    absl::Status s = ctx_->Tick();
    if (!s.ok()) return s;
    key_.clear();
    storage::EavtKey::EncodePrefix(e, a, &key_);
    for (eavt_->Seek(key_); eavt_->Valid(); eavt_->Next()) {
      const storage::Datom& d = eavt_->datom();
      // History views show retractions too; a value matches where it was
      // asserted.
      if (!d.added || d.v.type() != storage::ValueType::kString) continue;
      absl::StatusOr<std::optional<double>> score =
          fulltext_->Score(d.v.text());
      if (!score.ok()) return score.status();
      if (!score->has_value()) continue;
      cols[0] = Value::Ref(e);
      cols[1] = d.v;
      cols[2] = Value::Ref(d.tx);
      cols[3] = Value::Double(**score);
      if (project) {
        for (size_t i = 0; i < width; ++i) {
          if (outputs_[i].kind != TermRef::Kind::kSlot) cols[i] = Value();
        }
        if (!seen->Insert(cols).second) continue;
      }
      s = EmitResult(row, cols, width);
      if (!s.ok()) return s;
      if (ctx_->stopped()) return absl::OkStatus();
    }
    if (!eavt_->status().ok()) return eavt_->status();
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::execution
