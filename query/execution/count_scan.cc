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
  // An AVET key is a(8) v e(8): the value's bytes sit between the two
  // ids, and the value's encoding is self-delimiting, so a(8) v is the
  // prefix of exactly the datoms of one value. Each run of a value is
  // skipped in lots (a column counts a lot by one search; the lots keep
  // the deadline and the scan limit checked).
  constexpr uint64_t kLot = 4096;
  int64_t datoms = 0, runs = 0;
  cursor->Seek(prefix);
  while (cursor->Valid() && !ctx->stopped()) {
    const std::string_view key = cursor->key();
    if (key.size() < prefix.size() + 8) {
      return absl::DataLossError("malformed key in AVET");
    }
    // The run's prefix, copied: skipping moves the cursor off the key.
    const std::string run(key.substr(0, key.size() - 8));
    int64_t in_run = 0;
    for (;;) {
      const uint64_t n = cursor->SkipPrefix(run, kLot);
      in_run += static_cast<int64_t>(n);
      absl::Status s = ctx->Tick(n);
      if (!s.ok()) return s;
      if (n < kLot || ctx->stopped()) break;
    }
    if (!cursor->status().ok()) return cursor->status();
    if (in_run == 0) {
      // A cursor that did not move would count this run for ever.
      return absl::InternalError("AVET count: the cursor did not move");
    }
    datoms += in_run;
    ++runs;
    if (sc.kind == StatsShortcut::Kind::kCountByValue) {
      std::string_view in = std::string_view(run).substr(prefix.size());
      absl::Status s = storage::DecodeValue(&in, &values[value_col]);
      if (!s.ok()) return s;
      aggs.resize(plan.find.size());  // the emitter may take it whole
      aggs[count_col] = edn::EdnValue::Int(in_run);
      s = emitter->Add(values.data(), &aggs);
      if (!s.ok()) return s;
    }
  }
  if (!cursor->status().ok()) return cursor->status();
  if (sc.kind != StatsShortcut::Kind::kCountByValue) {
    const int64_t n = sc.kind == StatsShortcut::Kind::kCountAll ? datoms : runs;
    // No rows, as a count over nothing gives (and as the statistics do).
    if (n > 0) {
      aggs[0] = edn::EdnValue::Int(n);
      absl::Status s = emitter->Add(values.data(), &aggs);
      if (!s.ok()) return s;
    }
  }
  return true;
}

}  // namespace mentat::query::execution
