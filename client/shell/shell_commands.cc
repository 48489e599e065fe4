// The shell's commands about databases, schema, the log and settings.

#include <unistd.h>

#include <algorithm>

#include "mentat/edn/edn_inst.h"
#include "shell/command.h"
#include "shell/interrupts.h"
#include "shell/line_editor.h"
#include "shell/shell.h"
#include "shell/wire_cell.h"

namespace mentat::cli {
namespace {

constexpr int64_t kTxCounterMask = (int64_t{1} << 42) - 1;

void WriteTable(OutputSink* sink, const WriterStyle& style,
                std::vector<std::string> columns,
                std::vector<std::vector<Cell>> rows) {
  ResultWriter writer(sink, style, ResultShape::kRelation);
  writer.Begin(std::move(columns));
  for (auto& row : rows) writer.AddRow(std::move(row));
  writer.End();
}

// Built-in attributes (:db/*, :db.*/*) and the server's own (:mentat.tx/*)
// stay out of listings unless asked for.
bool IsBuiltIn(std::string_view ident) {
  const size_t slash = ident.find('/');
  const std::string_view ns =
      slash == std::string_view::npos ? ident : ident.substr(0, slash);
  return ns == "db" || ns.substr(0, 3) == "db." || ns == "mentat.tx";
}

std::string_view StripColon(std::string_view s) {
  if (!s.empty() && s.front() == ':') s.remove_prefix(1);
  return s;
}

// True if `ident` is `wanted` or lies in namespace `wanted`.
bool Matches(std::string_view ident, std::string_view wanted) {
  if (ident == wanted) return true;
  return ident.size() > wanted.size() && ident[wanted.size()] == '/' &&
         ident.substr(0, wanted.size()) == wanted;
}

Cell Op(bool added) { return Cell::Symbol(added ? "+" : "-"); }

}  // namespace

absl::Status Shell::LoadAttributeNames() {
  v1::SchemaRequest request;
  request.set_database(options_.database);
  absl::StatusOr<v1::SchemaResponse> schema = client_->Schema(request, Call());
  if (!schema.ok()) return schema.status();
  attribute_names_.clear();
  for (const v1::Ident& ident : schema->idents()) {
    attribute_names_.emplace_back(ident.entity(), ident.ident());
  }
  std::sort(attribute_names_.begin(), attribute_names_.end());
  return absl::OkStatus();
}

Cell Shell::AttributeCell(int64_t id) const {
  auto it =
      std::lower_bound(attribute_names_.begin(), attribute_names_.end(), id,
                       [](const std::pair<int64_t, std::string>& p, int64_t v) {
                         return p.first < v;
                       });
  if (it != attribute_names_.end() && it->first == id) {
    return Cell::Keyword(it->second);
  }
  return Cell::Ref(id);
}

absl::Status Shell::RunSchema(std::string_view args) {
  const std::string wanted(StripColon(TrimEdn(args)));
  v1::SchemaRequest request;
  request.set_database(options_.database);
  absl::StatusOr<v1::SchemaResponse> schema = client_->Schema(request, Call());
  if (!schema.ok()) return schema.status();
  std::vector<std::vector<Cell>> rows;
  for (const v1::Attribute& a : schema->attributes()) {
    if (wanted.empty() ? IsBuiltIn(a.ident()) : !Matches(a.ident(), wanted)) {
      continue;
    }
    const std::string_view type = StripColon(a.value_type());
    const char* unique =
        a.unique() == v1::Attribute::UNIQUE_IDENTITY ? "db.unique/identity"
        : a.unique() == v1::Attribute::UNIQUE_VALUE  ? "db.unique/value"
                                                     : nullptr;
    std::string flags;
    if (a.index()) flags += "index ";
    if (a.is_component()) flags += "component ";
    if (a.no_history()) flags += "noHistory ";
    if (a.fulltext()) flags += "fulltext ";
    if (!flags.empty()) flags.pop_back();
    rows.push_back(
        {Cell::Keyword(a.ident()), Cell::Ref(a.id()),
         Cell::Keyword(std::string(type)),
         Cell::Keyword(a.many() ? "db.cardinality/many" : "db.cardinality/one"),
         unique != nullptr ? Cell::Keyword(unique) : Cell::Nil(),
         Cell::String(flags), Cell::String(a.doc())});
  }
  if (rows.empty() && !wanted.empty()) {
    return absl::NotFoundError("no attribute or namespace :" + wanted);
  }
  std::unique_ptr<OutputSink> sink = NewSink();
  WriteTable(sink.get(), options_.style,
             {"ident", "id", "type", "cardinality", "unique", "flags", "doc"},
             std::move(rows));
  sink->Finish();
  return absl::OkStatus();
}

absl::Status Shell::RunStats(std::string_view args) {
  const std::string wanted(StripColon(TrimEdn(args)));
  v1::StatsRequest request;
  request.set_database(options_.database);
  request.set_value_counts(!wanted.empty());
  absl::StatusOr<v1::StatsResponse> stats = client_->Stats(request, Call());
  if (!stats.ok()) return stats.status();
  std::unique_ptr<OutputSink> sink = NewSink();
  if (!wanted.empty()) {
    std::vector<std::vector<Cell>> rows;
    for (const v1::AttributeStats& a : stats->attributes()) {
      if (!Matches(a.ident(), wanted)) continue;
      if (a.value_counts_size() == 0 || a.ident() != wanted) {
        rows.push_back(
            {Cell::Keyword(a.ident()), Cell::Nil(), Cell::Long(a.datoms())});
        continue;
      }
      for (const v1::ValueCount& vc : a.value_counts()) {
        rows.push_back({Cell::Keyword(a.ident()), ToCell(vc.value()),
                        Cell::Long(vc.count())});
      }
    }
    if (rows.empty()) {
      return absl::NotFoundError("no statistics for :" + wanted);
    }
    WriteTable(sink.get(), options_.style, {"attribute", "value", "datoms"},
               std::move(rows));
    sink->Finish();
    return absl::OkStatus();
  }
  if (options_.style.format == OutputFormat::kTable) {
    const v1::TransactorStats& t = stats->transactor();
    const v1::StorageStats& s = stats->storage();
    std::string head =
        "Database \"" + options_.database + "\" at t " +
        std::to_string(stats->basis_tx() & kTxCounterMask) + " (tx " +
        std::to_string(stats->basis_tx()) + ", " +
        edn::FormatInstant(stats->basis_tx_instant_micros()) + ")\n" +
        "Transactor: " + std::to_string(t.transactions()) + " transactions (" +
        std::to_string(t.failed_transactions()) + " failed) in " +
        std::to_string(t.groups()) + " commits, " + std::to_string(t.datoms()) +
        " datoms, queue " + std::to_string(t.queue_depth()) + "\n" +
        "Storage: " + std::to_string(s.disk_size_bytes()) +
        " bytes on disk, ~" + std::to_string(s.estimated_keys()) +
        " keys, block cache " + std::to_string(s.block_cache_usage_bytes()) +
        " bytes (" + std::to_string(s.block_cache_hits()) + " hits, " +
        std::to_string(s.block_cache_misses()) + " misses)\n\n";
    sink->Write(head);
  }
  std::vector<std::vector<Cell>> rows;
  for (const v1::AttributeStats& a : stats->attributes()) {
    rows.push_back({Cell::Keyword(a.ident()), Cell::Long(a.datoms()),
                    Cell::Long(a.distinct_values())});
  }
  WriteTable(sink.get(), options_.style,
             {"attribute", "datoms", "distinct values"}, std::move(rows));
  sink->Finish();
  return absl::OkStatus();
}

absl::Status Shell::RunCluster() {
  std::vector<std::vector<Cell>> rows;
  for (const std::string& address : client_->addresses()) {
    v1::StatsRequest request;
    request.set_database(options_.database);
    client::CallOptions call = Call();
    call.timeout = std::chrono::seconds(3);
    absl::StatusOr<v1::StatsResponse> stats =
        client_->StatsAt(address, request, call);
    if (!stats.ok()) {
      rows.push_back({Cell::String(address), Cell::String("unreachable"),
                      Cell::Nil(), Cell::Nil(), Cell::Nil(), Cell::Nil(),
                      Cell::Nil(), Cell::Nil(),
                      Cell::String(std::string(stats.status().message()))});
      continue;
    }
    const v1::ReplicationStats& r = stats->replication();
    const bool follows = r.role() == "replica";
    rows.push_back({Cell::String(address),
                    Cell::String(r.role().empty() ? "single" : r.role()),
                    Cell::Long(static_cast<int64_t>(r.term())),
                    Cell::Long(stats->basis_tx() & kTxCounterMask),
                    follows ? Cell::Long(r.lag_tx()) : Cell::Nil(),
                    follows ? Cell::Long(r.lag_ms()) : Cell::Nil(),
                    Cell::String(r.primary()), Cell::String(r.durability()),
                    Cell::String(r.node_id().empty() ? std::string()
                                                     : "node " + r.node_id())});
  }
  std::unique_ptr<OutputSink> sink = NewSink();
  WriteTable(sink.get(), options_.style,
             {"node", "role", "term", "t", "lag tx", "lag ms", "primary",
              "durability", "note"},
             std::move(rows));
  sink->Finish();
  return absl::OkStatus();
}

absl::Status Shell::RunDbs() {
  absl::StatusOr<v1::ListDatabasesResponse> dbs =
      client_->ListDatabases(Call());
  if (!dbs.ok()) return dbs.status();
  completions_.databases.clear();
  std::vector<std::vector<Cell>> rows;
  for (const v1::DatabaseInfo& db : dbs->databases()) {
    completions_.databases.push_back(db.name());
    rows.push_back(
        {Cell::String(db.name() == options_.database ? "*" : ""),
         Cell::String(db.name()), Cell::Long(db.basis_tx() & kTxCounterMask),
         Cell::Ref(db.basis_tx()), Cell::Instant(db.basis_tx_instant_micros()),
         Cell::Long(static_cast<int64_t>(db.disk_size_bytes()))});
  }
  std::unique_ptr<OutputSink> sink = NewSink();
  WriteTable(sink.get(), options_.style,
             {"current", "name", "t", "basis tx", "last tx at", "disk bytes"},
             std::move(rows));
  sink->Finish();
  return absl::OkStatus();
}

absl::Status Shell::RunUse(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.size() != 1) return absl::InvalidArgumentError(".use takes DB");
  absl::StatusOr<v1::ListDatabasesResponse> dbs =
      client_->ListDatabases(Call());
  if (!dbs.ok()) return dbs.status();
  for (const v1::DatabaseInfo& db : dbs->databases()) {
    if (db.name() != words[0]) continue;
    options_.database = words[0];
    basis_ = Basis();
    attribute_names_.clear();
    RefreshCompletions();
    Info("Using database \"" + words[0] + "\" (t " +
         std::to_string(db.basis_tx() & kTxCounterMask) + ").");
    return absl::OkStatus();
  }
  return absl::NotFoundError("database \"" + words[0] +
                             "\" does not exist (.dbs lists them)");
}

absl::Status Shell::RunCreate(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.size() != 1) return absl::InvalidArgumentError(".create takes DB");
  v1::CreateDatabaseRequest request;
  request.set_name(words[0]);
  absl::StatusOr<v1::CreateDatabaseResponse> created =
      client_->CreateDatabase(request, Call());
  if (!created.ok()) return created.status();
  completions_.databases.push_back(words[0]);
  Info("Created database \"" + words[0] + "\" (.use " + words[0] +
       " to switch to it).");
  return absl::OkStatus();
}

absl::Status Shell::RunDrop(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.size() != 1) return absl::InvalidArgumentError(".drop takes DB");
  if (options_.interactive && editor_ != nullptr && isatty(STDIN_FILENO) &&
      !editor_->Confirm("Delete database \"" + words[0] +
                        "\" and all its data?")) {
    Info("Not deleted.");
    return absl::OkStatus();
  }
  v1::DeleteDatabaseRequest request;
  request.set_name(words[0]);
  absl::StatusOr<v1::DeleteDatabaseResponse> deleted =
      client_->DeleteDatabase(request, Call());
  if (!deleted.ok()) return deleted.status();
  completions_.databases.erase(
      std::remove(completions_.databases.begin(), completions_.databases.end(),
                  words[0]),
      completions_.databases.end());
  Info("Deleted database \"" + words[0] + "\".");
  if (words[0] == options_.database) {
    Info("That was the current database; .use another one.");
  }
  return absl::OkStatus();
}

absl::Status Shell::RunBackup(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.size() != 1 || words[0].empty() || words[0][0] != '/') {
    return absl::InvalidArgumentError(
        ".backup takes DIR: a new directory on the server, as an absolute "
        "path");
  }
  v1::BackupRequest request;
  request.set_database(options_.database);
  request.set_destination(words[0]);
  absl::StatusOr<v1::BackupResponse> backup = client_->Backup(request, Call());
  if (!backup.ok()) return backup.status();
  std::unique_ptr<OutputSink> sink = NewSink();
  WriteTable(
      sink.get(), options_.style,
      {"database", "destination", "t", "basis tx", "files", "bytes", "ms"},
      {{Cell::String(options_.database), Cell::String(words[0]),
        Cell::Long(backup->basis_tx() & kTxCounterMask),
        Cell::Ref(backup->basis_tx()), Cell::Long(backup->files()),
        Cell::Long(backup->bytes()),
        Cell::Long(backup->elapsed_micros() / 1000)}});
  sink->Finish();
  return absl::OkStatus();
}

absl::Status Shell::RunLog(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.empty() || words.size() > 2) {
    return absl::InvalidArgumentError(
        ".log takes FROM [TO]: transactions (tx ids or t) from FROM up to, "
        "not including, TO");
  }
  v1::TxRangeRequest request;
  request.set_database(options_.database);
  for (size_t i = 0; i < words.size(); ++i) {
    absl::StatusOr<TxPoint> point = ParseTxPoint(words[i]);
    if (!point.ok() || point->is_instant) {
      return absl::InvalidArgumentError(".log takes tx ids or t values: " +
                                        words[i]);
    }
    if (i == 0) {
      request.set_from_tx(point->tx);
    } else {
      request.set_to_tx(point->tx);
    }
  }
  if (attribute_names_.empty()) {
    absl::Status loaded = LoadAttributeNames();
    if (!loaded.ok()) return loaded;
  }
  std::unique_ptr<OutputSink> sink = NewSink();
  ResultWriter writer(sink.get(), options_.style, ResultShape::kRelation);
  writer.Begin({"t", "tx-instant", "e", "a", "v", "op"});
  absl::Status status = client_->TxRange(
      request,
      [&](const v1::TxRangeResponse& batch) {
        for (const v1::Transaction& tx : batch.transactions()) {
          for (const v1::Datom& d : tx.datoms()) {
            writer.AddRow({Cell::Long(tx.tx() & kTxCounterMask),
                           Cell::Instant(tx.tx_instant_micros()),
                           Cell::Ref(d.e()), AttributeCell(d.a()),
                           ToCell(d.v()), Op(d.added())});
          }
        }
        return !sink->closed();
      },
      Call());
  if (status.ok()) writer.End();
  sink->Finish();
  return status;
}

absl::Status Shell::RunWatch(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  v1::SubscribeRequest request;
  request.set_database(options_.database);
  if (words.size() > 1) return absl::InvalidArgumentError(".watch [FROM]");
  if (words.size() == 1) {
    absl::StatusOr<TxPoint> point = ParseTxPoint(words[0]);
    if (!point.ok() || point->is_instant) {
      return absl::InvalidArgumentError(".watch takes a tx id or t: " +
                                        words[0]);
    }
    request.set_from_tx(point->tx);
  }
  if (attribute_names_.empty()) {
    absl::Status loaded = LoadAttributeNames();
    if (!loaded.ok()) return loaded;
  }
  Info("Watching \"" + options_.database +
       "\" for transactions; Ctrl-C stops.");
  // Each transaction is printed (and flushed) as it arrives, never paged.
  WriterStyle style = options_.style;
  std::FILE* out = results();
  absl::Status status = client_->Subscribe(
      request,
      [&](const v1::SubscribeResponse& batch) {
        for (const v1::Transaction& tx : batch.transactions()) {
          bool schema_changed = false;
          OutputSink sink(out, "", 0, 0, &output_error_);
          std::vector<std::vector<Cell>> rows;
          for (const v1::Datom& d : tx.datoms()) {
            if (attribute_names_.empty() ||
                AttributeCell(d.a()).kind != Cell::Kind::kKeyword) {
              schema_changed = true;
            }
            rows.push_back({Cell::Ref(d.e()), AttributeCell(d.a()),
                            ToCell(d.v()), Op(d.added())});
          }
          if (style.format == OutputFormat::kTable) {
            sink.Write("tx " + std::to_string(tx.tx()) + " (t " +
                       std::to_string(tx.tx() & kTxCounterMask) + ") at " +
                       edn::FormatInstant(tx.tx_instant_micros()) + "\n");
            WriteTable(&sink, style, {"e", "a", "v", "op"}, std::move(rows));
          } else if (style.format == OutputFormat::kCsv) {
            WriterStyle csv = style;
            csv.header = false;
            for (auto& row : rows) {
              row.insert(row.begin(), Cell::Instant(tx.tx_instant_micros()));
              row.insert(row.begin(), Cell::Ref(tx.tx()));
            }
            WriteTable(&sink, csv, {"tx", "tx-instant", "e", "a", "v", "op"},
                       std::move(rows));
          } else {
            // One line per transaction (NDJSON / EDN lines) for pipelines.
            std::vector<Cell> datoms;
            for (auto& row : rows) {
              datoms.push_back(
                  Cell::Collection(Cell::Kind::kVector, std::move(row)));
            }
            Cell map = Cell::Collection(
                Cell::Kind::kMap,
                {RecordKey("tx", style.format), Cell::Ref(tx.tx()),
                 RecordKey("tx-instant", style.format),
                 Cell::Instant(tx.tx_instant_micros()),
                 RecordKey("datoms", style.format),
                 Cell::Collection(Cell::Kind::kVector, std::move(datoms))});
            sink.Write((style.format == OutputFormat::kJson ? ToJson(map)
                                                            : ToEdn(map)) +
                       "\n");
          }
          sink.Finish();
          if (sink.closed()) return false;
          // The names only feed tab completion: when they cannot be
          // reloaded, completion offers the old ones and the import
          // itself has succeeded.
          if (schema_changed) LoadAttributeNames().IgnoreError();
        }
        return true;
      },
      Call());
  if (status.code() == absl::StatusCode::kCancelled && canceller_ != nullptr &&
      canceller_->cancelled()) {
    Info("Stopped watching.");
    return absl::OkStatus();
  }
  return status;
}

absl::Status Shell::RunRead(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.size() != 1) return absl::InvalidArgumentError(".read takes FILE");
  if (read_depth_ >= 16) {
    return absl::FailedPreconditionError(".read files nest too deep");
  }
  std::FILE* file = std::fopen(words[0].c_str(), "r");
  if (file == nullptr) {
    return absl::NotFoundError("cannot open " + words[0] + ": " +
                               std::strerror(errno));
  }
  ScriptReader reader(file);
  ++read_depth_;
  // The file's statements report their own errors; this one only says it
  // stopped.
  client::Canceller* outer = canceller_;
  const bool ok = RunScript(&reader, words[0]);
  canceller_ = outer;
  --read_depth_;
  std::fclose(file);
  if (!ok) return absl::AbortedError(".read " + words[0] + " stopped");
  return absl::OkStatus();
}

absl::Status Shell::RunOutput(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.size() > 1) return absl::InvalidArgumentError(".output [FILE]");
  if (output_ != nullptr) {
    std::fclose(output_);
    output_ = nullptr;
  }
  if (words.empty() || words[0] == "stdout" || words[0] == "-") {
    Info("Results go to the terminal.");
    return absl::OkStatus();
  }
  output_ = std::fopen(words[0].c_str(), "w");
  if (output_ == nullptr) {
    return absl::PermissionDeniedError("cannot write " + words[0] + ": " +
                                       std::strerror(errno));
  }
  output_name_ = words[0];
  Info("Results go to " + words[0] + " (.output alone to stop).");
  return absl::OkStatus();
}

absl::Status Shell::RunSetting(const std::string& name, std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (name == "format") {
    if (words.empty()) {
      Info("Format: " + std::string(OutputFormatName(options_.style.format)));
      return absl::OkStatus();
    }
    if (words.size() != 1 ||
        !ParseOutputFormat(words[0], &options_.style.format)) {
      return absl::InvalidArgumentError(
          ".format takes table, edn, json or csv");
    }
    Info("Format is " + words[0] + ".");
    return absl::OkStatus();
  }
  bool* flag = &options_.pager;
  std::string what = "Pager";
  if (name == "timer") {
    flag = &timer_;
    what = "Timing";
  } else if (name == "expanded") {
    flag = &options_.style.expanded;
    what = "Expanded display";
  }
  if (words.size() == 1 && words[0] == "toggle") {  // psql's bare \timing, \x
    *flag = !*flag;
    Info(what + " is " + (*flag ? "on." : "off."));
    return absl::OkStatus();
  }
  if (words.empty()) {
    Info(what + " is " + (*flag ? "on." : "off."));
    return absl::OkStatus();
  }
  if (words.size() != 1 || (words[0] != "on" && words[0] != "off")) {
    return absl::InvalidArgumentError("." + name + " takes on or off");
  }
  *flag = words[0] == "on";
  Info(what + " is " + words[0] + ".");
  return absl::OkStatus();
}

}  // namespace mentat::cli
