// mentat-demo: what `make run` starts until mentatd lands. Opens (or
// creates) a store in --data-dir, loads the benchmark's xs dataset into it
// the first time, and reads some of it back: a lookup by unique email, an
// entity as of an earlier transaction, and the statistics.

#include <cstdio>
#include <cstring>
#include <string>

#include "mentat/storage/entity_ids.h"
#include "mentat/storage/store.h"
#include "workload.h"

using mentat::storage::Basis;
using mentat::storage::EavtKey;
using mentat::storage::IndexOrder;
using mentat::storage::Store;
using mentat::storage::TxRequest;
using mentat::storage::Value;

int main(int argc, char** argv) {
  std::string dir = "./data";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: mentat-demo [--data-dir DIR]\n");
      return 2;
    }
  }
  auto opened = Store::Open(dir);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  auto& store = *opened;
  std::printf("mentat-demo: store in %s, basis tx %lld\n", dir.c_str(),
              static_cast<long long>(store->Latest()->basis_tx()));
  mentat::bench::WorkloadScale xs;
  mentat::bench::ScaleByName("xs", &xs);
  mentat::storage::EntityId before_change = 0, first_issue = 0;
  if (store->Latest()->schema().FindAttribute("issue/state") == nullptr) {
    std::printf("loading the xs dataset (%lld issues)...\n",
                static_cast<long long>(xs.issues));
    auto check = [](const absl::StatusOr<mentat::storage::TxReport>& r) {
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
        std::exit(1);
      }
    };
    check(store->Transact(TxRequest{mentat::bench::SchemaOps()}).get());
    check(
        store->Transact(TxRequest{mentat::bench::UserOps(0, xs.users)}).get());
    check(store->Transact(TxRequest{mentat::bench::LabelOps(0, xs.labels)})
              .get());
    for (int64_t b = 0; b < xs.issues; b += 500) {
      auto r = store
                   ->Transact(TxRequest{mentat::bench::IssueOps(
                       xs, b, std::min(b + 500, xs.issues))})
                   .get();
      check(r);
      if (b == 0) first_issue = r->tempids.at("i0");
    }
    before_change = store->Latest()->basis_tx();
    check(store
              ->Transact(
                  TxRequest{{mentat::bench::StateChangeOp(first_issue, 2)}})
              .get());
  }
  auto db = store->Latest();
  auto view = db->View(Basis::Current());
  const auto* email = db->schema().FindAttribute("user/email");
  auto user = view.LookupUnique(email->id, Value::String("user7@example.com"));
  if (user.ok() && user->has_value()) {
    std::string prefix;
    EavtKey::EncodePrefix(**user, &prefix);
    std::printf("user7@example.com is entity %lld:\n",
                static_cast<long long>(**user));
    auto datoms = view.Datoms(IndexOrder::kEavt, prefix);
    for (const auto& d :
         datoms.value_or(std::vector<mentat::storage::Datom>{})) {
      std::printf("  %s\n", d.DebugString().c_str());
    }
  }
  if (first_issue != 0) {
    std::string prefix;
    EavtKey::EncodePrefix(first_issue, &prefix);
    std::printf("issue %lld now:\n", static_cast<long long>(first_issue));
    auto now = view.Datoms(IndexOrder::kEavt, prefix);
    for (const auto& d : now.value_or(std::vector<mentat::storage::Datom>{})) {
      std::printf("  %s\n", d.DebugString().c_str());
    }
    std::printf("issue %lld as of tx %lld:\n",
                static_cast<long long>(first_issue),
                static_cast<long long>(before_change));
    auto then =
        db->View(Basis::AsOf(before_change)).Datoms(IndexOrder::kEavt, prefix);
    for (const auto& d : then.value_or(std::vector<mentat::storage::Datom>{})) {
      std::printf("  %s\n", d.DebugString().c_str());
    }
  }
  std::printf("statistics:\n");
  for (const auto& [a, held] : db->stats().all()) {
    const auto& st = *held;
    const auto* attr = db->schema().FindAttribute(a);
    if (attr == nullptr || mentat::storage::PartitionIndex(a) != 0 || a < 1000)
      continue;
    std::printf("  :%-18s %8lld datoms %8lld distinct values\n",
                attr->ident.c_str(), static_cast<long long>(st.datoms),
                static_cast<long long>(st.distinct_values));
  }
  std::printf("the gRPC server (mentatd) replaces this demo; see README.md\n");
  return 0;
}
