#include "shell/importer.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_scan.h"
#include "mentat/edn/json_edn.h"
#include "shell/csv_rows.h"
#include "shell/error_display.h"
#include "shell/progress_bar.h"

namespace mentat::cli {
namespace {

// One transaction read from the file.
struct TxText {
  int64_t seq = 0;
  std::string edn;
  // File line of each line of `edn` (NDJSON batches), or empty: then line
  // L of `edn` is file line first_line + L - 1.
  std::vector<uint32_t> lines;
  uint32_t first_line = 1;
};

// Reads a file line by line (any line length).
class LineFile {
 public:
  explicit LineFile(std::FILE* f) : f_(f) {}
  ~LineFile() { std::free(buf_); }
  bool Next(std::string_view* line) {
    const ssize_t n = getline(&buf_, &cap_, f_);
    if (n < 0) return false;
    ++line_no_;
    bytes_ += n;
    *line = std::string_view(buf_, static_cast<size_t>(n));
    return true;
  }
  uint32_t line_no() const { return line_no_; }
  int64_t bytes() const { return bytes_; }

 private:
  std::FILE* f_;
  char* buf_ = nullptr;
  size_t cap_ = 0;
  uint32_t line_no_ = 0;
  int64_t bytes_ = 0;
};

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n,") == std::string_view::npos;
}

// True if `form` is a vector whose first item is itself a transaction (a
// vector or map of tx forms, not a tx form like [:db/add ...]).
bool IsVectorOfTransactions(std::string_view form) {
  if (form.size() < 2 || form.front() != '[') return false;
  const std::string_view inner = form.substr(1, form.size() - 2);
  const size_t first = inner.find_first_not_of(" \t\r\n,");
  if (first == std::string_view::npos || inner[first] != '[') return false;
  const size_t second = inner.find_first_not_of(" \t\r\n,", first + 1);
  return second != std::string_view::npos &&
         (inner[second] == '[' || inner[second] == '{');
}

enum class FileKind { kEdn, kNdjson, kCsv };

class TxSource {
 public:
  TxSource(std::FILE* f, FileKind kind, int per_tx)
      : file_(f), kind_(kind), per_tx_(per_tx) {}

  // CSV: reads the header and maps its columns (before the first Next).
  [[nodiscard]] absl::Status ReadCsvHeader(
      const std::vector<std::pair<std::string, std::string>>& map,
      const std::map<std::string, std::string>& types) {
    std::vector<std::string> header;
    absl::Status s = ReadCsvRecord(&header);
    if (!s.ok()) return s;
    if (header.empty()) {
      return absl::InvalidArgumentError(
          "the CSV file has no header row naming attributes");
    }
    absl::StatusOr<CsvMapping> mapping = CsvMapping::Make(header, map, types);
    if (!mapping.ok()) {
      return absl::Status(mapping.status().code(),
                          "line " + std::to_string(csv_.record_line()) + ": " +
                              std::string(mapping.status().message()));
    }
    csv_mapping_.emplace(*std::move(mapping));
    return absl::OkStatus();
  }

  // The next transaction, nullopt at the end; errors for unreadable JSON
  // or CSV.
  [[nodiscard]] absl::StatusOr<std::optional<TxText>> Next() {
    while (ready_.empty()) {
      absl::Status s = kind_ == FileKind::kNdjson ? ReadNdjson()
                       : kind_ == FileKind::kCsv  ? ReadCsv()
                                                  : ReadEdn();
      if (!s.ok()) return s;
      if (ready_.empty() && eof_) return std::optional<TxText>();
    }
    TxText tx = std::move(ready_.front());
    ready_.pop_front();
    tx.seq = next_seq_++;
    return std::optional<TxText>(std::move(tx));
  }

  int64_t bytes() const { return file_.bytes(); }

 private:
  [[nodiscard]] absl::Status ReadEdn() {
    std::string buffer;
    uint32_t first_line = 0;
    edn::EdnBalance balance;
    std::string_view line;
    while (file_.Next(&line)) {
      if (buffer.empty() && IsBlank(line)) continue;
      if (buffer.empty()) first_line = file_.line_no();
      buffer.append(line);
      balance.Feed(line);
      if (balance.balanced()) break;
    }
    if (buffer.empty()) {
      eof_ = true;
      return absl::OkStatus();
    }
    for (const edn::EdnFormSpan& span : edn::ScanEdn(buffer).forms) {
      const std::string_view form =
          std::string_view(buffer).substr(span.begin, span.end - span.begin);
      const uint32_t form_line =
          first_line + edn::EdnPositionAt(buffer, span.begin).line - 1;
      if (IsVectorOfTransactions(form)) {
        const std::string_view inner = form.substr(1, form.size() - 2);
        for (const edn::EdnFormSpan& item : edn::ScanEdn(inner).forms) {
          TxText tx;
          tx.edn = std::string(inner.substr(item.begin, item.end - item.begin));
          tx.first_line =
              form_line + edn::EdnPositionAt(inner, item.begin).line - 1;
          ready_.push_back(std::move(tx));
        }
        continue;
      }
      TxText tx;
      tx.edn = std::string(form);
      tx.first_line = form_line;
      ready_.push_back(std::move(tx));
    }
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status ReadNdjson() {
    TxText tx;
    tx.edn = "[";
    int entities = 0;
    std::string_view line;
    while (entities < per_tx_ && file_.Next(&line)) {
      if (IsBlank(line)) continue;
      // The server's JSON mapping; PrintEdn writes one line per entity, so
      // the server's error positions map back to the file's lines.
      const std::string where = "line " + std::to_string(file_.line_no());
      absl::StatusOr<edn::EdnValue> entity = edn::JsonToEdn(line, where);
      if (!entity.ok()) return entity.status();
      if (entities == 0) tx.first_line = file_.line_no();
      if (entities > 0) tx.edn.push_back('\n');
      edn::PrintEdnTo(*entity, &tx.edn);
      tx.lines.push_back(file_.line_no());
      ++entities;
    }
    if (entities == 0) {
      eof_ = true;
      return absl::OkStatus();
    }
    tx.edn.push_back(']');
    ready_.push_back(std::move(tx));
    return absl::OkStatus();
  }

  // The next CSV record into *fields (empty at the end of the file; blank
  // lines are passed over).
  [[nodiscard]] absl::Status ReadCsvRecord(std::vector<std::string>* fields) {
    fields->clear();
    std::string_view line;
    while (file_.Next(&line)) {
      absl::StatusOr<bool> complete = csv_.Feed(line, file_.line_no());
      if (!complete.ok()) return complete.status();
      if (!*complete) continue;
      *fields = csv_.TakeRecord();
      if (!fields->empty()) return absl::OkStatus();
    }
    if (csv_.in_quotes()) {
      return absl::InvalidArgumentError(
          "line " + std::to_string(csv_.record_line()) +
          ": a quoted field is not closed before the end of the file");
    }
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status ReadCsv() {
    TxText tx;
    tx.edn = "[";
    int entities = 0;
    std::vector<std::string> row;
    while (entities < per_tx_) {
      absl::Status s = ReadCsvRecord(&row);
      if (!s.ok()) return s;
      if (row.empty()) break;
      const uint32_t line = csv_.record_line();
      std::string entity;
      absl::StatusOr<bool> any = csv_mapping_->AppendEntity(row, &entity);
      if (!any.ok()) {
        return absl::Status(any.status().code(),
                            "line " + std::to_string(line) + ": " +
                                std::string(any.status().message()));
      }
      if (!*any) continue;
      if (entities == 0) tx.first_line = line;
      if (entities > 0) tx.edn.push_back('\n');
      tx.edn.append(entity);
      tx.lines.push_back(line);
      ++entities;
    }
    if (entities == 0) {
      eof_ = true;
      return absl::OkStatus();
    }
    tx.edn.push_back(']');
    ready_.push_back(std::move(tx));
    return absl::OkStatus();
  }

  LineFile file_;
  FileKind kind_;
  int per_tx_;
  CsvRecordReader csv_;
  std::optional<CsvMapping> csv_mapping_;
  bool eof_ = false;
  int64_t next_seq_ = 0;
  std::deque<TxText> ready_;
};

// The server's error for a transaction, in file coordinates.
[[nodiscard]] absl::Status InFile(const absl::Status& status,
                                  const std::string& path, const TxText& tx) {
  const std::string message(status.message());
  std::optional<MessagePosition> pos = ParseMessagePosition(message);
  std::string where;
  std::string rest = message;
  if (pos) {
    uint32_t line = tx.first_line + pos->line - 1;
    uint32_t column = pos->column;
    if (!tx.lines.empty() && pos->line <= tx.lines.size()) {
      line = tx.lines[pos->line - 1];
      // The batch's first line starts with the '[' the importer added.
      if (pos->line == 1 && column > 1) --column;
    }
    where = path + ":" + std::to_string(line) + ":" + std::to_string(column);
    rest = std::string(pos->rest);
  } else {
    where = path + ":" + std::to_string(tx.first_line);
  }
  return absl::Status(status.code(),
                      "import stopped at " + where + ": " + rest);
}

// Up to `inflight` Transact calls at once on worker threads.
class Pipeline {
 public:
  struct Done {
    TxText tx;
    absl::Status status;
  };

  Pipeline(client::Client* client, const std::string& database, int inflight,
           client::Canceller* canceller)
      : client_(client),
        database_(database),
        inflight_(std::max(1, inflight)),
        canceller_(canceller) {
    static std::mt19937_64 rng(std::random_device{}());
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx",
                  static_cast<unsigned long long>(rng()));
    id_prefix_ = std::string("import-") + buf + "-";
    for (int i = 0; i < inflight_; ++i)
      workers_.emplace_back([this] { Work(); });
  }

  ~Pipeline() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    for (std::thread& t : workers_) t.join();
  }

  // Waits for a free slot, calling `tick` about every 100 ms meanwhile.
  void Submit(TxText tx, const std::function<void()>& tick) {
    absl::MutexLock lock(&mu_);
    while (queue_.size() + active_ >= static_cast<size_t>(inflight_)) {
      cv_.WaitWithTimeout(&mu_, absl::Milliseconds(100));
      // Not under the lock: tick prints progress, which asks datoms().
      mu_.Unlock();
      tick();
      mu_.Lock();
    }
    queue_.push_back(std::move(tx));
    cv_.SignalAll();
  }

  void Drain(const std::function<void()>& tick) {
    absl::MutexLock lock(&mu_);
    while (!queue_.empty() || active_ > 0) {
      cv_.WaitWithTimeout(&mu_, absl::Milliseconds(100));
      mu_.Unlock();
      tick();
      mu_.Lock();
    }
  }

  bool has_failures() {
    absl::MutexLock lock(&mu_);
    return !failures_.empty();
  }

  std::vector<Done> TakeFailures() {
    absl::MutexLock lock(&mu_);
    std::vector<Done> out = std::move(failures_);
    failures_.clear();
    std::sort(out.begin(), out.end(),
              [](const Done& a, const Done& b) { return a.tx.seq < b.tx.seq; });
    return out;
  }

  // Runs one transaction on the calling thread.
  [[nodiscard]] absl::Status TransactNow(const TxText& tx) {
    absl::StatusOr<v1::TransactResponse> r = Call(tx);
    if (!r.ok()) return r.status();
    Count(*r);
    return absl::OkStatus();
  }

  int64_t datoms() {
    absl::MutexLock lock(&mu_);
    return datoms_;
  }
  int64_t transactions() {
    absl::MutexLock lock(&mu_);
    return transactions_;
  }

 private:
  [[nodiscard]] absl::StatusOr<v1::TransactResponse> Call(const TxText& tx) {
    v1::TransactRequest request;
    request.set_database(database_);
    request.set_tx_data(tx.edn);
    // The same id on a retry: a call whose answer was lost is not applied
    // twice.
    request.set_request_id(id_prefix_ + std::to_string(tx.seq));
    client::CallOptions call;
    call.canceller = canceller_;
    return client_->Transact(request, call);
  }

  void Count(const v1::TransactResponse& r) {
    absl::MutexLock lock(&mu_);
    datoms_ += r.datom_count();
    ++transactions_;
  }

  void Work() {
    absl::MutexLock lock(&mu_);
    for (;;) {
      while (!stop_ && queue_.empty()) cv_.Wait(&mu_);
      if (queue_.empty()) return;
      TxText tx = std::move(queue_.front());
      queue_.pop_front();
      ++active_;
      mu_.Unlock();
      absl::StatusOr<v1::TransactResponse> r = Call(tx);
      mu_.Lock();
      --active_;
      if (r.ok()) {
        datoms_ += r->datom_count();
        ++transactions_;
      } else {
        failures_.push_back({std::move(tx), r.status()});
      }
      cv_.SignalAll();
    }
  }

  client::Client* client_;
  std::string database_;
  int inflight_;
  client::Canceller* canceller_;
  std::string id_prefix_;
  absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<TxText> queue_ ABSL_GUARDED_BY(mu_);
  size_t active_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Done> failures_ ABSL_GUARDED_BY(mu_);
  int64_t datoms_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t transactions_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> workers_;
};

bool HasExtension(const std::string& path, const char* ext) {
  const size_t n = std::strlen(ext);
  return path.size() > n && path.compare(path.size() - n, n, ext) == 0;
}

bool LooksLikeNdjson(const std::string& path, std::FILE* f) {
  for (const char* ext : {".ndjson", ".jsonl", ".json"}) {
    const size_t n = std::strlen(ext);
    if (path.size() > n && path.compare(path.size() - n, n, ext) == 0) {
      return true;
    }
  }
  // A JSON object's first key is a string; an EDN map's a keyword.
  char buf[256];
  const size_t n = std::fread(buf, 1, sizeof buf, f);
  std::rewind(f);
  size_t i = 0;
  while (i < n && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' ||
                   buf[i] == '\t')) {
    ++i;
  }
  if (i >= n || buf[i] != '{') return false;
  ++i;
  while (i < n && (buf[i] == ' ' || buf[i] == '\t')) ++i;
  return i < n && buf[i] == '"';
}

bool Retryable(absl::StatusCode code, bool reordered) {
  switch (code) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
      return true;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
      return reordered;
    default:
      return false;
  }
}

// Where a transaction came from in the file (for error messages).
struct TxPlace {
  uint32_t first_line = 1;
  std::vector<uint32_t> lines;
};

// The index the server names in an Import error ("import transaction 5
// ..."), or -1.
int64_t ImportErrorIndex(const std::string& message) {
  static const std::string kTag = "import transaction ";
  const size_t at = message.find(kTag);
  if (at == std::string::npos) return -1;
  size_t end = at + kTag.size();
  int64_t n = 0;
  bool any = false;
  while (end < message.size() && message[end] >= '0' && message[end] <= '9') {
    n = n * 10 + (message[end++] - '0');
    any = true;
  }
  return any ? n : -1;
}

// The part of an Import error from its EDN position on ("line 2, column
// 3: ..."), or the whole message.
std::string FromPosition(const std::string& message) {
  for (size_t at = message.find("line "); at != std::string::npos;
       at = message.find("line ", at + 1)) {
    if ((at == 0 || message.compare(at - 2, 2, ": ") == 0) &&
        ParseMessagePosition(message.substr(at))) {
      return message.substr(at);
    }
  }
  return message;
}

// Polls the server's count of committed datoms (its transactor's, from
// Stats) on a thread of its own, about twice a second, and reports how
// many were added since it started. Stops and joins when destroyed.
class CommittedPoller {
 public:
  CommittedPoller(client::Client* client, std::string database,
                  std::function<void(int64_t)> report)
      : client_(client),
        database_(std::move(database)),
        report_(std::move(report)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~CommittedPoller() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }

 private:
  void Run() {
    std::optional<int64_t> base;
    absl::MutexLock lock(&mu_);
    for (;;) {
      mu_.Unlock();
      v1::StatsRequest request;
      request.set_database(database_);
      client::CallOptions call;
      call.timeout = std::chrono::milliseconds(2000);
      absl::StatusOr<v1::StatsResponse> stats = client_->Stats(request, call);
      if (stats.ok()) {
        const auto datoms = static_cast<int64_t>(stats->transactor().datoms());
        if (!base) base = datoms;
        report_(datoms - *base);
      }
      mu_.Lock();
      // A failed poll (an old server, a permission) leaves the count as is.
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_),
                               absl::Milliseconds(500))) {
        return;
      }
    }
  }

  client::Client* client_;
  std::string database_;
  std::function<void(int64_t)> report_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Streams the file through one Import call. Sets *unimplemented (and
// imports nothing) when the server has no Import.
[[nodiscard]] absl::Status ImportByStream(
    client::Client* client, TxSource* source, const std::string& path,
    const ImportOptions& options, client::Canceller* canceller,
    const std::function<void(int64_t)>& tick, ImportSummary* summary,
    bool* unimplemented) {
  constexpr size_t kMessageBytes = 1 << 20;
  std::vector<TxPlace> places;
  absl::Status read_error;
  bool first = true;
  const auto stopping = [&] {
    return options.stop != nullptr && options.stop->load();
  };
  auto next = [&](v1::ImportRequest* request) {
    if (!read_error.ok()) return false;
    // Stopping: no more messages; the server finishes what it was sent.
    if (!first && stopping()) return false;
    if (first) request->set_database(options.database);
    size_t bytes = 0;
    while (bytes < kMessageBytes) {
      if (canceller != nullptr && canceller->cancelled()) break;
      if (stopping()) break;
      absl::StatusOr<std::optional<TxText>> tx = source->Next();
      if (!tx.ok()) {
        read_error =
            absl::InvalidArgumentError("import stopped at " + path + ": " +
                                       std::string(tx.status().message()));
        break;
      }
      if (!tx->has_value()) break;
      bytes += (*tx)->edn.size();
      places.push_back(TxPlace{(*tx)->first_line, std::move((*tx)->lines)});
      request->add_tx_data(std::move((*tx)->edn));
    }
    const bool send = first || request->tx_data_size() > 0;
    first = false;
    if (send) tick(static_cast<int64_t>(places.size()));
    return send;
  };
  client::CallOptions call;
  call.canceller = canceller;
  absl::StatusOr<v1::ImportResponse> response = client->Import(next, call);
  if (!response.ok()) {
    const std::string message(response.status().message());
    if (response.status().code() == absl::StatusCode::kUnimplemented &&
        message.find("import transaction") == std::string::npos) {
      *unimplemented = true;
      return absl::OkStatus();
    }
    const int64_t index = ImportErrorIndex(message);
    if (index < 0 || index >= static_cast<int64_t>(places.size())) {
      return response.status();
    }
    summary->transactions = index;
    TxText where;
    where.first_line = places[static_cast<size_t>(index)].first_line;
    where.lines = places[static_cast<size_t>(index)].lines;
    return InFile(absl::Status(response.status().code(), FromPosition(message)),
                  path, where);
  }
  summary->transactions = response->transactions();
  summary->datoms = response->datoms();
  summary->basis_tx = response->basis_tx();
  if (summary->transactions > 0 &&
      summary->transactions <= static_cast<int64_t>(places.size())) {
    summary->last_line =
        places[static_cast<size_t>(summary->transactions - 1)].first_line;
  }
  summary->stopped = stopping();
  if (!read_error.ok()) return read_error;
  if (canceller != nullptr && canceller->cancelled()) {
    return absl::CancelledError("import cancelled");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ImportSummary> ImportFile(client::Client* client,
                                         const std::string& path,
                                         const ImportOptions& options,
                                         client::Canceller* canceller) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    return absl::NotFoundError("cannot open " + path + ": " +
                               std::strerror(errno));
  }
  struct stat st = {};
  const int64_t total = fstat(fileno(f), &st) == 0 ? st.st_size : 0;
  const FileKind kind = HasExtension(path, ".csv") ? FileKind::kCsv
                        : LooksLikeNdjson(path, f) ? FileKind::kNdjson
                                                   : FileKind::kEdn;
  if (kind != FileKind::kCsv && !options.csv_map.empty()) {
    std::fclose(f);
    return absl::InvalidArgumentError("--map is for CSV files (.csv)");
  }
  // CSV cells are read by their attributes' types.
  std::map<std::string, std::string> types;
  if (kind == FileKind::kCsv) {
    v1::SchemaRequest request;
    request.set_database(options.database);
    client::CallOptions call;
    call.canceller = canceller;
    absl::StatusOr<v1::SchemaResponse> schema = client->Schema(request, call);
    if (!schema.ok()) {
      std::fclose(f);
      return schema.status();
    }
    for (const v1::Attribute& a : schema->attributes()) {
      types[a.ident()] = a.value_type();
    }
  }
  // A source positioned after the CSV header and the skipped transactions.
  uint32_t skipped_to_line = 0;
  const auto open_source =
      [&](std::optional<TxSource>* source) -> absl::Status {
    source->emplace(f, kind, std::max(1, options.entities_per_tx));
    if (kind == FileKind::kCsv) {
      absl::Status s = (*source)->ReadCsvHeader(options.csv_map, types);
      if (!s.ok()) {
        return absl::Status(s.code(), "import stopped at " + path + ": " +
                                          std::string(s.message()));
      }
    }
    for (int64_t i = 0; i < options.skip; ++i) {
      absl::StatusOr<std::optional<TxText>> tx = (*source)->Next();
      if (!tx.ok()) {
        return absl::InvalidArgumentError("import stopped at " + path + ": " +
                                          std::string(tx.status().message()));
      }
      if (!tx->has_value()) {
        return absl::InvalidArgumentError(
            "--skip " + std::to_string(options.skip) + ": " + path +
            " has only " + std::to_string(i) + " transactions");
      }
      skipped_to_line = (*tx)->first_line;
    }
    return absl::OkStatus();
  };
  std::optional<TxSource> stream_source;
  if (absl::Status s = open_source(&stream_source); !s.ok()) {
    std::fclose(f);
    return s;
  }
  TxSource& source = *stream_source;
  const auto start = std::chrono::steady_clock::now();
  ImportSummary summary;
  std::optional<ProgressBar> bar;
  if (options.progress) {
    winsize ws = {};
    const int width =
        ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col
                                                                    : 80;
    bar.emplace(stderr, width);
  }
  absl::Status result;
  bool unimplemented = !options.use_import_rpc;
  if (!unimplemented) {
    // The bar counts the bytes and transactions sent, and the datoms the
    // server has committed (its transactor's count, polled).
    absl::Mutex bar_mu;
    std::atomic<int64_t> bytes_sent{0};
    std::atomic<int64_t> transactions_sent{0};
    std::atomic<int64_t> datoms_committed{0};
    const auto redraw = [&] {
      ImportProgress p;
      p.bytes_done = bytes_sent.load();
      p.bytes_total = total;
      p.transactions = transactions_sent.load();
      p.datoms = datoms_committed.load();
      p.elapsed_seconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
      absl::MutexLock lock(&bar_mu);
      bar->Update(p);
    };
    const auto tick = [&](int64_t transactions) {
      if (!bar) return;
      bytes_sent.store(source.bytes());
      transactions_sent.store(transactions);
      redraw();
    };
    std::optional<CommittedPoller> poller;
    if (bar) {
      poller.emplace(client, options.database, [&](int64_t datoms) {
        datoms_committed.store(datoms);
        redraw();
      });
    }
    result = ImportByStream(client, &source, path, options, canceller, tick,
                            &summary, &unimplemented);
    poller.reset();
    summary.bytes = source.bytes();
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (bar && !unimplemented) {
      ImportProgress p;
      p.bytes_done = result.ok() ? total : source.bytes();
      p.bytes_total = total;
      p.datoms = summary.datoms;
      p.transactions = summary.transactions;
      p.elapsed_seconds = summary.seconds;
      bar->Finish(p);
    }
    if (unimplemented) std::rewind(f);
  }
  if (unimplemented) {
    std::optional<TxSource> transact_source;
    if (absl::Status s = open_source(&transact_source); !s.ok()) {
      std::fclose(f);
      return s;
    }
    TxSource& source = *transact_source;
    Pipeline pipeline(client, options.database, options.inflight, canceller);
    uint32_t last_sent_line = 0;
    const auto progress = [&]() {
      ImportProgress p;
      p.bytes_done = source.bytes();
      p.bytes_total = total;
      p.datoms = pipeline.datoms();
      p.transactions = pipeline.transactions();
      p.elapsed_seconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
      return p;
    };
    const auto tick = [&]() {
      if (bar) bar->Update(progress());
    };
    // Retries what failed while others were in flight, alone and in file
    // order, once everything sent before has been answered.
    const auto retry = [&]() -> absl::Status {
      pipeline.Drain(tick);
      for (Pipeline::Done& done : pipeline.TakeFailures()) {
        absl::Status status = done.status;
        for (int attempt = 0;
             attempt < 5 && !status.ok() &&
             (canceller == nullptr || !canceller->cancelled()) &&
             Retryable(status.code(), options.inflight > 1);
             ++attempt) {
          if (status.code() != absl::StatusCode::kInvalidArgument &&
              status.code() != absl::StatusCode::kNotFound &&
              status.code() != absl::StatusCode::kFailedPrecondition) {
            std::this_thread::sleep_for(
                std::chrono::milliseconds(100 << attempt));
          }
          ++summary.retried;
          status = pipeline.TransactNow(done.tx);
          if (!status.ok() &&
              (status.code() == absl::StatusCode::kInvalidArgument ||
               status.code() == absl::StatusCode::kNotFound ||
               status.code() == absl::StatusCode::kFailedPrecondition)) {
            break;  // alone and still refused: a real error
          }
        }
        if (!status.ok()) return InFile(status, path, done.tx);
      }
      return absl::OkStatus();
    };
    for (;;) {
      if (canceller != nullptr && canceller->cancelled()) {
        result = absl::CancelledError("import cancelled");
        break;
      }
      if (options.stop != nullptr && options.stop->load()) {
        summary.stopped = true;
        break;
      }
      absl::StatusOr<std::optional<TxText>> tx = source.Next();
      if (!tx.ok()) {
        result = absl::InvalidArgumentError("import stopped at " + path + ": " +
                                            std::string(tx.status().message()));
        break;
      }
      if (!tx->has_value()) break;
      last_sent_line = (*tx)->first_line;
      pipeline.Submit(std::move(**tx), tick);
      tick();
      if (pipeline.has_failures()) {
        result = retry();
        if (!result.ok()) break;
      }
    }
    const absl::Status last = retry();
    if (result.ok()) result = last;
    if (result.ok() && canceller != nullptr && canceller->cancelled()) {
      result = absl::CancelledError("import cancelled");
    }
    summary.transactions = pipeline.transactions();
    summary.datoms = pipeline.datoms();
    // Everything sent was answered, and retried until it committed (else
    // the result is the error): the committed ones are the first sent.
    if (result.ok()) summary.last_line = last_sent_line;
    summary.bytes = source.bytes();
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (bar) {
      ImportProgress p = progress();
      if (result.ok()) p.bytes_done = total;
      bar->Finish(p);
    }
  }
  std::fclose(f);
  if (summary.last_line == 0) summary.last_line = skipped_to_line;
  if (!result.ok()) {
    return absl::Status(
        result.code(),
        std::string(result.message()) + " (" +
            std::to_string(summary.transactions) +
            " transactions committed before it stopped" +
            (options.skip > 0
                 ? ", after the " + std::to_string(options.skip) + " skipped"
                 : std::string()) +
            ")");
  }
  return summary;
}

}  // namespace mentat::cli
