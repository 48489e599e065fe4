// Excision (:db/excise): a transaction that removes datoms from all of
// history. TxApplier::PlanExcisions reads the requests among the
// transaction's datoms and finds what they remove; WriteExcisions deletes
// it from every family. docs/query.md ("Excision") states what reads show
// afterwards; the transactor drops its caches after the commit.

#include <algorithm>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "internal/coding.h"
#include "internal/fulltext_index.h"
#include "internal/log_codec.h"
#include "internal/tx_applier.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/keys.h"

namespace mentat::storage::internal {
namespace {

bool NamesExcisionAttribute(const EntityRef& a) {
  if (a.kind == EntityRef::Kind::kId) return IsExcisionAttribute(a.id);
  if (a.kind != EntityRef::Kind::kIdent) return false;
  return a.name == "db/excise" || a.name.starts_with("db.excise/");
}

[[nodiscard]] absl::Status RocksError(const rocksdb::Status& s,
                                      std::string_view what) {
  if (s.IsCorruption()) {
    return absl::DataLossError(StrCat(what, ": ", s.ToString()));
  }
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

std::string AttrName(const Schema& schema, EntityId a) {
  const Attribute* attr = schema.FindAttribute(a);
  return attr != nullptr ? StrCat(":", attr->ident) : StrCat(a);
}

}  // namespace

bool IsExcision(const TxRequest& request) {
  for (const TxOp& op : request.ops) {
    if (op.kind != TxOp::Kind::kRetractEntity && NamesExcisionAttribute(op.a)) {
      return true;
    }
  }
  return false;
}

bool IsExcision(const ReplicatedEntry& entry) {
  for (const Datom& d : entry.datoms) {
    if (IsExcisionAttribute(d.a)) return true;
  }
  return false;
}

absl::Status TxApplier::PlanExcisions(bool replicated) {
  // Requests, by record entity, in the order of their first datom.
  absl::flat_hash_map<EntityId, size_t> by_record;
  for (const PendingDatom& p : datoms_) {
    if (!IsExcisionAttribute(p.datom.a)) continue;
    if (!replicated && (!p.datom.added || !IsFresh(p.datom.e))) {
      return OpError(absl::StatusCode::kInvalidArgument, p.source,
                     StrCat("an excision request is a new entity (a tempid) "
                            "asserting :db/excise; entity ",
                            p.datom.e,
                            " is not, and a request once made is never "
                            "changed or retracted"));
    }
    auto [it, inserted] = by_record.try_emplace(p.datom.e, excisions_.size());
    if (inserted) {
      excisions_.emplace_back();
      excisions_.back().record = p.datom.e;
    }
    Excision& x = excisions_[it->second];
    if (x.source == nullptr || p.datom.a == ids::kDbExcise) x.source = p.source;
    switch (p.datom.a) {
      case ids::kDbExcise:
        x.target = p.datom.v.as_ref();
        break;
      case ids::kDbExciseAttrs:
        x.attrs.push_back(p.datom.v.as_ref());
        break;
      case ids::kDbExciseBeforeT: {
        const int64_t t = p.datom.v.as_long();
        if (!replicated && !IsTxId(t) && (t < 0 || t > kCounterMask)) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         StrCat(":db.excise/beforeT ", t,
                                " is neither a transaction id nor a t"));
        }
        if (!replicated && x.before_given) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         "an excision request takes :db.excise/before or "
                         ":db.excise/beforeT, not both");
        }
        x.before = IsTxId(t) ? t : MakeEntityId(Partition::kTx, t);
        x.before_given = true;
        break;
      }
      case ids::kDbExciseBefore: {
        if (!replicated && x.before_given) {
          return OpError(absl::StatusCode::kInvalidArgument, p.source,
                         "an excision request takes :db.excise/before or "
                         ":db.excise/beforeT, not both");
        }
        // The first transaction at or after the instant: instants never
        // go back, so every earlier transaction is before it.
        std::string prefix;
        AvetKey::EncodePrefix(ids::kDbTxInstant, &prefix);
        std::string start = prefix;
        AvetKey::EncodePrefix(ids::kDbTxInstant, p.datom.v, &start);
        std::optional<EntityId> first;
        if (const StoreCore* core = group_->ExcisionStore(); core != nullptr) {
          std::unique_ptr<rocksdb::Iterator> it(core->db->NewIterator(
              TotalOrderReadOptions(), core->cf(Cf::kAvet)));
          it->Seek(start);
          if (it->Valid() && it->key().starts_with(prefix)) {
            Datom d;
            absl::Status s = DecodeKeyIds(
                IndexOrder::kAvet,
                std::string_view(it->key().data(), it->key().size()), &d);
            if (!s.ok()) return s;
            first = d.e;
          } else if (!it->status().ok()) {
            return RocksError(it->status(), "reading :db/txInstant");
          }
        }
        // None: every transaction so far is before it.
        x.before = first.value_or(tx_);
        x.before_given = true;
        break;
      }
      default:
        break;
    }
  }
  if (excisions_.empty()) return absl::OkStatus();
  for (Excision& x : excisions_) {
    x.attribute = PartitionIndex(x.target) == 0 && x.target != 0;
  }
  const StoreCore* core = group_->ExcisionStore();
  if (core == nullptr) {
    return OpError(absl::StatusCode::kInvalidArgument, excisions_[0].source,
                   "an excision (:db/excise) is committed by Transact alone: "
                   "it cannot be speculative (with, dry_run), whose value "
                   "keeps the history it would remove, or part of a bulk "
                   "import");
  }
  if (!replicated) {
    for (const PendingDatom& p : datoms_) {
      if (p.datom.e == tx_ || by_record.contains(p.datom.e)) continue;
      return OpError(
          absl::StatusCode::kInvalidArgument, p.source,
          StrCat("a transaction that excises holds only excision "
                 "requests and data about the transaction itself; ",
                 p.datom.added ? "the assertion [" : "the retraction [",
                 p.datom.e, " :", p.attr->ident, " ", p.datom.v.DebugString(),
                 "] is neither"));
    }
    for (const Excision& x : excisions_) {
      absl::Status s = CheckExcision(x, excisions_);
      if (!s.ok()) return s;
    }
  }
  return FindExcised(*core);
}

absl::Status TxApplier::CheckExcision(const Excision& x,
                                      const std::vector<Excision>& all) {
  const Schema& schema = *state_->schema;
  const TxOp* source = x.source;
  if (x.target == 0) {
    return OpError(absl::StatusCode::kInvalidArgument, source,
                   StrCat("excision request ", x.record,
                          " has :db.excise/* but no :db/excise naming what "
                          "to excise"));
  }
  const EntityId t = x.target;
  if (IsTxId(t)) {
    return OpError(absl::StatusCode::kInvalidArgument, source,
                   StrCat("cannot excise transaction ", t,
                          ": a transaction's :db/txInstant orders the log "
                          "(excise the data it wrote instead)"));
  }
  // Composite tuples hold their members' values: excising a member alone
  // would leave them in the composite.
  auto covered = [&](EntityId entity, EntityId composite) {
    for (const Excision& y : all) {
      if (y.attribute && y.target == composite) return true;
      if (!y.attribute && y.target == entity &&
          (y.attrs.empty() || std::find(y.attrs.begin(), y.attrs.end(),
                                        composite) != y.attrs.end())) {
        return true;
      }
    }
    return false;
  };
  if (PartitionIndex(t) == static_cast<int>(Partition::kDb)) {
    const Attribute* attr = schema.FindAttribute(t);
    if (attr == nullptr) {
      return OpError(absl::StatusCode::kInvalidArgument, source,
                     StrCat("cannot excise entity ", t,
                            ": it is schema (an ident or a partition in "
                            ":db.part/db), not an attribute or data"));
    }
    if (t < ids::kFirstUserDbCounter || attr->system) {
      return OpError(
          absl::StatusCode::kInvalidArgument, source,
          StrCat("cannot excise the values of :", attr->ident, ": it is a ",
                 attr->system ? "system" : "bootstrap", " attribute"));
    }
    if (!x.attrs.empty()) {
      return OpError(
          absl::StatusCode::kInvalidArgument, source,
          StrCat(":db.excise/attrs limits an entity's excision; :", attr->ident,
                 " is an attribute, whose values on every entity "
                 "an excision of it removes"));
    }
    for (EntityId c : attr->composites) {
      if (!covered(0, c)) {
        return OpError(
            absl::StatusCode::kInvalidArgument, source,
            StrCat("attribute :", attr->ident,
                   " is a member of composite tuple ", AttrName(schema, c),
                   ", which holds its values: excise ", AttrName(schema, c),
                   " in the same transaction"));
      }
    }
    return absl::OkStatus();
  }
  for (EntityId a : x.attrs) {
    const Attribute* attr = schema.FindAttribute(a);
    if (attr == nullptr) {
      return OpError(absl::StatusCode::kInvalidArgument, source,
                     StrCat(":db.excise/attrs names entity ", a,
                            ", which is not an attribute"));
    }
    if (IsSchemaAttribute(a) || IsExcisionAttribute(a) ||
        a == ids::kDbTxInstant || attr->system) {
      return OpError(absl::StatusCode::kInvalidArgument, source,
                     StrCat(":db.excise/attrs names :", attr->ident,
                            ", which an excision cannot remove (schema, "
                            "system, excision or transaction attribute)"));
    }
    for (EntityId c : attr->composites) {
      if (!covered(t, c)) {
        return OpError(
            absl::StatusCode::kInvalidArgument, source,
            StrCat(":db.excise/attrs names :", attr->ident,
                   ", a member of composite tuple ", AttrName(schema, c),
                   ", which holds its values: name ", AttrName(schema, c),
                   " too"));
      }
    }
  }
  bool exists = false;
  std::optional<std::string> refused;
  std::string prefix;
  EavtKey::EncodePrefix(t, &prefix);
  absl::Status s = group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
    exists = true;
    const bool in_scope =
        x.attrs.empty() ||
        std::find(x.attrs.begin(), x.attrs.end(), d.a) != x.attrs.end();
    if (IsExcisionAttribute(d.a)) {
      refused = StrCat("cannot excise entity ", t,
                       ": it is an excision request, the record of what "
                       "was excised");
      return false;
    }
    if (in_scope && (IsSchemaAttribute(d.a) || d.a == ids::kDbTxInstant)) {
      refused = StrCat("cannot excise entity ", t, ": it holds ",
                       AttrName(schema, d.a), " ", d.v.DebugString(),
                       " (schema): retract that first, or name the other "
                       "attributes in :db.excise/attrs");
      return false;
    }
    return true;
  });
  if (!s.ok()) return s;
  if (refused) {
    return OpError(absl::StatusCode::kInvalidArgument, source, *refused);
  }
  if (!exists) {
    const StoreCore* core = group_->ExcisionStore();
    std::unique_ptr<rocksdb::Iterator> it(
        core->db->NewIterator(rocksdb::ReadOptions(), core->cf(Cf::kEavtHist)));
    it->Seek(prefix);
    exists = it->Valid() && it->key().starts_with(prefix);
    if (!exists && !it->status().ok()) {
      return RocksError(it->status(), "reading history");
    }
  }
  if (!exists) {
    return OpError(absl::StatusCode::kInvalidArgument, source,
                   StrCat("cannot excise entity ", t,
                          ": it has no datoms, current or past"));
  }
  return absl::OkStatus();
}

absl::Status TxApplier::FindExcised(const StoreCore& core) {
  const Schema& schema = *state_->schema;
  absl::flat_hash_map<EntityId, std::vector<const Excision*>> by_entity;
  absl::flat_hash_map<EntityId, const Excision*> by_attribute;
  for (const Excision& x : excisions_) {
    if (x.attribute) {
      by_attribute[x.target] = &x;
    } else {
      by_entity[x.target].push_back(&x);
    }
  }
  auto matches = [&](const Datom& d, EntityId asserted) {
    auto before_ok = [&](const Excision& x) {
      return x.before == 0 || asserted < x.before;
    };
    if (auto a = by_attribute.find(d.a);
        a != by_attribute.end() && before_ok(*a->second)) {
      return true;
    }
    auto e = by_entity.find(d.e);
    if (e == by_entity.end()) return false;
    for (const Excision* x : e->second) {
      if (!before_ok(*x)) continue;
      if (x->attrs.empty() ||
          std::find(x->attrs.begin(), x->attrs.end(), d.a) != x->attrs.end()) {
        return true;
      }
    }
    return false;
  };

  // The log holds every datom in the order it happened: an assertion opens
  // an interval of a datom, its retraction closes it. An interval is
  // excised whole (its assertion and its retraction) when its assertion
  // is in scope.
  absl::flat_hash_map<std::string, EntityId> open;  // EAVT key -> asserted
  std::unique_ptr<rocksdb::Iterator> it(
      core.db->NewIterator(TotalOrderReadOptions(), core.cf(Cf::kLog)));
  std::vector<Datom> datoms;
  std::string key;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view k(it->key().data(), it->key().size());
    if (k.size() != 8) {
      return absl::DataLossError(
          StrCat("log key of ", k.size(), " bytes, want 8"));
    }
    const EntityId tx = static_cast<EntityId>(DecodeFixed64BE(k));
    LogEntryHeader header;
    datoms.clear();
    absl::Status s = DecodeLogEntry(
        tx, std::string_view(it->value().data(), it->value().size()), &header,
        &datoms);
    if (!s.ok()) return s;
    std::vector<Datom> kept;
    bool changed = false;
    for (Datom& d : datoms) {
      if (!by_entity.contains(d.e) && !by_attribute.contains(d.a)) {
        kept.push_back(std::move(d));
        continue;
      }
      key.clear();
      EavtKey::Encode(d.e, d.a, d.v, &key);
      bool excised = false;
      if (d.added) {
        if (matches(d, tx)) {
          open[key] = tx;
          excised = true;
        }
      } else if (auto o = open.find(key); o != open.end()) {
        ExcisedDatom x;
        x.datom = d;
        x.datom.tx = o->second;
        x.datom.added = true;
        x.retracted = tx;
        x.attr = schema.FindAttribute(d.a);
        excised_.push_back(std::move(x));
        open.erase(o);
        excised = true;
      }
      if (excised) {
        changed = true;
      } else {
        kept.push_back(std::move(d));
      }
    }
    if (changed) {
      std::string entry;
      if (header.has_counters) {
        EncodeLogEntry(header, kept, &entry);
      } else {
        EncodeLogEntryV1(kept, &entry);
      }
      excised_log_.emplace_back(tx, std::move(entry));
    }
  }
  if (!it->status().ok()) return RocksError(it->status(), "reading the log");
  for (auto& [k, asserted] : open) {
    ExcisedDatom x;
    absl::Status s = DecodeKey(IndexOrder::kEavt, k, &x.datom);
    if (!s.ok()) return s;
    x.datom.tx = asserted;
    x.datom.added = true;
    x.attr = schema.FindAttribute(x.datom.a);
    excised_.push_back(std::move(x));
  }
  for (const ExcisedDatom& x : excised_) {
    if (x.attr == nullptr) {
      return absl::DataLossError(StrCat("excised datom ", x.datom.DebugString(),
                                        " names an unknown attribute"));
    }
  }
  // Deterministic order (a replica writes the same batch).
  std::sort(excised_.begin(), excised_.end(),
            [](const ExcisedDatom& l, const ExcisedDatom& r) {
              if (l.datom.e != r.datom.e) return l.datom.e < r.datom.e;
              if (l.datom.a != r.datom.a) return l.datom.a < r.datom.a;
              if (l.datom.tx != r.datom.tx) return l.datom.tx < r.datom.tx;
              return l.datom.v < r.datom.v;
            });
  return absl::OkStatus();
}

absl::Status TxApplier::RepostFulltext(const StoreCore& core) {
  // Postings name (attribute, term, entity): drop those of the excised
  // values, then post again the values of the same entity and attribute
  // that stay (a word they share keeps its posting).
  absl::flat_hash_set<std::pair<EntityId, EntityId>> touched;
  absl::flat_hash_set<std::string> gone;  // EAVT key | asserted tx
  std::string key;
  for (const ExcisedDatom& x : excised_) {
    if (!x.attr->fulltext) continue;
    touched.insert({x.datom.e, x.datom.a});
    key.clear();
    EavtKey::Encode(x.datom.e, x.datom.a, x.datom.v, &key);
    PutFixed64BE(static_cast<uint64_t>(x.datom.tx), &key);
    gone.insert(key);
    absl::Status s = DeletePostings(x.datom.a, x.datom.e, x.datom.v, group_);
    if (!s.ok()) return s;
  }
  std::vector<std::pair<EntityId, EntityId>> sorted(touched.begin(),
                                                    touched.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [e, a] : sorted) {
    std::vector<Value> kept;
    std::string prefix;
    EavtKey::EncodePrefix(e, a, &prefix);
    absl::Status s =
        group_->Scan(IndexOrder::kEavt, prefix, [&](const Datom& d) {
          key.clear();
          EavtKey::Encode(d.e, d.a, d.v, &key);
          PutFixed64BE(static_cast<uint64_t>(d.tx), &key);
          if (!gone.contains(key)) kept.push_back(d.v);
          return true;
        });
    if (!s.ok()) return s;
    std::unique_ptr<rocksdb::Iterator> it(
        core.db->NewIterator(rocksdb::ReadOptions(), core.cf(Cf::kEavtHist)));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
         it->Next()) {
      const std::string_view k(it->key().data(), it->key().size());
      if (k.size() < 8 || gone.contains(std::string(k))) continue;
      Datom d;
      s = DecodeKey(IndexOrder::kEavt, k.substr(0, k.size() - 8), &d);
      if (!s.ok()) return s;
      kept.push_back(std::move(d.v));
    }
    if (!it->status().ok()) return RocksError(it->status(), "reading history");
    for (const Value& v : kept) {
      s = PutPostings(a, e, v, group_);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status TxApplier::WriteExcisions() {
  if (excisions_.empty()) return absl::OkStatus();
  const StoreCore* core = group_->ExcisionStore();
  absl::Status s = RepostFulltext(*core);
  if (!s.ok()) return s;
  std::string key;
  for (const ExcisedDatom& x : excised_) {
    const int orders = x.attr->is_ref() ? 4 : 3;
    bool current = false;
    if (x.retracted == 0) {
      key.clear();
      EavtKey::Encode(x.datom.e, x.datom.a, x.datom.v, &key);
      auto held = group_->Get(IndexOrder::kEavt, key);
      if (!held.ok()) return held.status();
      current = held->has_value() && **held == x.datom.tx;
    }
    for (int i = 0; i < orders; ++i) {
      const IndexOrder order = static_cast<IndexOrder>(i);
      key.clear();
      EncodeKey(order, x.datom, &key);
      if (current) {
        group_->DeleteCurrent(order, key);
      } else {
        // A retracted interval; none is there for a :db/noHistory value
        // or one retention dropped, and deleting nothing is harmless.
        PutFixed64BE(static_cast<uint64_t>(x.datom.tx), &key);
        group_->DeleteRaw(HistoryCf(order), key);
      }
    }
  }
  for (const auto& [tx, entry] : excised_log_) {
    group_->PutRaw(Cf::kLog, Fixed64BE(static_cast<uint64_t>(tx)), entry);
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage::internal
