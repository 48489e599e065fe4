// Postings of :db/fulltext attributes: writing them with the datoms,
// reading them for a query, and building them for a store that predates
// the family.

#include "internal/fulltext_index.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "internal/coding.h"
#include "internal/speculative_layer.h"
#include "internal/tx_batch.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/db.h"
#include "mentat/storage/keys.h"
#include "rocksdb/write_batch.h"

namespace mentat::storage {
namespace internal {
namespace {

[[nodiscard]] absl::Status FromRocks(const rocksdb::Status& s,
                                     std::string_view what) {
  if (s.IsCorruption()) {
    return absl::DataLossError(StrCat(what, ": ", s.ToString()));
  }
  return absl::UnavailableError(StrCat(what, ": ", s.ToString()));
}

}  // namespace

void EncodePostingPrefix(EntityId attribute, PostingKind kind,
                         std::string_view term, bool whole, std::string* out) {
  PutFixed64BE(static_cast<uint64_t>(attribute), out);
  out->push_back(static_cast<char>(kind));
  out->append(term);
  if (whole) out->push_back('\0');
}

namespace {

// Calls put(key) once per distinct posting of `v`.
template <typename Put>
absl::Status ForEachPosting(EntityId attribute, EntityId e, const Value& v,
                            Put put) {
  if (v.type() != ValueType::kString) return absl::OkStatus();
  std::vector<FulltextToken> tokens;
  absl::Status s = TokenizeFulltext(v.text(), &tokens);
  if (!s.ok()) return s;
  absl::flat_hash_set<std::string> seen;
  std::string key;
  auto emit = [&](PostingKind kind, const std::string& term) {
    key.clear();
    EncodePostingPrefix(attribute, kind, term, /*whole=*/true, &key);
    PutFixed64BE(static_cast<uint64_t>(e), &key);
    if (seen.insert(key).second) put(key);
  };
  for (const FulltextToken& t : tokens) {
    emit(PostingKind::kStem, t.stem);
    if (t.word != t.stem) emit(PostingKind::kWord, t.word);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PutPostings(EntityId attribute, EntityId e, const Value& v,
                         TxBatch* batch) {
  return ForEachPosting(attribute, e, v, [&](std::string_view key) {
    batch->PutRaw(Cf::kFulltext, key, std::string_view());
  });
}

absl::Status DeletePostings(EntityId attribute, EntityId e, const Value& v,
                            TxBatch* batch) {
  return ForEachPosting(attribute, e, v, [&](std::string_view key) {
    batch->DeleteRaw(Cf::kFulltext, key);
  });
}

absl::Status BuildFulltextIndex(StoreCore* core, const Schema& schema) {
  std::string marker;
  rocksdb::Status rs = core->db->Get(
      rocksdb::ReadOptions(), core->cf(Cf::kMeta), kMetaFulltextKey, &marker);
  if (rs.ok()) return absl::OkStatus();
  if (!rs.IsNotFound()) return FromRocks(rs, "reading the fulltext marker");
  rocksdb::WriteBatch batch;
  rocksdb::WriteOptions wo;
  wo.sync = true;
  absl::Status status;
  auto put = [&](std::string_view key) {
    batch.Put(core->cf(Cf::kFulltext), key, rocksdb::Slice())
        .PermitUncheckedError();
  };
  for (const auto& [id, attr] : schema.attributes()) {
    if (!attr.fulltext) continue;
    for (Cf cf : {Cf::kAevt, Cf::kAevtHist}) {
      std::string prefix;
      AevtKey::EncodePrefix(id, &prefix);
      std::unique_ptr<rocksdb::Iterator> it(
          core->db->NewIterator(TotalOrderReadOptions(), core->cf(cf)));
      Datom d;
      for (it->Seek(prefix); it->Valid(); it->Next()) {
        std::string_view key(it->key().data(), it->key().size());
        if (!key.starts_with(prefix)) break;
        // History keys end in the asserting tx.
        if (cf == Cf::kAevtHist) {
          if (key.size() < 8) return absl::DataLossError("short history key");
          key.remove_suffix(8);
        }
        absl::Status s = DecodeKey(IndexOrder::kAevt, key, &d);
        if (!s.ok()) return s;
        s = ForEachPosting(id, d.e, d.v, put);
        if (!s.ok()) return s;
        if (batch.GetDataSize() > (size_t{8} << 20)) {
          rs = core->db->Write(wo, &batch);
          if (!rs.ok()) return FromRocks(rs, "building the fulltext index");
          batch.Clear();
        }
      }
      if (!it->status().ok()) {
        return FromRocks(it->status(), "building the fulltext index");
      }
    }
  }
  // The marker last: a crash before it builds again at the next opening
  // (postings are idempotent).
  batch.Put(core->cf(Cf::kMeta), kMetaFulltextKey, "1").PermitUncheckedError();
  rs = core->db->Write(wo, &batch);
  if (!rs.ok()) return FromRocks(rs, "building the fulltext index");
  return status;
}

}  // namespace internal

absl::Status ScanFulltextPostings(const Db& db, EntityId attribute,
                                  PostingKind kind, std::string_view term,
                                  bool prefix,
                                  const std::function<bool(EntityId)>& fn) {
  const internal::StoreCore& core = db.core();
  std::string start;
  internal::EncodePostingPrefix(attribute, kind, term, !prefix, &start);
  rocksdb::ReadOptions ro = internal::TotalOrderReadOptions();
  ro.snapshot = db.snapshot();
  std::unique_ptr<rocksdb::Iterator> it(
      core.db->NewIterator(ro, core.cf(internal::Cf::kFulltext)));
  for (it->Seek(start); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (!key.starts_with(start)) break;
    if (key.size() < start.size() + 8) {
      return absl::DataLossError(
          StrCat("malformed fulltext posting key of ", key.size(), " bytes"));
    }
    const EntityId e = static_cast<EntityId>(
        internal::DecodeFixed64BE(key.substr(key.size() - 8)));
    if (!fn(e)) break;
  }
  if (!it->status().ok()) {
    return internal::FromRocks(it->status(), "reading the fulltext postings");
  }
  // A speculative value's transactions kept the postings they would have
  // written (candidates only, like every posting: the datoms decide).
  for (const Db* d = &db; d->speculative(); d = d->parent().get()) {
    const auto& postings = d->layer()->postings;
    for (auto p = postings.lower_bound(start);
         p != postings.end() && std::string_view(*p).starts_with(start); ++p) {
      const EntityId e = static_cast<EntityId>(internal::DecodeFixed64BE(
          std::string_view(*p).substr(p->size() - 8)));
      if (!fn(e)) return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace mentat::storage
