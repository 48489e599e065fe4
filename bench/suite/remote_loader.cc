// mentat-bench load: a generated dataset into a running mentatd.

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "mentat/base/str_cat.h"
#include "suite/dataset.h"
#include "suite/mixed_pool.h"
#include "suite/suite.h"

namespace mentat::bench {
namespace {

using Clock = std::chrono::steady_clock;

// load-<db>.json's format: 2 since t_since precedes the final quarter of
// the history (1 put it before the last history batch).
constexpr int64_t kLoadRecordFormat = 2;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[nodiscard]] absl::StatusOr<std::vector<std::string>> ReadLines(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

// Transacts `txs` with `inflight` threads; `on_done` sees each response.
[[nodiscard]] absl::Status TransactAll(
    client::Client& client, const std::string& database,
    const std::vector<std::string>& txs, int inflight,
    const std::function<void(size_t, const v1::TransactResponse&)>& on_done) {
  std::atomic<size_t> next{0};
  absl::Mutex mu;
  absl::Status error;
  auto work = [&] {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= txs.size()) return;
      v1::TransactRequest req;
      req.set_database(database);
      req.set_tx_data(txs[i]);
      auto resp = client.Transact(req);
      absl::MutexLock lock(&mu);
      if (!resp.ok()) {
        if (error.ok()) {
          error = absl::Status(
              resp.status().code(),
              StrCat("transaction ", i, ": ", resp.status().message()));
        }
        return;
      }
      on_done(i, *resp);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, inflight); ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  return error;
}

// Issue index from a title "Issue <idx>: <word>".
int64_t IssueIndexOfTitle(const std::string& title) {
  return std::stoll(title.substr(6));
}

}  // namespace

absl::Status RunLoad(client::Client& client, const LoadOptions& options) {
  auto meta = ReadDatasetMeta(options.data);
  if (!meta.ok()) return meta.status();
  {
    v1::CreateDatabaseRequest req;
    req.set_name(options.database);
    auto created = client.CreateDatabase(req);
    if (!created.ok() &&
        created.status().code() != absl::StatusCode::kAlreadyExists) {
      return created.status();
    }
  }
  LoadRecord record;
  record.method = options.method;
  record.issue_ids.assign(static_cast<size_t>(meta->scale.issues), 0);
  absl::Mutex mu;
  int64_t max_tx = 0;

  const auto t0 = Clock::now();
  if (options.method == "import") {
    size_t file = 0;
    std::ifstream in;
    bool first = true;
    absl::Status read_error;
    auto next = [&](v1::ImportRequest* req) {
      if (first) req->set_database(options.database);
      size_t bytes = 0;
      std::string line;
      while (bytes < (4u << 20)) {
        if (!in.is_open() || !std::getline(in, line)) {
          if (in.is_open()) in.close();
          if (file == meta->initial_files.size()) break;
          in.open(options.data + "/" + meta->initial_files[file++],
                  std::ios::binary);
          if (!in) {
            read_error = absl::NotFoundError(
                StrCat("cannot read ", meta->initial_files[file - 1]));
            break;
          }
          continue;
        }
        if (line.empty()) continue;
        bytes += line.size();
        req->add_tx_data(std::move(line));
      }
      const bool send = first || req->tx_data_size() > 0;
      first = false;
      return send;
    };
    auto imported = client.Import(next);
    if (!read_error.ok()) return read_error;
    if (!imported.ok()) return imported.status();
    record.datoms = imported->datoms();
    max_tx = imported->last_tx();
    // The load is the import; learning the issue ids afterwards is ours.
    record.load_seconds = Since(t0);
    std::printf("import: %s, %lld transactions, server time %.2f s\n",
                imported->method().c_str(),
                static_cast<long long>(imported->transactions()),
                imported->elapsed_micros() / 1e6);
    // The issue ids, through their titles.
    v1::QueryRequest q;
    q.set_database(options.database);
    q.set_query("[:find ?i ?t :where [?i :issue/title ?t]]");
    absl::Status s = client.Query(q, [&](const v1::QueryResponse& batch) {
      for (const v1::Row& row : batch.rows()) {
        const int64_t idx = IssueIndexOfTitle(row.values(1).string_value());
        if (idx >= 0 && idx < meta->scale.issues) {
          record.issue_ids[static_cast<size_t>(idx)] =
              row.values(0).long_value();
        }
      }
      return true;
    });
    if (!s.ok()) return s;
  } else if (options.method == "transact") {
    for (size_t f = 0; f < meta->initial_files.size(); ++f) {
      auto lines = ReadLines(options.data + "/" + meta->initial_files[f]);
      if (!lines.ok()) return lines.status();
      // Schema, users and labels in order; issue transactions are
      // independent of each other.
      const int inflight = f < 3 ? 1 : options.inflight;
      absl::Status s =
          TransactAll(client, options.database, *lines, inflight,
                      [&](size_t, const v1::TransactResponse& r) {
                        record.datoms += r.datom_count();
                        max_tx = std::max(max_tx, r.tx());
                        for (const auto& [name, id] : r.tempids()) {
                          if (name.size() > 1 && name[0] == 'i') {
                            const int64_t idx = std::stoll(name.substr(1));
                            if (idx >= 0 && idx < meta->scale.issues) {
                              record.issue_ids[static_cast<size_t>(idx)] = id;
                            }
                          }
                        }
                      });
      if (!s.ok()) {
        return absl::Status(s.code(),
                            StrCat(meta->initial_files[f], ": ", s.message()));
      }
    }
  } else {
    return absl::InvalidArgumentError(
        StrCat("--method: expected import or transact, got ", options.method));
  }
  if (record.load_seconds == 0) record.load_seconds = Since(t0);
  record.t_mid = max_tx;
  for (size_t i = 0; i < record.issue_ids.size(); ++i) {
    if (record.issue_ids[i] == 0) {
      return absl::DataLossError(StrCat("issue ", i, " has no entity id"));
    }
  }

  // History: the transactions before t_since (independent of each other),
  // then t_since, then the final quarter's.
  auto history = ReadLines(options.data + "/" + meta->history_file);
  if (!history.ok()) return history.status();
  if (static_cast<int64_t>(history->size()) != meta->history_transactions ||
      meta->history_transactions_before_since > meta->history_transactions) {
    return absl::DataLossError(StrCat(meta->history_file, ": ", history->size(),
                                      " transactions, meta.json says ",
                                      meta->history_transactions,
                                      " (regenerate the dataset)"));
  }
  for (std::string& tx : *history) {
    std::string out;
    size_t pos = 0;
    static const std::string kTag = "#bench/issue ";
    for (;;) {
      size_t at = tx.find(kTag, pos);
      if (at == std::string::npos) break;
      out.append(tx, pos, at - pos);
      size_t end = at + kTag.size();
      while (end < tx.size() && std::isdigit(tx[end])) ++end;
      const int64_t idx = std::stoll(tx.substr(at + kTag.size()));
      out += std::to_string(record.issue_ids[static_cast<size_t>(idx)]);
      record.history_changes++;
      pos = end;
    }
    out.append(tx, pos);
    tx = std::move(out);
  }
  const auto h0 = Clock::now();
  const auto split = history->begin() + meta->history_transactions_before_since;
  std::vector<std::string> after(std::make_move_iterator(split),
                                 std::make_move_iterator(history->end()));
  history->erase(split, history->end());
  absl::Status s =
      TransactAll(client, options.database, *history, options.inflight,
                  [&](size_t, const v1::TransactResponse&) {});
  if (!s.ok()) return s;
  v1::StatsRequest stats_req;
  stats_req.set_database(options.database);
  auto stats = client.Stats(stats_req);
  if (!stats.ok()) return stats.status();
  record.t_since = stats->basis_tx();
  s = TransactAll(client, options.database, after, options.inflight,
                  [&](size_t, const v1::TransactResponse&) {});
  if (!s.ok()) return s;
  record.history_seconds = Since(h0);
  stats = client.Stats(stats_req);
  if (stats.ok()) {
    record.disk_bytes =
        static_cast<int64_t>(stats->storage().disk_size_bytes());
  }

  const std::string base = options.data + "/load-" + options.database;
  std::ofstream out(base + ".json", std::ios::trunc);
  out << "{\n  \"format\": " << kLoadRecordFormat << ",\n  \"method\": \""
      << record.method << "\",\n  \"datoms\": " << record.datoms
      << ",\n  \"expected_datoms\": " << meta->initial_datoms
      << ",\n  \"load_seconds\": " << record.load_seconds
      << ",\n  \"datoms_per_second\": "
      << static_cast<int64_t>(record.datoms /
                              std::max(1e-9, record.load_seconds))
      << ",\n  \"history_seconds\": " << record.history_seconds
      << ",\n  \"history_changes\": " << record.history_changes
      << ",\n  \"t_mid\": " << record.t_mid
      << ",\n  \"t_since\": " << record.t_since
      << ",\n  \"disk_bytes\": " << record.disk_bytes << "\n}\n";
  std::ofstream ids(base + ".ids", std::ios::binary | std::ios::trunc);
  ids.write(reinterpret_cast<const char*>(record.issue_ids.data()),
            static_cast<std::streamsize>(record.issue_ids.size() * 8));
  if (!out || !ids) return absl::UnavailableError("cannot write " + base);
  // A fresh load: the mixed writer has changed nothing in it yet.
  MixedPool::Forget(options.data, options.database);
  std::printf(
      "loaded %lld datoms by %s in %.2f s (%.0f datoms/s); history %lld "
      "changes in %.2f s; t_mid %lld, t_since %lld; %.1f MB on disk\n",
      static_cast<long long>(record.datoms), record.method.c_str(),
      record.load_seconds, record.datoms / std::max(1e-9, record.load_seconds),
      static_cast<long long>(record.history_changes), record.history_seconds,
      static_cast<long long>(record.t_mid),
      static_cast<long long>(record.t_since), record.disk_bytes / 1e6);
  if (record.datoms != meta->initial_datoms) {
    return absl::DataLossError(StrCat("the server reported ", record.datoms,
                                      " datoms for the initial load; the "
                                      "dataset holds ",
                                      meta->initial_datoms));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadRecord> ReadLoadRecord(const std::string& data,
                                          const std::string& database,
                                          size_t issues) {
  const std::string base = data + "/load-" + database;
  std::ifstream in(base + ".json");
  if (!in) {
    return absl::NotFoundError(
        StrCat("cannot read ", base, ".json (run mentat-bench load first)"));
  }
  LoadRecord r;
  int64_t format = 1;
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t q1 = line.find('"');
    const size_t q2 = line.find('"', q1 + 1);
    if (q1 == std::string::npos || q2 == std::string::npos) continue;
    const std::string key = line.substr(q1 + 1, q2 - q1 - 1);
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.back() == ',' || value.back() == ' ')) {
      value.pop_back();
    }
    while (!value.empty() && value[0] == ' ') value.erase(0, 1);
    if (key == "format") {
      format = std::stoll(value);
    } else if (key == "method") {
      r.method = value.substr(1, value.size() - 2);
    } else if (key == "datoms") {
      r.datoms = std::stoll(value);
    } else if (key == "load_seconds") {
      r.load_seconds = std::stod(value);
    } else if (key == "history_seconds") {
      r.history_seconds = std::stod(value);
    } else if (key == "history_changes") {
      r.history_changes = std::stoll(value);
    } else if (key == "t_mid") {
      r.t_mid = std::stoll(value);
    } else if (key == "t_since") {
      r.t_since = std::stoll(value);
    } else if (key == "disk_bytes") {
      r.disk_bytes = std::stoll(value);
    }
  }
  if (format != kLoadRecordFormat) {
    return absl::FailedPreconditionError(
        StrCat(base,
               ".json was written by an older mentat-bench load (its "
               "t_since is before the last history batch); regenerate "
               "the dataset and load it again"));
  }
  r.issue_ids.resize(issues);
  std::ifstream ids(base + ".ids", std::ios::binary);
  ids.read(reinterpret_cast<char*>(r.issue_ids.data()),
           static_cast<std::streamsize>(issues * 8));
  if (!ids) return absl::DataLossError(StrCat(base, ".ids is truncated"));
  return r;
}

}  // namespace mentat::bench
