#include "shell/shell.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "mentat/edn/edn_inst.h"
#include "mentat/edn/edn_scan.h"
#include "shell/command.h"
#include "shell/error_display.h"
#include "shell/interrupts.h"
#include "shell/line_editor.h"
#include "shell/wire_cell.h"

namespace mentat::cli {
namespace {

constexpr int64_t kTxCounterMask = (int64_t{1} << 42) - 1;

// The server's message, with a word on what kind of failure it is when the
// message alone would not say.
std::string Describe(const absl::Status& status) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return "server unavailable: " + message;
    case absl::StatusCode::kUnauthenticated:
      return "not authenticated: " + message;
    case absl::StatusCode::kPermissionDenied:
      return "permission denied: " + message;
    case absl::StatusCode::kDeadlineExceeded:
      return "timed out: " + message;
    case absl::StatusCode::kResourceExhausted:
      return "resource exhausted: " + message;
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnknown:
      return "server error: " + message;
    default:
      return message;
  }
}

ResultShape ShapeOf(v1::FindKind kind) {
  switch (kind) {
    case v1::FIND_COLLECTION:
      return ResultShape::kCollection;
    case v1::FIND_TUPLE:
      return ResultShape::kTuple;
    case v1::FIND_SCALAR:
      return ResultShape::kScalar;
    default:
      return ResultShape::kRelation;
  }
}

std::string RandomRequestId() {
  static std::mt19937_64 rng(std::random_device{}());
  char buf[40];
  std::snprintf(buf, sizeof buf, "cli-%016llx%016llx",
                static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace

Shell::Shell(ShellOptions options, std::unique_ptr<client::Client> client)
    : options_(std::move(options)), client_(std::move(client)) {}

Shell::~Shell() {
  if (output_ != nullptr) std::fclose(output_);
}

absl::Status Shell::Connect() {
  absl::Status reachable =
      client_->ConnectOnce(std::chrono::milliseconds(5000));
  if (!reachable.ok()) {
    return absl::UnavailableError(
        std::string(reachable.message()) +
        ". Is mentatd running? `make run` in the repository starts one on "
        "127.0.0.1:7878 (or: mentatd --data-dir DIR); --addr or "
        "$MENTAT_ADDR names another server");
  }
  client::CallOptions call;
  call.timeout = std::chrono::milliseconds(10000);
  absl::StatusOr<v1::ListDatabasesResponse> dbs = client_->ListDatabases(call);
  if (!dbs.ok())
    return absl::Status(dbs.status().code(), Describe(dbs.status()));
  const v1::DatabaseInfo* current = nullptr;
  for (const v1::DatabaseInfo& db : dbs->databases()) {
    if (db.name() == options_.database) current = &db;
  }
  if (current == nullptr) {
    return absl::NotFoundError("database \"" + options_.database +
                               "\" does not exist (see .dbs, .create)");
  }
  if (options_.interactive) {
    std::string hello =
        "Connected to mentatd at " + client_->options().address +
        ", database \"" + options_.database + "\" (basis t " +
        std::to_string(current->basis_tx() & kTxCounterMask) + ", " +
        std::to_string(dbs->databases_size()) +
        (dbs->databases_size() == 1 ? " database" : " databases") +
        ").\nType .help for commands, \\q or Ctrl-D to quit.\n";
    std::fputs(hello.c_str(), stdout);
  }
  for (const v1::DatabaseInfo& db : dbs->databases()) {
    completions_.databases.push_back(db.name());
  }
  RefreshCompletions();
  return absl::OkStatus();
}

void Shell::RefreshCompletions() {
  if (!options_.interactive) return;
  client::CallOptions call;
  call.timeout = std::chrono::milliseconds(5000);
  v1::SchemaRequest request;
  request.set_database(options_.database);
  absl::StatusOr<v1::SchemaResponse> schema = client_->Schema(request, call);
  if (schema.ok()) {
    completions_.idents.clear();
    for (const v1::Ident& ident : schema->idents()) {
      completions_.idents.push_back(":" + ident.ident());
    }
  }
  absl::StatusOr<v1::ListDatabasesResponse> dbs = client_->ListDatabases(call);
  if (dbs.ok()) {
    completions_.databases.clear();
    for (const v1::DatabaseInfo& db : dbs->databases()) {
      completions_.databases.push_back(db.name());
    }
  }
}

int Shell::RunInteractive() {
  editor_ = std::make_unique<LineEditor>(
      DefaultHistoryFile(),
      [this](std::string_view before, std::string_view word) {
        return CompletionCandidates(ClassifyCompletion(before, word), before,
                                    word, completions_);
      });
  Statement statement;
  while (!quit_) {
    const std::string prompt = Prompt();
    std::string continuation = prompt;
    continuation.replace(continuation.size() - 3, 1, "-");
    if (!editor_->Read(prompt, continuation, &statement)) break;
    // Run has printed the error; the prompt comes back for the next
    // statement (only a script stops at its first error).
    Run(statement, "").IgnoreError();
  }
  editor_.reset();
  return 0;
}

bool Shell::RunScript(ScriptReader* reader, const std::string& source) {
  bool all_ok = true;
  while (!quit_) {
    std::optional<Statement> statement = reader->Next();
    if (!statement) break;
    if (!Run(*statement, source).ok()) {
      all_ok = false;
      if (!options_.keep_going) return false;
    }
  }
  return all_ok;
}

std::string Shell::Prompt() const {
  std::string prompt = options_.database;
  if (!basis_.label.empty()) prompt += "@" + basis_.label;
  if (!with_tx_data_.empty()) prompt += "+with";
  return prompt + "=> ";
}

client::CallOptions Shell::Call() {
  client::CallOptions call;
  call.canceller = canceller_;
  return call;
}

void Shell::Info(const std::string& text) {
  if (!options_.interactive) return;
  std::fputs(text.c_str(), stdout);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::unique_ptr<OutputSink> Shell::NewSink() {
  std::string pager;
  int rows = 0, columns = 0;
  if (options_.pager && options_.interactive && output_ == nullptr &&
      isatty(STDOUT_FILENO)) {
    winsize ws = {};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) {
      rows = ws.ws_row;
      columns = ws.ws_col;
      pager = DefaultPager();
    }
  }
  return std::make_unique<OutputSink>(results(), pager, rows, columns,
                                      &output_error_);
}

absl::Status Shell::Run(const Statement& statement, const std::string& source) {
  request_offset_ = 0;
  output_error_ = absl::OkStatus();
  client::Canceller canceller;
  canceller_ = &canceller;
  const auto start = std::chrono::steady_clock::now();
  absl::Status status;
  {
    const bool interactive = options_.interactive;
    Interrupts::CancelScope scope([&canceller, interactive] {
      canceller.Cancel();
      // The terminal echoed ^C where the cursor was; what follows (the
      // error, "Stopped watching.") starts on a line of its own.
      if (interactive) {
        ssize_t n = write(STDOUT_FILENO, "\n", 1);
        (void)n;
      }
    });
    status = Dispatch(statement);
    if (!status.ok() && scope.interrupted()) {
      status = absl::CancelledError("cancelled (Ctrl-C)");
    }
  }
  canceller_ = nullptr;
  if (output_ != nullptr && std::fflush(output_) != 0 && output_error_.ok()) {
    output_error_ =
        absl::AbortedError(std::string("cannot write ") + output_name_ + ": " +
                           std::strerror(errno));
  }
  // Results that could not be written fail the statement (a full disk
  // under .output or a redirected stdout), as a failed call does.
  if (status.ok()) status = output_error_;
  if (timer_) {
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "Time: %.3f ms\n", ms);
    std::fputs(buf, options_.interactive ? stdout : stderr);
    std::fflush(options_.interactive ? stdout : stderr);
  }
  if (!status.ok()) {
    std::fflush(stdout);
    ErrorContext ctx;
    ctx.input = statement.text;
    ctx.request_offset = request_offset_;
    ctx.first_line = statement.first_line;
    if (!source.empty()) {
      ctx.source = source + ":" + std::to_string(statement.first_line) + ": ";
    }
    ctx.color = options_.style.color && isatty(STDERR_FILENO);
    std::fputs(RenderError(Describe(status), ctx).c_str(), stderr);
    std::fflush(stderr);
  }
  return status;
}

absl::Status Shell::Dispatch(const Statement& statement) {
  std::optional<CommandLine> cmd = ParseCommandLine(statement.text);
  // Input that ended inside a bracket or a string (the end of a script or
  // of a -c) is reported here: nothing of it would run.
  if (!cmd || !IsCompleteStatement(statement.text) ||
      !edn::IsCompleteEdn(cmd->args)) {
    const std::string_view edn = cmd ? cmd->args : statement.text;
    const edn::EdnScan scan = edn::ScanEdn(edn);
    if (scan.depth > 0 || scan.in_string) {
      request_offset_ = (cmd ? cmd->args_offset : 0) + scan.unclosed_at;
      return absl::InvalidArgumentError(
          scan.in_string && scan.depth == 0
              ? "line 1, column 1: this string is never closed"
              : "line 1, column 1: this bracket is never closed");
    }
  }
  if (cmd && FindCommand(cmd->name) == nullptr) {
    return UnknownCommand(*cmd);
  }
  if (cmd) return RunCommand(cmd->name, cmd->args, cmd->args_offset);
  return RunEdn(statement.text);
}

std::vector<Shell::Arg> Shell::EdnArgs(std::string_view args,
                                       size_t args_offset) const {
  std::vector<Arg> out;
  for (const edn::EdnFormSpan& span : edn::ScanEdn(args).forms) {
    out.push_back({args.substr(span.begin, span.end - span.begin),
                   args_offset + span.begin});
  }
  return out;
}

absl::Status Shell::RunCommand(const std::string& name, std::string_view args,
                               size_t args_offset) {
  if (name == "q") return RunQuery(EdnArgs(args, args_offset));
  if (name == "t") {
    std::vector<Arg> forms = EdnArgs(args, args_offset);
    if (forms.size() != 1) {
      return absl::InvalidArgumentError(
          ".t takes one vector of tx forms: .t [[:db/add ...] {...}]");
    }
    return RunTransact(forms[0]);
  }
  if (name == "dry-run") {
    std::vector<Arg> forms = EdnArgs(args, args_offset);
    if (forms.size() != 1) {
      return absl::InvalidArgumentError(
          ".dry-run takes one vector of tx forms: .dry-run [[:db/add ...]]");
    }
    return RunTransact(forms[0], /*dry_run=*/true);
  }
  if (name == "with") return SetWith(EdnArgs(args, args_offset));
  if (name == "pull") return RunPull(EdnArgs(args, args_offset));
  if (name == "explain") return RunExplain(EdnArgs(args, args_offset));
  if (name == "as-of" || name == "since" || name == "history" ||
      name == "latest") {
    return SetBasis(name, args);
  }
  if (name == "schema") return RunSchema(args);
  if (name == "stats") return RunStats(args);
  if (name == "cluster") return RunCluster();
  if (name == "dbs") return RunDbs();
  if (name == "use") return RunUse(args);
  if (name == "create") return RunCreate(args);
  if (name == "drop") return RunDrop(args);
  if (name == "backup") return RunBackup(args);
  if (name == "log") return RunLog(args);
  if (name == "watch") return RunWatch(args);
  if (name == "import") return RunImport(args);
  if (name == "export") return RunExport(args);
  if (name == "read") return RunRead(args);
  if (name == "output") return RunOutput(args);
  if (name == "timer" || name == "format" || name == "pager" ||
      name == "expanded") {
    return RunSetting(name, args);
  }
  if (name == "help") {
    PrintHelp();
    return absl::OkStatus();
  }
  if (name == "quit") {
    quit_ = true;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("unknown command ." + name +
                                    " (.help lists them)");
}

absl::Status Shell::UnknownCommand(const CommandLine& cmd) const {
  std::string message = "unknown command " + cmd.typed;
  // A psql command is not a typo of ours: say which of psql's work.
  const std::string suggestion =
      cmd.typed.starts_with("\\") ? "" : SuggestCommand(cmd.name);
  if (!suggestion.empty()) {
    message += "; did you mean " + suggestion + "?";
  } else if (cmd.typed.starts_with("\\")) {
    message +=
        "; commands start with a dot here (psql's \\d [ATTR], \\l, \\c DB, "
        "\\timing, \\x and \\q work too)";
  }
  return absl::InvalidArgumentError(message + " (.help lists every command)");
}

void Shell::PrintHelp() {
  std::string out;
  size_t width = 0;
  for (const CommandSpec& spec : AllCommands()) {
    width = std::max(width, spec.name.size() + spec.usage.size() + 2);
  }
  for (const CommandSpec& spec : AllCommands()) {
    std::string left = "." + std::string(spec.name);
    if (!spec.usage.empty()) left += " " + std::string(spec.usage);
    left.resize(width + 1, ' ');
    out += left + "  " + std::string(spec.help) + "\n";
  }
  out +=
      "\nPlain EDN runs too: [:find ...] or {:find ...} is a query (forms "
      "after it are\nits inputs), any other vector is a transaction. Input "
      "continues over lines\nuntil the brackets balance. Ctrl-C cancels a "
      "running command.\n"
      "psql's \\d [ATTR], \\l, \\c DB, \\timing, \\x and \\q, and "
      "sqlite3's .mode,\n.tables and .databases, do what .schema, .dbs, .use, "
      ".timer, .expanded,\n.quit and .format do.\n";
  std::unique_ptr<OutputSink> sink = NewSink();
  sink->Write(out);
  sink->Finish();
}

absl::Status Shell::RunEdn(std::string_view text) {
  const std::vector<Arg> forms = EdnArgs(text, 0);
  if (forms.empty()) return absl::OkStatus();
  switch (ClassifyForm(forms[0].text)) {
    case FormKind::kQuery:
      return RunQuery(forms);
    case FormKind::kTransaction:
      if (forms.size() > 1) {
        request_offset_ = forms[1].offset;
        return absl::InvalidArgumentError(
            "line 1, column 1: a transaction is one vector of tx forms; "
            "this follows it");
      }
      return RunTransact(forms[0]);
    case FormKind::kOther:
      break;
  }
  request_offset_ = forms[0].offset;
  return absl::InvalidArgumentError(
      "line 1, column 1: expected a query ([:find ...] or {:find ...}), a "
      "transaction (a vector of tx forms) or a .command (.help lists them)");
}

void Shell::FillBasis(v1::Basis* basis) const {
  basis->set_kind(static_cast<v1::Basis::Kind>(basis_.kind));
  if (basis_.kind == v1::Basis::AS_OF || basis_.kind == v1::Basis::SINCE) {
    if (basis_.point.is_instant) {
      basis->set_instant_micros(basis_.point.instant_micros);
    } else {
      basis->set_tx(basis_.point.tx);
    }
  }
}

absl::Status Shell::SetBasis(const std::string& name, std::string_view args) {
  const std::string_view arg = TrimEdn(args);
  if (name == "latest" || name == "history") {
    if (!arg.empty()) {
      return absl::InvalidArgumentError("." + name + " takes no argument");
    }
    basis_ = Basis();
    if (name == "history") {
      basis_.kind = v1::Basis::HISTORY;
      basis_.label = "history";
      Info("Reading every assertion and retraction (.latest to go back).");
    } else {
      Info("Reading the latest database.");
    }
    return absl::OkStatus();
  }
  if (arg.empty()) {
    return absl::InvalidArgumentError(
        "." + name + " takes a tx id, a t, or an instant (#inst \"...\")");
  }
  absl::StatusOr<TxPoint> point = ParseTxPoint(arg);
  if (!point.ok()) return point.status();
  basis_.kind = name == "as-of" ? v1::Basis::AS_OF : v1::Basis::SINCE;
  basis_.point = *point;
  if (point->is_instant) {
    basis_.label = name + " " + edn::FormatInstant(point->instant_micros);
  } else {
    basis_.label = name + " " + std::to_string(point->tx);
  }
  Info(name == "as-of" ? "Reading the database as of " + std::string(arg) +
                             " (.latest to go back)."
                       : "Reading only what changed after " + std::string(arg) +
                             " (.latest to go back).");
  return absl::OkStatus();
}

absl::Status Shell::SetWith(const std::vector<Arg>& forms) {
  if (forms.empty()) {
    with_tx_data_.clear();
    Info("Reading without speculative transactions.");
    return absl::OkStatus();
  }
  for (const Arg& form : forms) with_tx_data_.emplace_back(form.text);
  Info("Queries, pulls and plans read as if " +
       std::to_string(with_tx_data_.size()) +
       " more transaction(s) were committed; nothing is (.with alone "
       "stops).");
  return absl::OkStatus();
}

absl::Status Shell::RunQuery(const std::vector<Arg>& forms) {
  if (forms.empty()) {
    return absl::InvalidArgumentError(
        ".q takes a query and its inputs: .q [:find ?e :in $ ?x :where ...] "
        "\"x\"");
  }
  v1::QueryRequest request;
  request.set_database(options_.database);
  request.set_query(std::string(forms[0].text));
  for (size_t i = 1; i < forms.size(); ++i) {
    request.add_inputs()->set_edn(std::string(forms[i].text));
  }
  FillBasis(request.mutable_basis());
  for (const std::string& tx : with_tx_data_) request.add_with_tx_data(tx);
  request_offset_ = forms[0].offset;

  std::unique_ptr<OutputSink> sink = NewSink();
  std::unique_ptr<ResultWriter> writer;
  absl::Status status = client_->Query(
      request,
      [&](const v1::QueryResponse& batch) {
        if (writer == nullptr) {
          writer = std::make_unique<ResultWriter>(sink.get(), options_.style,
                                                  ShapeOf(batch.find_kind()));
          writer->Begin({batch.columns().begin(), batch.columns().end()});
        }
        std::vector<Cell> row;
        for (const v1::Row& r : batch.rows()) {
          row.clear();
          row.reserve(r.values_size());
          for (const v1::Value& v : r.values()) row.push_back(ToCell(v));
          writer->AddRow(std::move(row));
        }
        return !sink->closed();
      },
      Call());
  if (status.ok() && writer != nullptr) writer->End();
  sink->Finish();
  return status;
}

absl::Status Shell::RunTransact(const Arg& form, bool dry_run) {
  v1::TransactRequest request;
  request.set_database(options_.database);
  request.set_tx_data(std::string(form.text));
  if (dry_run) {
    request.set_dry_run(true);
  } else {
    request.set_request_id(RandomRequestId());
  }
  request_offset_ = form.offset;
  absl::StatusOr<v1::TransactResponse> report =
      client_->Transact(request, Call());
  if (!report.ok()) return report.status();
  if (!dry_run && form.text.find(":db/ident") != std::string_view::npos) {
    attribute_names_.clear();
    RefreshCompletions();
  }

  std::vector<std::pair<std::string, int64_t>> tempids(
      report->tempids().begin(), report->tempids().end());
  std::sort(tempids.begin(), tempids.end());
  std::unique_ptr<OutputSink> sink = NewSink();
  if (options_.style.format == OutputFormat::kTable) {
    std::string out = std::string(dry_run ? "Dry run, nothing committed: tx "
                                          : "Transacted tx ") +
                      std::to_string(report->tx()) + " (t " +
                      std::to_string(report->tx() & kTxCounterMask) + ") at " +
                      edn::FormatInstant(report->tx_instant_micros()) + ": " +
                      std::to_string(report->datom_count()) + " datoms.\n";
    size_t shown = 0;
    for (const auto& [name, id] : tempids) {
      if (name == "datomic.tx") continue;
      if (++shown > 20) {
        out += "  ... and " + std::to_string(tempids.size() - 20) +
               " more tempids\n";
        break;
      }
      out += "  \"" + name + "\" -> " + std::to_string(id) + "\n";
    }
    sink->Write(out);
  } else {
    std::vector<Cell> ids;
    for (const auto& [name, id] : tempids) {
      ids.push_back(Cell::String(name));
      ids.push_back(Cell::Ref(id));
    }
    const std::vector<std::string> columns = {"tx", "t", "tx-instant",
                                              "datoms"};
    std::vector<Cell> row = {Cell::Ref(report->tx()),
                             Cell::Long(report->tx() & kTxCounterMask),
                             Cell::Instant(report->tx_instant_micros()),
                             Cell::Long(report->datom_count())};
    if (options_.style.format == OutputFormat::kCsv) {
      ResultWriter writer(sink.get(), options_.style, ResultShape::kRelation);
      writer.Begin(columns);
      writer.AddRow(std::move(row));
      writer.End();
    } else {
      std::vector<Cell> map;
      for (size_t i = 0; i < columns.size(); ++i) {
        map.push_back(RecordKey(columns[i], options_.style.format));
        map.push_back(row[i]);
      }
      map.push_back(RecordKey("tempids", options_.style.format));
      map.push_back(Cell::Collection(Cell::Kind::kMap, std::move(ids)));
      WriteValue(sink.get(), options_.style,
                 Cell::Collection(Cell::Kind::kMap, std::move(map)));
    }
  }
  sink->Finish();
  return absl::OkStatus();
}

absl::Status Shell::RunPull(const std::vector<Arg>& forms) {
  if (forms.size() != 2) {
    return absl::InvalidArgumentError(
        ".pull takes a pattern and an entity: .pull [*] [:user/email "
        "\"a@b.c\"]");
  }
  absl::StatusOr<v1::EntityRef> entity = ParseEntity(forms[1].text);
  if (!entity.ok()) return entity.status();
  v1::PullRequest request;
  request.set_database(options_.database);
  request.set_pattern(std::string(forms[0].text));
  *request.mutable_entity() = std::move(*entity);
  FillBasis(request.mutable_basis());
  for (const std::string& tx : with_tx_data_) request.add_with_tx_data(tx);
  request_offset_ = forms[0].offset;
  absl::StatusOr<v1::PullResponse> response = client_->Pull(request, Call());
  if (!response.ok()) return response.status();
  std::unique_ptr<OutputSink> sink = NewSink();
  WriteValue(sink.get(), options_.style, ToCell(response->result()));
  sink->Finish();
  return absl::OkStatus();
}

absl::Status Shell::RunExplain(const std::vector<Arg>& given) {
  std::vector<Arg> forms = given;
  bool profile = false;
  if (!forms.empty() &&
      (forms[0].text == "profile" || forms[0].text == "analyze")) {
    profile = true;
    forms.erase(forms.begin());
  }
  if (forms.empty()) {
    return absl::InvalidArgumentError(
        ".explain takes a query (and its inputs); .explain profile QUERY "
        "also runs it");
  }
  v1::ExplainRequest request;
  request.set_database(options_.database);
  request.set_query(std::string(forms[0].text));
  for (size_t i = 1; i < forms.size(); ++i) {
    request.add_inputs()->set_edn(std::string(forms[i].text));
  }
  FillBasis(request.mutable_basis());
  for (const std::string& tx : with_tx_data_) request.add_with_tx_data(tx);
  request.set_profile(profile);
  request_offset_ = forms[0].offset;
  absl::StatusOr<v1::ExplainResponse> response =
      client_->Explain(request, Call());
  if (!response.ok()) return response.status();
  std::string plan = response->plan();
  if (plan.empty() || plan.back() != '\n') plan.push_back('\n');
  std::unique_ptr<OutputSink> sink = NewSink();
  sink->Write(plan);
  sink->Finish();
  return absl::OkStatus();
}

}  // namespace mentat::cli
