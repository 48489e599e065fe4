#ifndef MENTAT_STORAGE_TEST_SUPPORT_H_
#define MENTAT_STORAGE_TEST_SUPPORT_H_

// Helpers for storage tests: temporary stores and terse tx ops.

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "mentat/storage/entity_ids.h"
#include "mentat/storage/keys.h"
#include "mentat/storage/store.h"
#include "mentat/storage/tx_op.h"

namespace mentat::storage::testing {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("mentat-test-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++)))
                .string();
    std::filesystem::remove_all(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline EntityRef E(EntityId id) { return EntityRef::Id(id); }
inline EntityRef E(const char* tempid) { return EntityRef::TempId(tempid); }
inline EntityRef Kw(const char* ident) { return EntityRef::Ident(ident); }

inline TxOp Add(EntityRef e, const char* attr, Value v) {
  TxOp op;
  op.kind = TxOp::Kind::kAdd;
  op.e = std::move(e);
  op.a = EntityRef::Ident(attr);
  op.v = TxValue::Scalar(std::move(v));
  return op;
}
inline TxOp AddRef(EntityRef e, const char* attr, EntityRef target) {
  TxOp op;
  op.kind = TxOp::Kind::kAdd;
  op.e = std::move(e);
  op.a = EntityRef::Ident(attr);
  op.v = TxValue::Entity(std::move(target));
  return op;
}
inline TxOp Retract(EntityRef e, const char* attr, Value v) {
  TxOp op = Add(std::move(e), attr, std::move(v));
  op.kind = TxOp::Kind::kRetract;
  return op;
}
inline TxOp RetractEntity(EntityRef e) {
  TxOp op;
  op.kind = TxOp::Kind::kRetractEntity;
  op.e = std::move(e);
  return op;
}

// Ops that install an attribute.
inline std::vector<TxOp> Attr(const char* ident, const char* type,
                              bool many = false, const char* unique = nullptr,
                              bool component = false) {
  std::string tempid = std::string("attr-") + ident;
  std::vector<TxOp> ops;
  ops.push_back(Add(E(tempid.c_str()), "db/ident", Value::Keyword(ident)));
  ops.push_back(
      AddRef(E(tempid.c_str()), "db/valueType", EntityRef::Ident(type)));
  ops.push_back(AddRef(
      E(tempid.c_str()), "db/cardinality",
      EntityRef::Ident(many ? "db.cardinality/many" : "db.cardinality/one")));
  if (unique != nullptr) {
    ops.push_back(
        AddRef(E(tempid.c_str()), "db/unique", EntityRef::Ident(unique)));
  }
  if (component) {
    ops.push_back(
        Add(E(tempid.c_str()), "db/isComponent", Value::Boolean(true)));
  }
  return ops;
}

inline TxRequest Tx(std::vector<TxOp> ops) { return TxRequest{std::move(ops)}; }

// Transacts `ops` and returns the report; the test fails here, with the
// status, if the transaction does.
inline TxReport MustTransact(Store& store, std::vector<TxOp> ops) {
  auto r = store.Transact(Tx(std::move(ops))).get();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

// The ops of several lists, in order (a schema's ops, then data's).
inline std::vector<TxOp> Concat(
    std::initializer_list<std::vector<TxOp>> parts) {
  std::vector<TxOp> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Current values of (e, a) at `view`.
inline std::vector<Value> ValuesOf(const DbView& view, EntityId e,
                                   const char* attr) {
  std::vector<Value> out;
  const Attribute* a = view.schema().FindAttribute(attr);
  if (a == nullptr) return out;
  std::string prefix;
  EavtKey::EncodePrefix(e, a->id, &prefix);
  auto datoms = view.Datoms(IndexOrder::kEavt, prefix);
  if (!datoms.ok()) return out;
  for (const Datom& d : *datoms) out.push_back(d.v);
  return out;
}

// An import source over transactions held in memory; keeps each
// transaction's report.
class VectorImportSource : public ImportSource {
 public:
  explicit VectorImportSource(std::vector<TxRequest> txs)
      : txs_(std::move(txs)) {}
  [[nodiscard]] absl::StatusOr<bool> Next(TxRequest* request) override {
    if (next_ == txs_.size()) return false;
    *request = txs_[next_++];
    return true;
  }
  void OnReport(const TxReport& report) override { reports.push_back(report); }
  std::vector<TxReport> reports;

 private:
  std::vector<TxRequest> txs_;
  size_t next_ = 0;
};

}  // namespace mentat::storage::testing

#endif  // MENTAT_STORAGE_TEST_SUPPORT_H_
