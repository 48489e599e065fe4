// FunctionOp's `fulltext`: [(fulltext $ :attr search) [[?e ?v ?tx ?score]]].
// Candidates come from the store's postings (storage/fulltext.h), which
// name every entity that ever held a matching word; each candidate's
// datoms of the attribute are then read at the view's basis and their
// values tokenized and scored again, so a retracted or changed value, an
// as_of, since or history basis all answer exactly.

#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
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
  const storage::Db& db = ctx_->view().db();
  // Sorted and once each: a prefix names an entity once per term.
  absl::btree_set<EntityId> candidates;
  MemoryHold hold(ctx_, "fulltext candidates");
  auto add = [&](EntityId e) {
    candidates.insert(e);
    return true;
  };
  for (const FulltextTerm* term : fulltext_->CandidateTerms()) {
    absl::Status s;
    if (term->kind == FulltextTerm::Kind::kPrefix) {
      // Words that are their own stem are posted only by stem.
      s = storage::ScanFulltextPostings(db, a, storage::PostingKind::kStem,
                                        term->prefix, /*prefix=*/true, add);
      if (s.ok()) {
        s = storage::ScanFulltextPostings(db, a, storage::PostingKind::kWord,
                                          term->prefix, /*prefix=*/true, add);
      }
    } else {
      // A phrase's entities hold its first word.
      s = storage::ScanFulltextPostings(db, a, storage::PostingKind::kStem,
                                        term->stems[0], /*prefix=*/false, add);
    }
    if (!s.ok()) return s;
    s = hold.Update(candidates.size() * 3 * sizeof(EntityId));
    if (!s.ok()) return s;
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
