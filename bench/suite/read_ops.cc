// mentat-bench run: the read operations the scenarios time, one call each,
// each answer checked against the truth (an empty string when right, what
// was wrong otherwise). scenario_runner.cc runs them.

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mentat/base/str_cat.h"
#include "suite/runner.h"
#include "workload_queries.h"

namespace mentat::bench {
namespace {

// q4's verdict on its row count (its scenario counts each batch's rows,
// paired's check each row).
std::string Q4Verdict(int64_t rows, int64_t want) {
  if (rows == want) return "";
  return StrCat("q4: ", rows, " rows, expected ", want);
}

}  // namespace

std::string Runner::Ping() { return Pong(client_.Ping()); }

std::string Runner::Pong(const absl::StatusOr<v1::PingResponse>& pong) {
  if (!pong.ok()) return pong.status().ToString();
  if (pong->server_version().rfind("mentatd ", 0) != 0) {
    return StrCat("ping: server version \"", pong->server_version(), "\"");
  }
  return "";
}

std::shared_ptr<ReadCheck> Runner::Q1Check(std::mt19937_64& rng) {
  const int64_t k = static_cast<int64_t>(rng() % meta_.scale.users);
  auto c = std::make_shared<ReadCheck>();
  c->query = kQ1;
  c->inputs = {Quote(UserEmail(k))};
  struct Seen {
    int64_t rows = 0;
    bool right_name = false;
  };
  auto seen = std::make_shared<Seen>();
  c->on_row = [seen, k](const client::WireRow& r) {
    ++seen->rows;
    seen->right_name =
        r.size() == 2 && IsNumbered(r[1].string_value(), "User ", k);
  };
  c->finish = [seen, k]() -> std::string {
    if (seen->rows != 1)
      return StrCat("q1 user ", k, ": ", seen->rows, " rows");
    if (!seen->right_name) return StrCat("q1 user ", k, ": wrong name");
    return "";
  };
  return c;
}

std::shared_ptr<ReadCheck> Runner::Q2Check(std::mt19937_64& rng, bool as_of) {
  const int64_t u = probes_[rng() % probes_.size()];
  auto c = std::make_shared<ReadCheck>();
  c->query = kQ2;
  c->inputs = {Quote(UserEmail(u))};
  if (as_of) {
    c->basis.emplace();
    c->basis->set_kind(v1::Basis::AS_OF);
    c->basis->set_tx(load_.t_mid);
  }
  auto it = truth_.assigned.find(u);
  const std::vector<std::array<int64_t, 3>>* want =
      it == truth_.assigned.end() ? nullptr : &it->second;
  // (issue index, state index) per row; a row that is not of that shape
  // gets -1s, which the truth never holds.
  auto got = std::make_shared<std::vector<std::pair<int64_t, int>>>();
  got->reserve(want == nullptr ? 0 : want->size());
  c->on_row = [got](const client::WireRow& r) {
    if (r.size() != 3) {
      got->emplace_back(-1, -1);
      return;
    }
    got->emplace_back(IssueIndex(r[1].string_value()),
                      StateIndex(r[2].keyword()));
  };
  c->finish = [got, want, u, as_of]() -> std::string {
    // The truth lists each issue once, in index order; a repeated row is
    // wrong too (a :find answer is a set).
    const size_t want_size = want == nullptr ? 0 : want->size();
    std::sort(got->begin(), got->end());
    bool same = got->size() == want_size;
    for (size_t i = 0; same && i < want_size; ++i) {
      const auto& t = (*want)[i];
      same =
          (*got)[i].first == t[0] && (*got)[i].second == (as_of ? t[1] : t[2]);
    }
    if (same) return "";
    return StrCat(
        as_of ? "as_of " : "", "q2 user ", u, ": ", got->size(),
        " (issue, state) rows, expected ", want_size,
        got->size() == want_size ? " (different issues or states)" : "");
  };
  return c;
}

std::string Runner::RunCheck(ReadCheck& c) {
  CallSpan::Start();
  absl::Status s = Query(c.query, c.inputs, c.on_row,
                         c.basis.has_value() ? &*c.basis : nullptr);
  CallSpan::Stop();
  if (!s.ok()) return s.ToString();
  return c.finish();
}

void Runner::RunCheckAsync(std::shared_ptr<ReadCheck> c, Answered answered) {
  client_.QueryFirstAsync(
      QueryRequest(c->query, c->inputs,
                   c->basis.has_value() ? &*c->basis : nullptr),
      [c, answered = std::move(answered)](
          absl::StatusOr<const client::QueryBatch*> batch) {
        if (!batch.ok()) return answered(batch.status().ToString());
        if ((*batch)->more()) {
          // Not whole in one reply: the rest would need the stream, which
          // a gRPC thread must not wait for.
          return answered(
              StrCat("\"", c->query, "\": not answered whole by QueryFirst"));
        }
        for (const client::WireRow r : (*batch)->rows()) c->on_row(r);
        answered(c->finish());
      });
}

std::string Runner::Q1(std::mt19937_64& rng) { return RunCheck(*Q1Check(rng)); }

std::string Runner::Q2(std::mt19937_64& rng, bool as_of) {
  return RunCheck(*Q2Check(rng, as_of));
}

std::string Runner::Q3() { return RunCheck(*Q3Check()); }

std::string Runner::Q4() {
  int64_t n = 0;
  absl::Status s = client_.QueryBatches(QueryRequest(kQ4, {"4"}, nullptr),
                                        [&](const client::QueryBatch& batch) {
                                          n += batch.rows_size();
                                          return true;
                                        });
  if (!s.ok()) return s.ToString();
  return Q4Verdict(n, truth_.open_at_least[4]);
}

std::shared_ptr<ReadCheck> Runner::Q3Check() {
  auto c = std::make_shared<ReadCheck>();
  c->query = kQ3;
  auto got = std::make_shared<std::array<int64_t, 5>>();
  c->on_row = [got](const client::WireRow& r) {
    if (r.size() != 2) return;
    const int state = StateIndex(r[0].keyword());
    if (state >= 0) (*got)[state] = r[1].long_value();
  };
  c->finish = [got, want = truth_.states_final]() -> std::string {
    return *got == want ? "" : "q3: per-state counts differ";
  };
  return c;
}

std::shared_ptr<ReadCheck> Runner::Q4Check() {
  auto c = std::make_shared<ReadCheck>();
  c->query = kQ4;
  c->inputs = {"4"};
  auto rows = std::make_shared<int64_t>(0);
  c->on_row = [rows](const client::WireRow&) { ++*rows; };
  c->finish = [rows, want = truth_.open_at_least[4]] {
    return Q4Verdict(*rows, want);
  };
  return c;
}

std::shared_ptr<ReadCheck> Runner::SinceCountCheck() {
  auto c = std::make_shared<ReadCheck>();
  c->query = kSince;
  c->basis.emplace();
  c->basis->set_kind(v1::Basis::SINCE);
  c->basis->set_tx(load_.t_since);
  auto rows = std::make_shared<int64_t>(0);
  c->on_row = [rows](const client::WireRow&) { ++*rows; };
  c->finish = [rows, want = truth_.changed_after_since +
                            pool_.ChangedAfterSince()]() -> std::string {
    if (*rows == want) return "";
    return StrCat("since: ", *rows, " issues, expected ", want);
  };
  return c;
}

std::shared_ptr<ReadCheck> Runner::PullCheck(std::mt19937_64& rng) {
  // Any issue but the mixed writer's, whose state only it knows.
  int64_t idx;
  do {
    idx = static_cast<int64_t>(rng() % meta_.scale.issues);
  } while (pool_.Contains(idx));
  auto c = std::make_shared<ReadCheck>();
  c->query = kPull;
  c->inputs = {std::to_string(load_.issue_ids[static_cast<size_t>(idx)])};
  struct Seen {
    Issue issue;
    int final_state = 0;
    int64_t rows = 0;
    // What the answer held, when it was wrong ("" when right).
    std::string wrong;
  };
  auto seen = std::make_shared<Seen>();
  seen->issue = GenerateIssue(meta_.scale, idx);
  seen->final_state = seen->issue.state;
  int changed;
  if (HistoryChange(meta_.scale, idx, &changed)) seen->final_state = changed;
  c->on_row = [seen](const client::WireRow& r) {
    if (++seen->rows != 1 || r.size() != 1) return;
    std::string_view title, state;
    int64_t priority = 0;
    for (const client::WireValueMap::Entry& e : r[0].map()) {
      const std::string_view k = e.key.keyword();
      if (k == "issue/title") title = e.value.string_value();
      if (k == "issue/state") state = e.value.keyword();
      if (k == "issue/priority") priority = e.value.long_value();
    }
    if (title != seen->issue.title || state != kStates[seen->final_state] ||
        priority != seen->issue.priority) {
      seen->wrong = StrCat("(", title, ", ", state, ", ", priority, ")");
    }
  };
  c->finish = [seen, idx]() -> std::string {
    if (seen->rows != 1) {
      return StrCat("pull issue ", idx, ": ", seen->rows, " results");
    }
    if (!seen->wrong.empty()) {
      return StrCat("pull issue ", idx, ": got ", seen->wrong);
    }
    return "";
  };
  return c;
}

std::string Runner::PullIssue(std::mt19937_64& rng) {
  return RunCheck(*PullCheck(rng));
}

std::string Runner::SinceRows(int64_t* rows, int64_t* basis_tx) {
  v1::Basis basis;
  basis.set_kind(v1::Basis::SINCE);
  basis.set_tx(load_.t_since);
  *rows = 0;
  absl::Status s = Query(
      kSince, {}, [&](const client::WireRow&) { ++*rows; }, &basis, basis_tx);
  if (!s.ok()) return s.ToString();
  return "";
}

const std::vector<int64_t>& Runner::SinceHistoryIds() {
  std::call_once(since_history_once_, [&] {
    // The history's changes in issue order (as the generator writes them);
    // those from position `before` on come after t_since.
    const int64_t before =
        HistoryChangesBeforeSince(CountHistoryChanges(meta_.scale));
    int64_t position = 0;
    for (int64_t idx = 0; idx < meta_.scale.issues; ++idx) {
      int state;
      if (!HistoryChange(meta_.scale, idx, &state)) continue;
      if (position++ >= before) {
        since_history_ids_.push_back(load_.issue_ids[static_cast<size_t>(idx)]);
      }
    }
    std::sort(since_history_ids_.begin(), since_history_ids_.end());
  });
  return since_history_ids_;
}

std::string Runner::Since() {
  v1::Basis basis;
  basis.set_kind(v1::Basis::SINCE);
  basis.set_tx(load_.t_since);
  const std::vector<int64_t>& history = SinceHistoryIds();
  std::vector<int64_t> got;
  got.reserve(history.size());
  absl::Status s = Query(
      kSince, {},
      [&](const client::WireRow& r) {
        if (r.size() != 1) {
          got.push_back(-1);
          return;
        }
        const client::WireValue& v = r[0];
        got.push_back(v.kind_case() == v1::Value::kRef ? v.ref()
                                                       : v.long_value());
      },
      &basis);
  if (!s.ok()) return s.ToString();
  const int64_t want = truth_.changed_after_since + pool_.ChangedAfterSince();
  if (static_cast<int64_t>(got.size()) != want) {
    return StrCat("since: ", got.size(), " issues, expected ", want);
  }
  // The issues themselves: the history's, and the pool members the mixed
  // writer changed (never one of the history's), each once.
  std::vector<int64_t> pool_ids;
  for (const MixedPool::Member& m : pool_.members()) {
    if (m.changed_after_since) pool_ids.push_back(m.id);
  }
  std::sort(pool_ids.begin(), pool_ids.end());
  if (!std::is_sorted(got.begin(), got.end())) {
    std::sort(got.begin(), got.end());
  }
  size_t h = 0, p = 0;
  for (const int64_t id : got) {
    const bool from_history = h < history.size() && (p == pool_ids.size() ||
                                                     history[h] < pool_ids[p]);
    const int64_t expected = from_history          ? history[h++]
                             : p < pool_ids.size() ? pool_ids[p++]
                                                   : -1;
    if (id != expected) {
      return StrCat("since: issue ", id, " where ", expected,
                    " was expected (sorted by entity id)");
    }
  }
  return "";
}

std::string Runner::Fulltext() {
  int64_t rows = 0;
  std::string wrong;  // the first title that should not have been found
  absl::Status s =
      Query(kFulltext, {Quote(kFulltextSearch)}, [&](const client::WireRow& r) {
        ++rows;
        const std::string_view title =
            r.size() == 2 ? r[1].string_value() : std::string_view();
        const int64_t idx = IssueIndex(title);
        if (wrong.empty() && (!std::to_string(idx).starts_with("12") ||
                              !title.ends_with(": crash"))) {
          wrong = title;
        }
      });
  if (!s.ok()) return s.ToString();
  if (rows != fulltext_truth_) {
    return StrCat("fulltext: ", rows, " issues, expected ", fulltext_truth_);
  }
  if (!wrong.empty()) return StrCat("fulltext: found ", wrong);
  return "";
}

std::string Runner::FulltextFew(std::mt19937_64& rng) {
  const int64_t idx = static_cast<int64_t>(rng() % meta_.scale.issues);
  const std::string want = GenerateIssue(meta_.scale, idx).title;
  int64_t rows = 0;
  bool found = false;
  absl::Status s = Query(
      kFulltext, {Quote(std::to_string(idx))}, [&](const client::WireRow& r) {
        ++rows;
        found = found || (r.size() == 2 && r[1].string_value() == want);
      });
  if (!s.ok()) return s.ToString();
  if (rows != 1 || !found) {
    return StrCat("fulltext_few ", idx, ": ", rows, " rows");
  }
  return "";
}

std::shared_ptr<ReadCheck> Runner::InputsCheck(std::mt19937_64& rng) {
  std::string edn = "[";
  auto users = std::make_shared<std::set<int64_t>>();
  while (users->size() < std::min<size_t>(100, meta_.scale.users)) {
    users->insert(static_cast<int64_t>(rng() % meta_.scale.users));
  }
  for (int64_t u : *users) edn += Quote(UserEmail(u)) + " ";
  auto c = std::make_shared<ReadCheck>();
  c->query = kInputs;
  c->inputs = {edn + "]"};
  // The user each name is UserName of (-1 for a name of no user); a
  // repeated row is wrong too (a :find answer is a set).
  auto got = std::make_shared<std::vector<int64_t>>();
  got->reserve(users->size());
  c->on_row = [got](const client::WireRow& r) {
    const std::string_view name = r.size() == 2
                                      ? std::string_view(r[1].string_value())
                                      : std::string_view();
    int64_t u = -1;
    constexpr std::string_view kPrefix = "User ";
    if (name.starts_with(kPrefix)) {
      const char* end = name.data() + name.size();
      const auto [at, ec] =
          std::from_chars(name.data() + kPrefix.size(), end, u);
      if (ec != std::errc() || at != end || !IsNumbered(name, kPrefix, u)) {
        u = -1;
      }
    }
    got->push_back(u);
  };
  c->finish = [got, users]() -> std::string {
    std::sort(got->begin(), got->end());
    if (!std::equal(got->begin(), got->end(), users->begin(), users->end())) {
      return StrCat("input bindings: ", got->size(), " names");
    }
    return "";
  };
  return c;
}

std::string Runner::Inputs(std::mt19937_64& rng) {
  return RunCheck(*InputsCheck(rng));
}

std::shared_ptr<ReadCheck> Runner::ReadMixCheck(std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0:
      return Q1Check(rng);
    case 1:
      return Q2Check(rng, false);
    default:
      return PullCheck(rng);
  }
}

std::string Runner::ReadMix(std::mt19937_64& rng) {
  return RunCheck(*ReadMixCheck(rng));
}

}  // namespace mentat::bench
