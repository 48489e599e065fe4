// PatternOp's probes of an attribute's in-memory column
// (storage::EntityColumn), for [?e :attr ?v] with ?e from the rows: a
// batch's entities are sorted, located in one forward pass over the
// column's entities, and then read with the datoms of the probes a few
// ahead prefetched. A seek per row through the cursor stack cost more in
// building and comparing key prefixes than the lookup itself, and each
// row's key was a fresh cache miss the CPU could not see coming.

#include <algorithm>

#include "execution/pattern_op.h"

namespace mentat::query::execution {

namespace {

// How many probes ahead a datom is prefetched: far enough for its memory
// to arrive, near enough to stay in the cache until it is read.
constexpr size_t kColumnPrefetchAhead = 16;

}  // namespace

absl::Status PatternOp::PushColumn(Batch& in) {
  const storage::EntityColumn& column = *column_;
  const size_t e_slot = static_cast<size_t>(t_[kE].slot);
  column_probes_.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    storage::EntityId e;
    // A row whose entity is not an entity id matches nothing.
    if (!AsEntity(in.row(i)[e_slot], &e)) continue;
    column_probes_.push_back({e, static_cast<uint32_t>(i), 0});
  }
  auto by_entity = [](const ColumnProbe& a, const ColumnProbe& b) {
    return a.e != b.e ? a.e < b.e : a.row < b.row;
  };
  // Rows from a scan of one value (an AVET prefix) come in entity order.
  if (!std::is_sorted(column_probes_.begin(), column_probes_.end(),
                      by_entity)) {
    std::sort(column_probes_.begin(), column_probes_.end(), by_entity);
  }
  if (column.SeekEachPays(column_probes_.size())) {
    // Few entities over a large column (input bindings' users among
    // millions): searched together, their cache misses overlap.
    constexpr size_t kGroup = 16;
    storage::EntityId es[kGroup];
    size_t found[kGroup];
    for (size_t k = 0; k < column_probes_.size(); k += kGroup) {
      const size_t m = std::min(kGroup, column_probes_.size() - k);
      for (size_t j = 0; j < m; ++j) es[j] = column_probes_[k + j].e;
      column.SeekEach(es, m, found);
      for (size_t j = 0; j < m; ++j) {
        column_probes_[k + j].pos = static_cast<uint32_t>(found[j]);
      }
    }
  } else {
    size_t pos = 0;
    for (ColumnProbe& p : column_probes_) {
      pos = column.Seek(p.e, pos);
      p.pos = static_cast<uint32_t>(pos);
    }
  }
  const size_t size = column.size();
  const size_t n = column_probes_.size();
  const bool lower = p_.lower.has_value();
  const bool upper = p_.upper.has_value();
  for (size_t k = 0; k < n && k < kColumnPrefetchAhead; ++k) {
    if (column_probes_[k].pos < size) column.Prefetch(column_probes_[k].pos);
  }
  // Entities that commits changed since the column's base was read are
  // read whole from the column's changes (few: a fold keeps them so).
  const bool changes = column.has_changes();
  storage::EntityColumn::ChangePos change_pos;
  for (size_t k = 0; k < n; ++k) {
    if (ctx_->stopped()) break;
    if (k + kColumnPrefetchAhead < n) {
      const size_t ahead = column_probes_[k + kColumnPrefetchAhead].pos;
      if (ahead < size) column.Prefetch(ahead);
    }
    const ColumnProbe& p = column_probes_[k];
    const storage::Value* row = in.row(p.row);
    ++probes_;
    if (changes && column.Changed(p.e, &change_pos)) {
      absl::Status s =
          column.ReadChanged(p.e, p.pos, change_pos, &changed_datoms_);
      if (!s.ok()) return s;
      for (const storage::Datom& d : changed_datoms_) {
        s = ctx_->Tick();
        if (!s.ok()) return s;
        if (upper && PastUpper(d, row)) break;
        if (!lower || !BelowLower(d, row)) {
          s = Output(d, row);
          if (!s.ok()) return s;
        }
        if (single_ || ctx_->stopped()) break;
      }
      continue;
    }
    for (size_t i = p.pos; i < size && column.entity(i) == p.e; ++i) {
      absl::Status s = ctx_->Tick();
      if (!s.ok()) return s;
      s = column.Read(i, skip_value_, &datom_);
      if (!s.ok()) return s;
      // An entity's datoms are in value order: past the range's end,
      // nothing more of it can match.
      if (upper && PastUpper(datom_, row)) break;
      if (!lower || !BelowLower(datom_, row)) {
        s = Output(datom_, row);
        if (!s.ok()) return s;
      }
      if (single_ || ctx_->stopped()) break;
    }
  }
  return filters_.status();
}

}  // namespace mentat::query::execution
