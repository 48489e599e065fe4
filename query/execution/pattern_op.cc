#include "execution/pattern_op.h"

#include <algorithm>

#include "execution/probe_hints.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/value_codec.h"
#include "planner/edn_to_value.h"

namespace mentat::query::execution {

using storage::Datom;
using storage::IndexOrder;
using storage::Value;

namespace {

// The datom's value at a position, as the executor binds it.
Value Field(const Datom& d, int pos) {
  switch (pos) {
    case 0:
      return Value::Ref(d.e);
    case 1:
      return Value::Ref(d.a);
    case 2:
      return d.v;
    case 3:
      return Value::Ref(d.tx);
    default:
      return Value::Boolean(d.added);
  }
}

bool FieldEq(const Datom& d, int pos, const Value& v) {
  storage::EntityId id;
  switch (pos) {
    case 0:
      return AsEntity(v, &id) && id == d.e;
    case 1:
      return AsEntity(v, &id) && id == d.a;
    case 2:
      return JoinEq(d.v, v);
    case 3:
      return AsEntity(v, &id) && id == d.tx;
    default:
      return v.type() == storage::ValueType::kBoolean && v.as_bool() == d.added;
  }
}

// Compares `v` with a range bound of the row (or a constant) into *c;
// false when they cannot be compared (a bound of another type, or none):
// then the predicates, which stay as filters, decide.
bool CompareWithBound(const Value& v, const planner::RangeBound& bound,
                      const Value* row, std::strong_ordering* c) {
  const planner::PlanTerm& term = bound.term;
  const Value* b = nullptr;
  if (term.kind == planner::PlanTerm::Kind::kSlot) {
    b = &row[term.slot];
  } else if (term.kind == planner::PlanTerm::Kind::kConst) {
    b = &term.value;
  }
  if (b == nullptr || b->type() != v.type()) return false;
  *c = v <=> *b;
  return true;
}

}  // namespace

PatternOp::PatternOp(ExecContext* ctx, const planner::ScopePlan& scope,
                     const planner::Step& step, std::vector<planner::Slot> live,
                     StepLabel label)
    : Operator(ctx),
      scope_(scope),
      step_(step),
      p_(step.pattern),
      label_(std::move(label)),
      live_(std::move(live)),
      filters_(ctx),
      out_(scope.width()) {}

absl::Status PatternOp::Init() {
  const planner::PlanTerm* terms[5] = {&p_.e, &p_.a, &p_.v, &p_.tx, &p_.added};
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<TermRef> r = MakeTermRef(ctx_, *terms[i], &owned_);
    if (!r.ok()) return r.status();
    t_[i] = *r;
  }
  std::sort(live_.begin(), live_.end());
  live_.erase(std::unique(live_.begin(), live_.end()), live_.end());
  index_ = p_.index;
  prefix_len_ = p_.prefix_len;
  hash_join_ = p_.hash_join;
  ChooseColumnProbes();
  in_order_ = p_.entity_order && column_ == nullptr && p_.attr != nullptr &&
              index_ == IndexOrder::kAevt && prefix_len_ == 2;
  if (in_order_) storage::AppendEntityId(p_.attr->id, &attr_prefix_);
  switch (index_) {
    case IndexOrder::kEavt:
      order_[0] = kE, order_[1] = kA, order_[2] = kV;
      break;
    case IndexOrder::kAevt:
      order_[0] = kA, order_[1] = kE, order_[2] = kV;
      break;
    case IndexOrder::kAvet:
      order_[0] = kA, order_[1] = kV, order_[2] = kE;
      break;
    case IndexOrder::kVaet:
      order_[0] = kV, order_[1] = kA, order_[2] = kE;
      break;
  }
  for (int i = 0; i < prefix_len_ && i < 3; ++i) {
    in_prefix_[order_[i]] = true;
    const TermRef& t = t_[order_[i]];
    row_prefix_ |= t.kind == TermRef::Kind::kSlot &&
                   !scope_.const_slots[static_cast<size_t>(t.slot)];
  }
  for (int i = 0; i < 5; ++i) {
    const TermRef& t = t_[i];
    if (!in_prefix_[i] && t.known()) {
      match_pos_.push_back(static_cast<Pos>(i));
      // A hash join's build side leaves the join keys (row slots) to the
      // probe.
      if (t.kind != TermRef::Kind::kSlot ||
          scope_.const_slots[static_cast<size_t>(t.slot)]) {
        build_match_pos_.push_back(static_cast<Pos>(i));
      }
    }
    if (t.binds()) bind_out_.push_back(static_cast<Pos>(i));
    if (t.check) check_pos_.push_back(static_cast<Pos>(i));
  }
  if (bind_out_.size() == 1 && bind_out_[0] == kE) {
    entity_only_slot_ = t_[kE].slot;
  }
  absl::Status s = filters_.Init(step_.filters);
  if (!s.ok()) return s;
  cursor_ = ctx_->view().NewCursor(index_);
  const storage::Attribute* attr = p_.attr;
  const bool ranged = p_.lower.has_value() || p_.upper.has_value();
  // The datoms' values are not read when the value is `_` or part of the
  // seek prefix (and no range or hash join looks at it): [?i :issue/state
  // :state/open] decodes the entity alone.
  skip_value_ = !hash_join_ && !ranged &&
                (t_[kV].kind == TermRef::Kind::kNone || in_prefix_[kV]);
  cursor_->SetSkipValue(skip_value_);
  if (!ctx_->history() && attr != nullptr) {
    // A cardinality-one attribute of one entity has at most one datom at
    // any basis, in range or not: the range's predicates, which stay as
    // filters, judge it, and seeking to the range's start inside it would
    // cost more than they do.
    const bool by_entity = in_prefix_[kE] && in_prefix_[kA] && !attr->many();
    const bool by_unique_value = in_prefix_[kA] && in_prefix_[kV] &&
                                 attr->unique != storage::Unique::kNone;
    single_ = by_entity || (!ranged && (by_unique_value || prefix_len_ == 3));
    seek_range_ = !by_entity;
  }
  if (hash_join_) {
    for (int i = 0; i < 5; ++i) {
      const TermRef& t = t_[i];
      if (t.kind == TermRef::Kind::kSlot && t.bound &&
          !scope_.const_slots[static_cast<size_t>(t.slot)]) {
        key_pos_.push_back(static_cast<Pos>(i));
      } else if (t.kind == TermRef::Kind::kSlot && !t.bound) {
        bind_pos_.push_back(static_cast<Pos>(i));
      }
    }
    // One key that is always an entity id: hash int64s, not values.
    int_key_ =
        key_pos_.size() == 1 &&
        (key_pos_[0] != kV || (p_.attr != nullptr && p_.attr->is_ref()) ||
         index_ == IndexOrder::kVaet);
    key_width_ = int_key_ ? 0 : key_pos_.size();
    if (!int_key_) {
      build_index_ =
          std::make_unique<ChainIndex>(static_cast<int>(key_pos_.size()));
    }
    build_memory_ = std::make_unique<MemoryHold>(
        ctx_, label_.ToString() + " (hash join build side)");
    key_.resize(key_pos_.size());
  }
  return absl::OkStatus();
}

void PatternOp::ChooseColumnProbes() {
  if (p_.attr == nullptr || t_[kA].kind != TermRef::Kind::kConst ||
      ctx_->history()) {
    return;
  }
  // The entity comes from each row, the attribute is a constant, and
  // nothing else is in the prefix.
  const TermRef& e = t_[kE];
  const bool row_entity = e.kind == TermRef::Kind::kSlot && e.bound &&
                          !scope_.const_slots[static_cast<size_t>(e.slot)];
  const bool by_entity = !p_.hash_join && prefix_len_ == 2 &&
                         (index_ == IndexOrder::kEavt || p_.entity_order);
  // A hash join keyed on the entity alone: [?e :a ?v] with ?e from the
  // rows, v free (or ranged) and no tx.
  const bool hashed_on_entity =
      p_.hash_join && row_entity && t_[kTx].kind == TermRef::Kind::kNone &&
      t_[kAdded].kind == TermRef::Kind::kNone &&
      !(t_[kV].kind == TermRef::Kind::kSlot && t_[kV].bound);
  if (!by_entity && !hashed_on_entity) return;
  // With a column of the attribute in AEVT, probing (a, e) for each row,
  // in key order, costs a few comparisons in memory: less than a record
  // lookup in EAVT, and less than scanning the attribute into a hash
  // table. Without one, the rows count towards building it.
  column_ = ctx_->view().EntityColumnOf(p_.attr->id);
  if (column_ != nullptr) {
    index_ = IndexOrder::kAevt;
    prefix_len_ = 2;
    hash_join_ = false;
    column_rows_ = row_entity;
  } else {
    column_demand_ = true;
  }
}

const storage::Attribute* PatternOp::AttrFor(const Value* row) const {
  if (p_.attr != nullptr) return p_.attr;
  if (!t_[kA].known()) return nullptr;
  storage::EntityId a;
  if (!AsEntity(t_[kA].Get(row), &a)) return nullptr;
  return ctx_->schema().FindAttribute(a);
}

const Value* PatternOp::Typed(const Value& v, const storage::Attribute* attr,
                              Value* scratch) const {
  if (attr == nullptr || v.type() == attr->type) return &v;
  *scratch = v;
  if (!planner::CoerceValue(attr->type, scratch)) return nullptr;
  return scratch;
}

bool PatternOp::AppendComponent(Pos pos, const Value* row) {
  const Value& v = t_[pos].Get(row);
  storage::EntityId id;
  if (pos != kV || index_ == IndexOrder::kVaet) {
    if (!AsEntity(v, &id)) return false;
    storage::AppendEntityId(id, &prefix_);
    return true;
  }
  const storage::Attribute* attr = AttrFor(row);
  if (attr == nullptr) return false;
  const Value* typed = Typed(v, attr, &scratch_);
  if (typed == nullptr) return false;
  storage::EncodeValue(*typed, &prefix_);
  return true;
}

bool PatternOp::BuildPrefix(const Value* row, bool independent) {
  prefix_.clear();
  for (int i = 0; i < prefix_len_; ++i) {
    const Pos pos = order_[i];
    if (independent && t_[pos].kind == TermRef::Kind::kSlot &&
        !scope_.const_slots[static_cast<size_t>(t_[pos].slot)]) {
      return false;  // the planner never puts a row slot in a build prefix
    }
    if (!AppendComponent(pos, row)) return false;
  }
  return true;
}

bool PatternOp::Matches(const Datom& d, const Value* row,
                        bool independent) const {
  for (const Pos i : independent ? build_match_pos_ : match_pos_) {
    if (!FieldEq(d, i, t_[i].Get(row))) return false;
  }
  return true;
}

void PatternOp::Bind(const Datom& d, Value* out) const {
  // Assigning in place keeps the row's string buffers for the next row
  // (assigning a fresh Value would free them).
  for (const Pos i : bind_out_) {
    Value& o = out[t_[i].slot];
    switch (i) {
      case kE:
        o.AssignInt(storage::ValueType::kRef, d.e);
        break;
      case kA:
        o.AssignInt(storage::ValueType::kRef, d.a);
        break;
      case kV:
        o = d.v;
        break;
      case kTx:
        o.AssignInt(storage::ValueType::kRef, d.tx);
        break;
      default:
        o.AssignBoolean(d.added);
        break;
    }
  }
}

bool PatternOp::RangeStart(const Value* row) {
  if (!p_.lower.has_value()) return true;
  Value bound;
  const planner::PlanTerm& term = p_.lower->term;
  if (term.kind == planner::PlanTerm::Kind::kSlot) {
    bound = row[term.slot];
  } else if (term.kind == planner::PlanTerm::Kind::kConst) {
    bound = term.value;
  } else {
    return true;
  }
  const Value* typed = Typed(bound, p_.attr, &scratch_);
  // A bound of another type leaves the scan whole; the predicate, which
  // stays as a filter, decides.
  if (typed == nullptr || typed->type() != p_.attr->type) return true;
  target_ = prefix_;
  storage::EncodeValue(*typed, &target_);
  cursor_->SeekWithin(target_);
  return true;
}

bool PatternOp::PastUpper(const Datom& d, const Value* row) const {
  std::strong_ordering c = std::strong_ordering::equal;
  if (!CompareWithBound(d.v, *p_.upper, row, &c)) return false;
  return p_.upper->inclusive ? c > 0 : c >= 0;
}

bool PatternOp::BelowLower(const Datom& d, const Value* row) const {
  std::strong_ordering c = std::strong_ordering::equal;
  if (!CompareWithBound(d.v, *p_.lower, row, &c)) return false;
  return p_.lower->inclusive ? c < 0 : c <= 0;
}

absl::Status PatternOp::Output(const Datom& d, const Value* row) {
  if (!Matches(d, row, false)) return absl::OkStatus();
  Value* o = out_.AppendCopy(row, live_);
  if (entity_only_slot_ >= 0) {
    o[entity_only_slot_].AssignInt(storage::ValueType::kRef, d.e);
  } else {
    Bind(d, o);
  }
  bool ok = true;
  for (const Pos i : check_pos_) {
    if (!FieldEq(d, i, o[t_[i].slot])) {
      ok = false;
      break;
    }
  }
  if (!ok || !filters_.Pass(o)) {
    out_.PopBack();
    return absl::OkStatus();
  }
  return EmitIfFull(out_);
}

absl::Status PatternOp::Probe(const Value* row, bool prefix_ready) {
  if (!prefix_ready && !BuildPrefix(row, false)) return absl::OkStatus();
  // Past this many probes a step reads in bulk: the records its misses
  // would cache are not read again (the attribute earns a column instead).
  if (++probes_ == kBulkProbes) cursor_->SetBulk(true);
  if (in_order_) {
    SeekInOrder();
  } else {
    cursor_->Seek(prefix_);
  }
  if (seek_range_) RangeStart(row);
  const bool upper = p_.upper.has_value();
  for (; cursor_->Valid(); cursor_->Next()) {
    absl::Status s = ctx_->Tick();
    if (!s.ok()) return s;
    // The walk's cursor reads the whole attribute: the entity ends here.
    if (in_order_ && !cursor_->key().starts_with(prefix_)) break;
    const Datom& d = cursor_->datom();
    if (upper && PastUpper(d, row)) break;
    s = Output(d, row);
    if (!s.ok()) return s;
    if (single_ || ctx_->stopped()) break;
  }
  if (!filters_.status().ok()) return filters_.status();
  return cursor_->status();
}

void PatternOp::SeekInOrder() {
  if (!walking_) {
    walking_ = true;
    cursor_->Seek(attr_prefix_);
    cursor_->SeekForward(prefix_);
  } else if (prefix_ <= last_target_) {
    // A row out of order (or the same entity again): the keys it wants
    // may lie behind the cursor.
    cursor_->SeekWithin(prefix_);
  } else if (cursor_->Valid() && cursor_->key() < prefix_) {
    cursor_->SeekForward(prefix_);
  }
  // Otherwise the cursor is at the first key past the last target, which
  // is the first at or past this one, or at the attribute's end.
  last_target_.assign(prefix_);
}

absl::Status PatternOp::Build(const Value* row) {
  built_ = true;
  if (!BuildPrefix(row, true)) return absl::OkStatus();
  cursor_->Seek(prefix_);
  RangeStart(row);
  const bool upper = p_.upper.has_value();
  const size_t width = key_width_ + bind_pos_.size();
  uint32_t n = 0;
  size_t bytes = 0;
  auto index_bytes = [&] {
    return int_key_ ? int_heads_.capacity() * 17 + int_next_.capacity() * 4
                    : build_index_->bytes();
  };
  for (; cursor_->Valid(); cursor_->Next()) {
    absl::Status s = ctx_->Tick();
    if (!s.ok()) return s;
    const Datom& d = cursor_->datom();
    if (upper && PastUpper(d, row)) break;
    if (!Matches(d, row, true)) continue;
    if (int_key_) {
      const storage::EntityId key = key_pos_[0] == kE    ? d.e
                                    : key_pos_[0] == kA  ? d.a
                                    : key_pos_[0] == kTx ? d.tx
                                                         : d.v.as_long();
      auto [it, inserted] = int_heads_.try_emplace(key, n);
      int_next_.push_back(inserted ? ChainIndex::kEnd : it->second);
      it->second = n;
    } else {
      for (Pos pos : key_pos_) build_.push_back(Field(d, pos));
    }
    for (Pos pos : bind_pos_) {
      if (pos == kV) {
        build_.push_back(d.v);
      } else {
        build_.push_back(Field(d, pos));
      }
    }
    const Value* r = build_.data() + static_cast<size_t>(n) * width;
    if (!int_key_) build_index_->Add(r, n);
    for (size_t i = 0; i < width; ++i) bytes += ValueBytes(r[i]);
    ++n;
    if ((n & 1023) == 0) {
      s = build_memory_->Update(bytes + index_bytes());
      if (!s.ok()) return s;
    }
  }
  absl::Status s = build_memory_->Update(bytes + index_bytes());
  if (!s.ok()) return s;
  return cursor_->status();
}

absl::Status PatternOp::ProbeHash(const Value* row) {
  ++probes_;
  uint32_t head = ChainIndex::kEnd;
  if (int_key_) {
    storage::EntityId key;
    if (!AsEntity(row[t_[key_pos_[0]].slot], &key)) return absl::OkStatus();
    auto it = int_heads_.find(key);
    if (it != int_heads_.end()) head = it->second;
  } else {
    for (size_t i = 0; i < key_pos_.size(); ++i) {
      key_[i] = row[t_[key_pos_[i]].slot];
    }
    head = build_index_->Head(key_.data());
  }
  const size_t width = key_width_ + bind_pos_.size();
  for (uint32_t r = head; r != ChainIndex::kEnd;
       r = int_key_ ? int_next_[r] : build_index_->Next(r)) {
    // A chain can hold the whole build side (a cartesian product has one
    // key): the limits are checked per row, as scans check them per datom.
    absl::Status tick = ctx_->Tick();
    if (!tick.ok()) return tick;
    const Value* b =
        build_.data() + static_cast<size_t>(r) * width + key_width_;
    Value* o = out_.AppendCopy(row, live_);
    bool ok = true;
    for (size_t i = 0; i < bind_pos_.size() && ok; ++i) {
      const TermRef& t = t_[bind_pos_[i]];
      if (t.check) {
        ok = JoinEq(o[t.slot], b[i]);
      } else {
        o[t.slot] = b[i];
      }
    }
    if (!ok || !filters_.Pass(o)) {
      out_.PopBack();
      continue;
    }
    absl::Status s = EmitIfFull(out_);
    if (!s.ok()) return s;
    if (ctx_->stopped()) break;
  }
  return filters_.status();
}

void PatternOp::SortProbes() {
  auto key = [&](const SortedProbe& p) { return ProbeKey(p); };
  // Rows often come in key order already (the entities of an AVET scan of
  // one value): then there is nothing to sort. Unsorted rows usually show
  // it within the first few.
  if (std::is_sorted(sorted_.begin(), sorted_.end(),
                     [&](const SortedProbe& a, const SortedProbe& b) {
                       return key(a) < key(b);
                     })) {
    return;
  }
  // The bytes every prefix shares (the attribute, a value's type, the
  // start of similar strings) decide nothing: the heads start after them.
  const std::string_view first = key(sorted_[0]);
  size_t common = first.size();
  for (const SortedProbe& p : sorted_) {
    const std::string_view k = key(p);
    const size_t n = std::min(common, k.size());
    common = std::mismatch(first.begin(), first.begin() + n, k.begin()).first -
             first.begin();
  }
  for (SortedProbe& p : sorted_) {
    const std::string_view rest = key(p).substr(common);
    uint64_t head = 0;
    for (size_t i = 0; i < 8; ++i) {
      head = (head << 8) |
             (i < rest.size() ? static_cast<uint8_t>(rest[i]) : uint64_t{0});
    }
    p.head = head;
  }
  // Equal heads fall back to the whole prefixes (a head padded with zeros
  // ties with real zero bytes), then to the row order.
  auto less = [&](const SortedProbe& a, const SortedProbe& b) {
    if (a.head != b.head) return a.head < b.head;
    const std::string_view ka = key(a), kb = key(b);
    return ka != kb ? ka < kb : a.row < b.row;
  };
  std::sort(sorted_.begin(), sorted_.end(), less);
}

absl::Status PatternOp::Push(Batch& in) {
  if (step_.never) return absl::OkStatus();
  if (column_rows_) return PushColumn(in);
  if (!hash_join_ && row_prefix_ && in.size() >= kSortedProbeRows) {
    // Seeking in key order keeps the index and data blocks the seeks
    // touch hot: neighbouring keys share them.
    // The prefixes back to back in one buffer: no allocation per row.
    probe_keys_.clear();
    sorted_.clear();
    for (size_t i = 0; i < in.size(); ++i) {
      if (BuildPrefix(in.row(i), false)) {
        sorted_.push_back({0, static_cast<uint32_t>(probe_keys_.size()),
                           static_cast<uint32_t>(prefix_.size()),
                           static_cast<uint32_t>(i)});
        probe_keys_.append(prefix_);
      }
    }
    SortProbes();
    auto key = [&](size_t i) { return ProbeKey(sorted_[i]); };
    // Only the record caches (EAVT, AVET) take hints.
    const bool hints =
        index_ == IndexOrder::kEavt || index_ == IndexOrder::kAvet;
    auto hint = [&](size_t j, int step) { cursor_->Prefetch(key(j), step); };
    if (hints) ProbeHints::Start(sorted_.size(), hint);
    for (size_t i = 0; i < sorted_.size(); ++i) {
      if (ctx_->stopped()) break;
      if (hints) ProbeHints::Before(i, sorted_.size(), hint);
      const SortedProbe& p = sorted_[i];
      prefix_.assign(key(i));
      absl::Status s = Probe(in.row(p.row), true);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  for (size_t i = 0; i < in.size() && !ctx_->stopped(); ++i) {
    const Value* row = in.row(i);
    absl::Status s;
    if (hash_join_) {
      if (!built_) {
        s = Build(row);
        if (!s.ok()) return s;
      }
      s = ProbeHash(row);
    } else {
      s = Probe(row, false);
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::execution
