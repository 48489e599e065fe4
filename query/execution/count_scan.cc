#include "execution/count_scan.h"

#include <string>
#include <vector>

#include "mentat/storage/keys.h"
#include "mentat/storage/value_codec.h"

namespace mentat::query::execution {

using planner::StatsShortcut;
using storage::Value;

absl::StatusOr<bool> CountByScan(const planner::QueryPlan& plan,
                                 ExecContext* ctx, ResultEmitter* emitter) {
  const StatsShortcut& sc = plan.shortcut;
  if (sc.kind == StatsShortcut::Kind::kNone || ctx->history()) return false;
  std::unique_ptr<storage::DatomCursor> cursor =
      ctx->view().NewCursor(storage::IndexOrder::kAvet);
  cursor->SetKeysOnly(true);
  std::string prefix;
  storage::AvetKey::EncodePrefix(sc.attr, &prefix);
  std::vector<Value> values(plan.find.size());
  std::vector<edn::EdnValue> aggs(plan.find.size());
  const size_t count_col = sc.count_first ? 0 : 1;
  const size_t value_col = 1 - count_col;
  // An AVET key is a(8) v e(8): the value's bytes sit between the two ids.
  std::string run;  // the value bytes of the current run
  int64_t in_run = 0, datoms = 0, runs = 0;
  auto flush = [&]() -> absl::Status {
    if (in_run == 0 || sc.kind != StatsShortcut::Kind::kCountByValue) {
      return absl::OkStatus();
    }
    std::string_view in = run;
    absl::Status s = storage::DecodeValue(&in, &values[value_col]);
    if (!s.ok()) return s;
    aggs.resize(plan.find.size());  // the emitter may take it whole
    aggs[count_col] = edn::EdnValue::Int(in_run);
    return emitter->Add(values.data(), &aggs);
  };
  for (cursor->Seek(prefix); cursor->Valid() && !ctx->stopped();
       cursor->Next()) {
    absl::Status s = ctx->Tick();
    if (!s.ok()) return s;
    const std::string_view key = cursor->key();
    if (key.size() < prefix.size() + 8) {
      return absl::DataLossError("malformed key in AVET");
    }
    const std::string_view v =
        key.substr(prefix.size(), key.size() - prefix.size() - 8);
    ++datoms;
    if (in_run > 0 && v == run) {
      ++in_run;
      continue;
    }
    s = flush();
    if (!s.ok()) return s;
    run.assign(v);
    in_run = 1;
    ++runs;
  }
  if (!cursor->status().ok()) return cursor->status();
  absl::Status s = flush();
  if (!s.ok()) return s;
  if (sc.kind != StatsShortcut::Kind::kCountByValue) {
    const int64_t n = sc.kind == StatsShortcut::Kind::kCountAll ? datoms : runs;
    // No rows, as a count over nothing gives (and as the statistics do).
    if (n > 0) {
      aggs[0] = edn::EdnValue::Int(n);
      s = emitter->Add(values.data(), &aggs);
      if (!s.ok()) return s;
    }
  }
  return true;
}

}  // namespace mentat::query::execution
