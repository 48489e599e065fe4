// Fuzz target: the whole path from text to rows on a real store. The input
// is tx-data, a line "====", a query, and optionally another "====" line and
// the query's inputs (an EDN vector of the :in values after $):
//
//   [{:db/id "x" :user/name "X"}]
//   ====
//   [:find ?n :where [_ :user/name ?n]]
//
// The tx-data is transacted on the fuzz store (fuzz_store.h; reset every
// few hundred committed transactions), then the query runs on the result
// with a deadline and a memory budget. Any status is fine but a server
// fault (Internal, DataLoss, Unknown): those and crashes are findings.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "fuzz_store.h"
#include "mentat/edn/edn_reader.h"

namespace {

constexpr std::string_view kSeparator = "\n====\n";

void Check(const absl::Status& status, const char* what) {
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnknown:
      std::fprintf(stderr, "transact_query_fuzz: %s: server fault %s\n", what,
                   status.ToString().c_str());
      std::abort();
    default:
      return;
  }
}

std::string_view Cut(std::string_view* text) {
  size_t split = text->find(kSeparator);
  std::string_view head = text->substr(0, split);
  *text = split == std::string_view::npos
              ? std::string_view()
              : text->substr(split + kSeparator.size());
  return head;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::string_view tx_text = Cut(&rest);
  std::string_view query_text = Cut(&rest);
  std::string_view inputs_text = rest;

  mentat::fuzz::FuzzStore& fuzz = mentat::fuzz::FuzzStore::Get();
  static int committed = 0;
  if (committed >= 256) {
    fuzz.Reset();
    committed = 0;
  }
  auto request = mentat::query::ParseTxData(tx_text);
  if (request.ok()) {
    auto report = fuzz.store().Transact(*std::move(request)).get();
    Check(report.status(), "transact");
    if (report.ok()) ++committed;
  }
  if (query_text.empty()) return 0;

  std::vector<mentat::edn::EdnValue> inputs;
  if (!inputs_text.empty()) {
    auto parsed = mentat::edn::ParseEdn(inputs_text);
    if (!parsed.ok() || !parsed->is_vector()) return 0;
    inputs = parsed->items();
  }
  mentat::query::QueryOptions options;
  options.deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(2000);
  options.memory_budget_bytes = size_t{256} << 20;
  std::shared_ptr<const mentat::storage::Db> db = fuzz.store().Latest();
  for (mentat::storage::Basis basis :
       {mentat::storage::Basis::Current(), mentat::storage::Basis::History()}) {
    auto result =
        fuzz.engine().Query(query_text, db->View(basis), inputs, options);
    Check(result.status(), "query");
    if (result.ok()) (void)result->ToEdn();
  }
  return 0;
}
