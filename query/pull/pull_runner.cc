#include "pull/pull_runner.h"

#include <algorithm>
#include <utility>

#include "mentat/base/str_cat.h"
#include "mentat/query/pull.h"
#include "mentat/storage/keys.h"

namespace mentat::query::pull_internal {
namespace {

using edn::EdnValue;
using storage::Datom;
using storage::DatomCursor;
using storage::EntityId;

// Datoms stepped over with Next() before a gap is crossed with a seek: a
// Next is far cheaper than a seek while the gap is short.
constexpr int kNextsBeforeSeek = 8;

// Pops the entity pulled last when a pull of it ends, however it ends.
class PathEntry {
 public:
  PathEntry(std::vector<EntityId>* path, EntityId e) : path_(path) {
    path_->push_back(e);
  }
  ~PathEntry() { path_->pop_back(); }
  PathEntry(const PathEntry&) = delete;
  PathEntry& operator=(const PathEntry&) = delete;

 private:
  std::vector<EntityId>* path_;
};

EdnValue& At(std::vector<EdnValue>& slots_or_kv, size_t index, int item) {
  EdnValue& v = slots_or_kv[index];
  return item < 0 ? v : v.mutable_items()[item];
}

}  // namespace

PullRunner::PullRunner(storage::DbView view, std::unique_ptr<PullPlan> plan,
                       execution::ExecContext* ctx)
    : view_(std::move(view)),
      plan_(std::move(plan)),
      ctx_(ctx),
      depth_(plan_->recursion_slots(), 0),
      db_id_key_(EdnValue::Keyword("db/id")),
      db_ident_key_(EdnValue::Keyword("db/ident")) {}

absl::StatusOr<EdnValue> PullRunner::Pull(EntityId e, size_t* bytes) {
  path_.clear();
  std::fill(depth_.begin(), depth_.end(), 0);
  charged_ = 0;
  grown_ = 0;
  entities_ = 0;
  absl::StatusOr<EdnValue> result = PullEntity(e, plan_->root());
  if (result.ok()) {
    absl::Status s = Step();
    if (!s.ok()) result = s;
  }
  ctx_->Release(charged_);
  *bytes = charged_;
  return result;
}

absl::Status PullRunner::Step() {
  if (grown_ != 0) {
    const size_t more = grown_;
    grown_ = 0;
    charged_ += more;
    absl::Status s = ctx_->Charge(more, "the pull result");
    if (!s.ok()) return s;
    const size_t cap = ctx_->options().max_pull_bytes;
    if (cap != 0 && bytes_before_ + charged_ > cap) {
      return absl::ResourceExhaustedError(StrCat(
          "the pull result grew past its size cap of ", cap,
          " bytes (--pull-max-bytes) after ", entities_, " entities expanded",
          bytes_before_ != 0 ? ", counting the results before it" : "",
          "; give recursion a depth ({:attr 5} rather than {:attr ...}), "
          "a :limit to many-valued attributes, or pull fewer entities at "
          "once"));
    }
  }
  return ctx_->Tick();
}

DatomCursor& PullRunner::Eavt() {
  if (eavt_ == nullptr) eavt_ = view_.NewCursor(storage::IndexOrder::kEavt);
  return *eavt_;
}

DatomCursor& PullRunner::Vaet() {
  if (vaet_ == nullptr) vaet_ = view_.NewCursor(storage::IndexOrder::kVaet);
  return *vaet_;
}

bool PullRunner::OnPath(EntityId e) const {
  return std::find(path_.begin(), path_.end(), e) != path_.end();
}

EdnValue PullRunner::RefMap(EntityId target) {
  std::vector<EdnValue> kv;
  const std::string* ident = plan_->schema().IdentForEntity(target);
  kv.reserve(ident == nullptr ? 2 : 4);
  kv.push_back(db_id_key_);
  kv.push_back(EdnValue::Int(target));
  if (ident != nullptr) {
    kv.push_back(db_ident_key_);
    kv.push_back(EdnValue::Keyword(*ident));
  }
  for (const EdnValue& v : kv) Grow(v);
  EdnValue map = EdnValue::Map(std::move(kv));
  Grow(map);
  return map;
}

absl::StatusOr<EdnValue> PullRunner::PullEntity(EntityId e,
                                                const PlanPattern& p) {
  PathEntry on_path(&path_, e);
  ++entities_;
  grown_ += sizeof(EdnValue);  // the entity's map
  absl::Status step = Step();
  if (!step.ok()) return step;
  EntityState st;
  const size_t n = p.attrs.size();
  st.values.resize(n);
  st.counts.assign(n, 0);
  if (p.wildcard) {
    // Dropped again below if the entity turns out to have no datoms.
    st.kv.push_back(db_id_key_);
    st.kv.push_back(EdnValue::Int(e));
    grown_ += 2 * sizeof(EdnValue);
  }
  if (p.wildcard || !p.forward.empty()) {
    absl::Status s = ScanForward(e, p, &st);
    if (!s.ok()) return s;
  }
  if (p.has_reverse) {
    absl::Status s = ScanReverse(e, p, &st);
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < n; ++i) {
    if (p.attrs[i].kind == PlanAttrKind::kDbId) {
      st.values[i] = EdnValue::Int(e);
      st.counts[i] = 1;
      Grow(st.values[i]);
    }
  }
  // Nested entities, now that this entity's reads are over.
  for (const Deferred& d : st.deferred) {
    absl::StatusOr<EdnValue> nested = Expand(d.target, d.spec);
    if (!nested.ok()) return nested.status();
    EdnValue& place = d.slot >= 0 ? At(st.values, d.slot, d.item)
                                  : At(st.kv, -1 - d.slot, d.item);
    place = *std::move(nested);
  }
  if (p.wildcard && (!st.found || p.explicit_db_id)) {
    st.kv.erase(st.kv.begin(), st.kv.begin() + 2);
  }
  for (size_t i = 0; i < n; ++i) {
    const PlanAttr& a = p.attrs[i];
    if (!Active(a)) continue;
    if (st.counts[i] > 0) {
      st.kv.push_back(a.key);
      st.kv.push_back(std::move(st.values[i]));
      Grow(a.key);
    } else if (a.default_value.has_value()) {
      st.kv.push_back(a.key);
      st.kv.push_back(*a.default_value);
      Grow(a.key);
      Grow(*a.default_value);
    }
  }
  return EdnValue::Map(std::move(st.kv));
}

void PullRunner::SkipTo(DatomCursor& c, EntityId e, EntityId a_min) {
  for (int steps = 0; c.Valid() && c.datom().a < a_min; ++steps) {
    if (steps == kNextsBeforeSeek) {
      key_.clear();
      storage::EavtKey::EncodePrefix(e, a_min, &key_);
      c.SeekWithin(key_);
      return;
    }
    c.Next();
  }
}

absl::Status PullRunner::ScanForward(EntityId e, const PlanPattern& p,
                                     EntityState* st) {
  enum class Run : uint8_t { kSkip, kSlots, kWildcard };
  const storage::Schema& schema = plan_->schema();
  DatomCursor& c = Eavt();
  key_.clear();
  storage::EavtKey::EncodePrefix(e, &key_);
  c.Seek(key_);
  size_t fwd = 0;  // the first forward spec not yet behind the cursor
  size_t run_begin = 0, run_end = 0;  // forward specs of the current run
  EntityId run_a = -1;
  Run run = Run::kSkip;
  const storage::Attribute* run_attr = nullptr;
  size_t wild_index = 0;
  while (c.Valid()) {
    absl::Status step = Step();
    if (!step.ok()) return step;
    const Datom& d = c.datom();
    if (d.a != run_a) {
      st->found = true;
      run_a = d.a;
      run = Run::kSkip;
      while (fwd < p.forward.size() && p.forward[fwd].first < d.a) ++fwd;
      bool matched = false;
      if (fwd < p.forward.size() && p.forward[fwd].first == d.a) {
        matched = true;
        run_begin = fwd;
        while (fwd < p.forward.size() && p.forward[fwd].first == d.a) ++fwd;
        run_end = fwd;
        for (size_t i = run_begin; i < run_end; ++i) {
          if (Active(p.attrs[p.forward[i].second])) run = Run::kSlots;
        }
      }
      // A recursive spec past its depth leaves its attribute to the
      // wildcard, if there is one.
      if (run == Run::kSkip && p.wildcard &&
          (matched || !p.wildcard_skip.contains(d.a)) &&
          (run_attr = schema.FindAttribute(d.a)) != nullptr) {
        run = Run::kWildcard;
        st->kv.push_back(EdnValue::Keyword(run_attr->ident));
        st->kv.push_back(run_attr->many() ? EdnValue::Vector({}) : EdnValue());
        wild_index = st->kv.size() - 1;
        Grow(st->kv[wild_index - 1]);
        Grow(st->kv[wild_index]);
      }
      if (run == Run::kSkip && !p.wildcard) {
        if (fwd >= p.forward.size()) break;
        SkipTo(c, e, p.forward[fwd].first);
        continue;
      }
    }
    if (run == Run::kWildcard) {
      AddWildcardValue(d.v, *run_attr, wild_index, st);
    } else if (run == Run::kSlots) {
      bool room = false;
      for (size_t i = run_begin; i < run_end; ++i) {
        const int slot = p.forward[i].second;
        const PlanAttr& a = p.attrs[slot];
        if (!Active(a)) continue;
        if (a.many && a.limit >= 0 && st->counts[slot] >= a.limit) continue;
        AddSlotValue(d.v, a, slot, st);
        room |= a.many && (a.limit < 0 || st->counts[slot] < a.limit);
      }
      if (!room) {
        // Every spec of this attribute is full: skip its other values.
        run = Run::kSkip;
        if (!p.wildcard && fwd >= p.forward.size()) break;
        SkipTo(c, e, p.wildcard ? run_a + 1 : p.forward[fwd].first);
        continue;
      }
    }
    c.Next();
  }
  return c.status();
}

void PullRunner::AddSlotValue(const storage::Value& v, const PlanAttr& a,
                              int slot, EntityState* st) {
  EdnValue value;
  bool defer = false;
  if (v.type() == storage::ValueType::kRef) {
    if (a.sub != nullptr || a.expand_component) {
      defer = true;
    } else {
      value = RefMap(v.as_ref());
    }
  } else {
    value = ValueToEdn(v);
    Grow(value);
  }
  EdnValue& place = st->values[slot];
  int item = -1;
  if (a.many) {
    if (st->counts[slot] == 0) {
      place = EdnValue::Vector({});
      Grow(place);
    }
    item = static_cast<int>(place.items().size());
    place.mutable_items().push_back(std::move(value));
  } else {
    place = std::move(value);
  }
  ++st->counts[slot];
  if (defer) st->deferred.push_back({slot, item, v.as_ref(), &a});
}

void PullRunner::AddWildcardValue(const storage::Value& v,
                                  const storage::Attribute& attr, size_t index,
                                  EntityState* st) {
  EdnValue value;
  bool defer = false;
  if (v.type() == storage::ValueType::kRef) {
    if (attr.is_component) {
      defer = true;
    } else {
      value = RefMap(v.as_ref());
    }
  } else {
    value = ValueToEdn(v);
    Grow(value);
  }
  EdnValue& place = st->kv[index];
  int item = -1;
  if (attr.many()) {
    item = static_cast<int>(place.items().size());
    place.mutable_items().push_back(std::move(value));
  } else {
    place = std::move(value);
  }
  if (defer) {
    st->deferred.push_back(
        {-1 - static_cast<int>(index), item, v.as_ref(), nullptr});
  }
}

absl::Status PullRunner::ScanReverse(EntityId e, const PlanPattern& p,
                                     EntityState* st) {
  std::vector<EntityId> sources;
  for (size_t slot = 0; slot < p.attrs.size(); ++slot) {
    const PlanAttr& a = p.attrs[slot];
    if (a.kind != PlanAttrKind::kReverse || !Active(a)) continue;
    DatomCursor& c = Vaet();
    key_.clear();
    storage::VaetKey::EncodePrefix(e, a.attr->id, &key_);
    sources.clear();
    const size_t most = !a.many       ? 1
                        : a.limit < 0 ? SIZE_MAX
                                      : static_cast<size_t>(a.limit);
    for (c.Seek(key_); c.Valid() && sources.size() < most; c.Next()) {
      absl::Status step = Step();
      if (!step.ok()) return step;
      sources.push_back(c.datom().e);
    }
    if (!c.status().ok()) return c.status();
    for (EntityId source : sources) {
      AddSlotValue(storage::Value::Ref(source), a, static_cast<int>(slot), st);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<EdnValue> PullRunner::Expand(EntityId target,
                                            const PlanAttr* spec) {
  const PlanPattern* pattern = &plan_->wildcard();
  // Recursion and components can loop back; nested patterns cannot.
  bool may_cycle = true;
  if (spec != nullptr && spec->sub != nullptr) {
    pattern = spec->sub;
    may_cycle = spec->recursive;
  }
  if (path_.size() >= kMaxNesting || (may_cycle && OnPath(target))) {
    return RefMap(target);
  }
  if (spec == nullptr || !spec->recursive) return PullEntity(target, *pattern);
  ++depth_[spec->recursion_slot];
  absl::StatusOr<EdnValue> nested = PullEntity(target, *pattern);
  --depth_[spec->recursion_slot];
  return nested;
}

}  // namespace mentat::query::pull_internal
