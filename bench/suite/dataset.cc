#include "suite/dataset.h"

#include <simdjson.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "mentat/base/str_cat.h"
#include "truth.h"

namespace mentat::bench {
namespace {

constexpr int64_t kIssuesPerTx = 500;
constexpr int64_t kTxPerIssueFile = 100;
constexpr int64_t kUsersPerTx = 1000;
constexpr int64_t kProbeUsers = 100;
// meta.json's format: 2 since t_since precedes the final quarter of the
// history (1 put it before the last history batch).
constexpr int64_t kDatasetFormat = 2;

std::string Instant(int64_t micros) {
  const time_t t = static_cast<time_t>(micros / 1000000);
  struct tm g;
  gmtime_r(&t, &g);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &g);
  return buf;
}

// Each writer returns the datoms its transactions assert (ops + the tx
// instant each).
struct FileStats {
  int64_t transactions = 0;
  int64_t datoms = 0;
};

[[nodiscard]] absl::Status WriteFile(const std::string& path,
                                     const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(StrCat("cannot write ", path));
  return absl::OkStatus();
}

// schema.edn of the workload, one transaction.
std::string SchemaTx(FileStats* stats) {
  struct A {
    const char* ident;
    const char* type;
    bool many;
    const char* unique;
    bool index;
    bool fulltext = false;
  };
  const A attrs[] = {
      {"user/email", "string", false, "identity", true},
      {"user/name", "string", false, nullptr, false},
      {"issue/title", "string", false, nullptr, false, true},
      {"issue/state", "keyword", false, nullptr, true},
      {"issue/priority", "long", false, nullptr, true},
      {"issue/assignee", "ref", false, nullptr, true},
      {"issue/reporter", "ref", false, nullptr, true},
      {"issue/created-at", "instant", false, nullptr, true},
      {"issue/label", "ref", true, nullptr, true},
      {"label/name", "string", false, "identity", true},
  };
  std::string tx = "[";
  for (const A& a : attrs) {
    tx += StrCat("{:db/ident :", a.ident, " :db/valueType :db.type/", a.type,
                 " :db/cardinality :db.cardinality/", a.many ? "many" : "one");
    stats->datoms += 3;
    if (a.unique != nullptr) {
      tx += StrCat(" :db/unique :db.unique/", a.unique);
      stats->datoms++;
    }
    if (a.index) {
      tx += " :db/index true";
      stats->datoms++;
    }
    if (a.fulltext) {
      tx += " :db/fulltext true";
      stats->datoms++;
    }
    tx += "}";
  }
  stats->transactions++;
  stats->datoms++;
  return tx + "]\n";
}

std::string UsersText(const WorkloadScale& scale, FileStats* stats) {
  std::string text;
  for (int64_t k = 0; k < scale.users; k += kUsersPerTx) {
    text += "[";
    for (int64_t u = k; u < std::min(k + kUsersPerTx, scale.users); ++u) {
      text += StrCat("{:user/email \"", UserEmail(u), "\" :user/name \"",
                     UserName(u), "\"}");
      stats->datoms += 2;
    }
    text += "]\n";
    stats->transactions++;
    stats->datoms++;
  }
  return text;
}

std::string LabelsText(const WorkloadScale& scale, FileStats* stats) {
  std::string text = "[";
  for (int64_t k = 0; k < scale.labels; ++k) {
    text += StrCat("{:label/name \"", LabelName(k), "\"}");
    stats->datoms++;
  }
  stats->transactions++;
  stats->datoms++;
  return text + "]\n";
}

std::string IssuesText(const WorkloadScale& scale, int64_t begin, int64_t end,
                       FileStats* stats) {
  std::string text;
  text.reserve(static_cast<size_t>((end - begin) * 320));
  for (int64_t b = begin; b < end; b += kIssuesPerTx) {
    text += "[";
    for (int64_t idx = b; idx < std::min(b + kIssuesPerTx, end); ++idx) {
      const Issue issue = GenerateIssue(scale, idx);
      const std::string id = StrCat("\"i", idx, "\"");
      text += StrCat(
          "{:db/id ", id, " :issue/title \"", issue.title,
          "\" :issue/state :", kStates[issue.state], " :issue/priority ",
          issue.priority, " :issue/assignee [:user/email \"",
          UserEmail(issue.assignee), "\"] :issue/reporter [:user/email \"",
          UserEmail(issue.reporter), "\"] :issue/created-at #inst \"",
          Instant(issue.created_at_micros), "\"}");
      stats->datoms += 6;
      for (int64_t l : issue.labels) {
        text += StrCat(" [:db/add ", id, " :issue/label [:label/name \"",
                       LabelName(l), "\"]]");
        stats->datoms++;
      }
    }
    text += "]\n";
    stats->transactions++;
    stats->datoms++;
  }
  return text;
}

// History: state changes in issue order, in transactions of 500 with a
// boundary where the final quarter starts. `before_since` gets the number
// of transactions before that boundary.
[[nodiscard]] absl::Status WriteHistory(const WorkloadScale& scale,
                                        const std::string& path,
                                        FileStats* stats, int64_t* changes,
                                        int64_t* before_since) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const int64_t total = CountHistoryChanges(scale);
  const int64_t before = HistoryChangesBeforeSince(total);
  std::string tx;
  for (int64_t idx = 0; idx < scale.issues; ++idx) {
    int new_state;
    if (!HistoryChange(scale, idx, &new_state)) continue;
    if (!tx.empty()) tx += " ";
    tx += StrCat("[:db/add #bench/issue ", idx,
                 " :issue/state :", kStates[new_state], "]");
    const int64_t i = (*changes)++;
    if (!EndsHistoryTx(i, total, before)) continue;
    out << "[" << tx << "]\n";
    tx.clear();
    stats->transactions++;
    if (i < before) *before_since = stats->transactions;
  }
  out.close();
  if (!out) return absl::UnavailableError(StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string JsonArray(const int64_t* values, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += StrCat(i ? ", " : "", values[i]);
  return s + "]";
}

}  // namespace

std::vector<int64_t> ProbeUsers(const WorkloadScale& scale) {
  std::vector<int64_t> probes;
  const int64_t n = std::min<int64_t>(kProbeUsers, scale.users);
  for (int64_t i = 0; i < n; ++i) probes.push_back(i * scale.users / n);
  return probes;
}

absl::Status GenerateDataset(const WorkloadScale& scale, const std::string& dir,
                             int jobs) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/tx", ec);
  if (ec) return absl::UnavailableError(StrCat("cannot create ", dir, "/tx"));
  jobs = std::max(1, jobs);

  DatasetMeta meta;
  meta.scale = scale;
  std::vector<FileStats> stats;
  auto add_file = [&](const std::string& name) {
    meta.initial_files.push_back("tx/" + name);
    stats.emplace_back();
  };
  add_file("0-schema.edn");
  add_file("1-users.edn");
  add_file("2-labels.edn");
  absl::Status s = WriteFile(dir + "/tx/0-schema.edn", SchemaTx(&stats[0]));
  if (s.ok())
    s = WriteFile(dir + "/tx/1-users.edn", UsersText(scale, &stats[1]));
  if (s.ok()) {
    s = WriteFile(dir + "/tx/2-labels.edn", LabelsText(scale, &stats[2]));
  }
  if (!s.ok()) return s;

  const int64_t per_file = kIssuesPerTx * kTxPerIssueFile;
  const int64_t shards = (scale.issues + per_file - 1) / per_file;
  for (int64_t i = 0; i < shards; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "issues-%05lld.edn",
                  static_cast<long long>(i));
    add_file(name);
  }
  // Work items: the issue shards, the history, the truth; any thread takes
  // the next.
  std::atomic<int64_t> next{0};
  std::vector<absl::Status> errors(static_cast<size_t>(shards + 2));
  FileStats history;
  int64_t changes = 0;
  int64_t before_since = 0;
  Truth truth;
  const std::vector<int64_t> probes = ProbeUsers(scale);
  auto work = [&] {
    for (;;) {
      const int64_t item = next.fetch_add(1);
      if (item > shards + 1) return;
      if (item == 0) {
        errors[0] = WriteHistory(scale, dir + "/tx/history.edn", &history,
                                 &changes, &before_since);
      } else if (item == 1) {
        truth = ComputeTruth(scale,
                             std::set<int64_t>(probes.begin(), probes.end()));
      } else {
        const int64_t shard = item - 2;
        FileStats& fs = stats[static_cast<size_t>(3 + shard)];
        const int64_t begin = shard * per_file;
        const std::string text = IssuesText(
            scale, begin, std::min(begin + per_file, scale.issues), &fs);
        errors[static_cast<size_t>(item)] = WriteFile(
            dir + "/" + meta.initial_files[static_cast<size_t>(3 + shard)],
            text);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  for (const absl::Status& e : errors) {
    if (!e.ok()) return e;
  }
  for (const FileStats& fs : stats) {
    meta.initial_transactions += fs.transactions;
    meta.initial_datoms += fs.datoms;
  }
  meta.history_file = "tx/history.edn";
  meta.history_transactions = history.transactions;
  meta.history_changes = changes;
  meta.history_transactions_before_since = before_since;

  std::string m = StrCat(
      "{\n  \"format\": ", kDatasetFormat, ",\n  \"scale\": \"", scale.name,
      "\",\n  \"users\": ", scale.users, ",\n  \"issues\": ", scale.issues,
      ",\n  \"labels\": ", scale.labels,
      ",\n  \"initial_transactions\": ", meta.initial_transactions,
      ",\n  \"initial_datoms\": ", meta.initial_datoms,
      ",\n  \"history_transactions\": ", meta.history_transactions,
      ",\n  \"history_changes\": ", meta.history_changes,
      ",\n  \"history_transactions_before_since\": ",
      meta.history_transactions_before_since, ",\n  \"history_file\": \"",
      meta.history_file, "\",\n  \"initial_files\": [");
  for (size_t i = 0; i < meta.initial_files.size(); ++i) {
    m += StrCat(i ? ", " : "", "\"", meta.initial_files[i], "\"");
  }
  m += "]\n}\n";
  s = WriteFile(dir + "/meta.json", m);
  if (!s.ok()) return s;

  std::string t = StrCat(
      "{\n  \"scale\": \"", scale.name, "\",\n  \"states\": [",
      "\"state/open\", \"state/in-progress\", \"state/closed\", "
      "\"state/resolved\", \"state/reopened\"],\n  \"states_initial\": ",
      JsonArray(truth.states_initial.data(), 5),
      ",\n  \"states_final\": ", JsonArray(truth.states_final.data(), 5),
      ",\n  \"open_at_least\": ", JsonArray(truth.open_at_least.data(), 6),
      ",\n  \"history_changes\": ", truth.history_changes,
      ",\n  \"changed_after_since\": ", truth.changed_after_since,
      ",\n  \"initial_datoms\": ", meta.initial_datoms, ",\n  \"assigned\": {");
  bool first = true;
  for (int64_t u : probes) {
    t += StrCat(first ? "\n" : ",\n", "    \"", u, "\": [");
    first = false;
    auto it = truth.assigned.find(u);
    if (it != truth.assigned.end()) {
      for (size_t i = 0; i < it->second.size(); ++i) {
        t += StrCat(i ? ", " : "", JsonArray(it->second[i].data(), 3));
      }
    }
    t += "]";
  }
  t += "\n  }\n}\n";
  return WriteFile(dir + "/truth.json", t);
}

absl::StatusOr<DatasetMeta> ReadDatasetMeta(const std::string& dir) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const std::string path = dir + "/meta.json";
  if (parser.load(path).get(doc)) {
    return absl::NotFoundError(
        StrCat("cannot read ", path, " (run mentat-bench gen first)"));
  }
  DatasetMeta meta;
  int64_t v;
  if (doc["format"].get(v) || v != kDatasetFormat) {
    return absl::FailedPreconditionError(StrCat(
        dir,
        " was generated by an older mentat-bench (t_since before the "
        "last history batch, not before the final quarter of the history); "
        "regenerate it with mentat-bench gen, then load it again"));
  }
  std::string_view scale;
  if (doc["scale"].get(scale) || !ScaleByName(scale, &meta.scale)) {
    return absl::DataLossError(StrCat(path, ": no known scale"));
  }
  if (!doc["initial_transactions"].get(v)) meta.initial_transactions = v;
  if (!doc["initial_datoms"].get(v)) meta.initial_datoms = v;
  if (!doc["history_transactions"].get(v)) meta.history_transactions = v;
  if (!doc["history_changes"].get(v)) meta.history_changes = v;
  if (doc["history_transactions_before_since"].get(v)) {
    return absl::DataLossError(
        StrCat(path, ": no history_transactions_before_since"));
  }
  meta.history_transactions_before_since = v;
  std::string_view h;
  if (!doc["history_file"].get(h)) meta.history_file = std::string(h);
  simdjson::dom::array files;
  if (doc["initial_files"].get(files)) {
    return absl::DataLossError(StrCat(path, ": no initial_files"));
  }
  for (simdjson::dom::element f : files) {
    std::string_view name;
    if (!f.get(name)) meta.initial_files.emplace_back(name);
  }
  return meta;
}

absl::StatusOr<DatasetTruth> ReadDatasetTruth(const std::string& dir) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const std::string path = dir + "/truth.json";
  if (parser.load(path).get(doc)) {
    return absl::NotFoundError(StrCat("cannot read ", path));
  }
  DatasetTruth truth;
  auto read_array = [&](const char* key, int64_t* out, size_t n) {
    simdjson::dom::array a;
    if (doc[key].get(a)) return false;
    size_t i = 0;
    for (simdjson::dom::element e : a) {
      int64_t v;
      if (i < n && !e.get(v)) out[i++] = v;
    }
    return i == n;
  };
  if (!read_array("states_initial", truth.states_initial.data(), 5) ||
      !read_array("states_final", truth.states_final.data(), 5) ||
      !read_array("open_at_least", truth.open_at_least.data(), 6)) {
    return absl::DataLossError(StrCat(path, ": malformed"));
  }
  int64_t v;
  if (doc["changed_after_since"].get(v)) {
    return absl::FailedPreconditionError(
        StrCat(path,
               ": no changed_after_since (an older dataset); "
               "regenerate it with mentat-bench gen"));
  }
  truth.changed_after_since = v;
  simdjson::dom::object assigned;
  if (doc["assigned"].get(assigned)) {
    return absl::DataLossError(StrCat(path, ": no assigned"));
  }
  for (auto [key, value] : assigned) {
    auto& list = truth.assigned[std::stoll(std::string(key))];
    simdjson::dom::array a;
    if (value.get(a)) continue;
    for (simdjson::dom::element triple : a) {
      std::array<int64_t, 3> t{};
      size_t i = 0;
      simdjson::dom::array ta;
      if (triple.get(ta)) continue;
      for (simdjson::dom::element e : ta) {
        int64_t x;
        if (i < 3 && !e.get(x)) t[i++] = x;
      }
      list.push_back(t);
    }
  }
  return truth;
}

}  // namespace mentat::bench
