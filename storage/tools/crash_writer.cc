// Child process of the crash test (store_crash_test.cc): commits small
// transactions as fast as it can and prints each acknowledged sequence
// number to stdout, one per line, flushing after each. The parent kills it
// with SIGKILL at a random moment and checks the store.
//
// Usage: crash_writer DIR START CONCURRENCY
// Transaction n asserts two datoms on a new entity: :crash/seq n and
// :crash/twin n, so a partial transaction would show as a seq without
// its twin.

#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <vector>

#include "mentat/storage/store.h"

using mentat::storage::EntityRef;
using mentat::storage::Store;
using mentat::storage::TxOp;
using mentat::storage::TxRequest;
using mentat::storage::TxValue;
using mentat::storage::Value;

namespace {

TxOp Add(const std::string& tempid, const char* attr, Value v) {
  TxOp op;
  op.kind = TxOp::Kind::kAdd;
  op.e = EntityRef::TempId(tempid);
  op.a = EntityRef::Ident(attr);
  op.v = TxValue::Scalar(std::move(v));
  return op;
}

TxOp AddRef(const std::string& tempid, const char* attr, const char* ident) {
  TxOp op;
  op.kind = TxOp::Kind::kAdd;
  op.e = EntityRef::TempId(tempid);
  op.a = EntityRef::Ident(attr);
  op.v = TxValue::Entity(EntityRef::Ident(ident));
  return op;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: crash_writer DIR START CONCURRENCY\n");
    return 2;
  }
  auto store = Store::Open(argv[1]);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  int64_t next = std::atoll(argv[2]);
  const int concurrency = std::atoi(argv[3]);
  if (next == 0) {
    TxRequest schema;
    for (const char* attr : {"crash/seq", "crash/twin"}) {
      const std::string t = attr;
      schema.ops.push_back(Add(t, "db/ident", Value::Keyword(attr)));
      schema.ops.push_back(AddRef(t, "db/valueType", "db.type/long"));
      schema.ops.push_back(AddRef(t, "db/cardinality", "db.cardinality/one"));
    }
    auto r = (*store)->Transact(std::move(schema)).get();
    if (!r.ok()) {
      std::fprintf(stderr, "schema: %s\n", r.status().ToString().c_str());
      return 1;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    next = 1;
  } else {
    std::printf("ready\n");
    std::fflush(stdout);
  }
  for (;;) {
    std::vector<std::pair<
        int64_t, std::future<absl::StatusOr<mentat::storage::TxReport>>>>
        inflight;
    for (int i = 0; i < concurrency; ++i, ++next) {
      TxRequest tx;
      const std::string t = "e" + std::to_string(next);
      tx.ops.push_back(Add(t, "crash/seq", Value::Long(next)));
      tx.ops.push_back(Add(t, "crash/twin", Value::Long(next)));
      inflight.emplace_back(next, (*store)->Transact(std::move(tx)));
    }
    for (auto& [n, f] : inflight) {
      auto r = f.get();
      if (!r.ok()) {
        std::fprintf(stderr, "tx %lld: %s\n", static_cast<long long>(n),
                     r.status().ToString().c_str());
        return 1;
      }
      std::printf("%lld\n", static_cast<long long>(n));
    }
    std::fflush(stdout);
  }
}
