// .import and .export.

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "shell/command.h"
#include "shell/csv_rows.h"
#include "shell/exporter.h"
#include "shell/importer.h"
#include "shell/interrupts.h"
#include "shell/progress_bar.h"
#include "shell/shell.h"

namespace mentat::cli {
namespace {

bool ParseCount(const std::string& text, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v < 1 || v > 100000) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

absl::Status Shell::RunImport(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  ImportOptions options;
  options.database = options_.database;
  options.inflight = options_.import_inflight;
  std::string path;
  // The options as typed, but --skip: a stopped import's resume command.
  std::string resume_options;
  for (size_t i = 0; i < words.size(); ++i) {
    if ((words[i] == "--inflight" || words[i] == "--batch") &&
        i + 1 < words.size()) {
      int* target = words[i] == "--inflight" ? &options.inflight
                                             : &options.entities_per_tx;
      if (!ParseCount(words[i + 1], target)) {
        return absl::InvalidArgumentError(words[i] + " takes a count");
      }
      resume_options += " " + words[i] + " " + words[i + 1];
      ++i;
    } else if (words[i] == "--skip" && i + 1 < words.size()) {
      char* end = nullptr;
      const long long n = std::strtoll(words[i + 1].c_str(), &end, 10);
      if (end == words[i + 1].c_str() || *end != '\0' || n < 0) {
        return absl::InvalidArgumentError(
            "--skip takes the count of transactions to pass over");
      }
      options.skip = n;
      ++i;
    } else if (words[i] == "--map" && i + 1 < words.size()) {
      absl::StatusOr<std::pair<std::string, std::string>> map =
          ParseColumnMap(words[i + 1]);
      if (!map.ok()) return map.status();
      options.csv_map.push_back(*std::move(map));
      resume_options += " --map " + words[i + 1];
      ++i;
    } else if (path.empty()) {
      path = words[i];
    } else {
      path.clear();
      break;
    }
  }
  if (path.empty()) {
    return absl::InvalidArgumentError(
        ".import FILE [--inflight N] [--batch N] [--skip N] "
        "[--map COLUMN=:ns/attr]...: EDN transactions, NDJSON entities or "
        "CSV rows (a header naming attributes)");
  }
  options.progress = isatty(STDERR_FILENO) && options_.interactive;
  // Ctrl-C once: stop sending, let the server finish what it was sent and
  // say what is committed; twice: cancel at once.
  std::atomic<bool> stop{false};
  std::atomic<int> presses{0};
  options.stop = &stop;
  client::Canceller* canceller = canceller_;
  absl::StatusOr<ImportSummary> summary;
  {
    Interrupts::CancelScope scope([&stop, &presses, canceller] {
      if (presses.fetch_add(1) == 0) {
        stop.store(true);
        const char kNote[] =
            "\nStopping the import: the server finishes what it was sent "
            "(Ctrl-C again cancels at once)...\n";
        ssize_t n = write(STDERR_FILENO, kNote, sizeof kNote - 1);
        (void)n;
      } else if (canceller != nullptr) {
        canceller->Cancel();
      }
    });
    summary = ImportFile(client_.get(), path, options, canceller_);
  }
  if (!summary.ok()) return summary.status();
  if (summary->stopped) {
    const int64_t committed = options.skip + summary->transactions;
    return absl::CancelledError(
        "import stopped (Ctrl-C): the first " + std::to_string(committed) +
        " transactions of " + path + " are committed" +
        (summary->last_line > 0 ? " (the last starts at line " +
                                      std::to_string(summary->last_line) + ")"
                                : std::string()) +
        ", " + std::to_string(summary->datoms) + " datoms in this run" +
        (summary->basis_tx > 0 ? ", basis " + std::to_string(summary->basis_tx)
                               : std::string()) +
        "; nothing after them was sent. To go on: .import " + path +
        resume_options + " --skip " + std::to_string(committed));
  }
  attribute_names_.clear();
  RefreshCompletions();
  const double rate =
      summary->seconds > 0
          ? static_cast<double>(summary->datoms) / summary->seconds
          : 0;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", summary->seconds);
  Info("Imported " + std::to_string(summary->transactions) + " transactions, " +
       std::to_string(summary->datoms) + " datoms (" +
       HumanBytes(summary->bytes) + ") from " + path + " in " + seconds +
       " s, " + HumanCount(rate) + " datoms/s" +
       (summary->retried > 0
            ? " (" + std::to_string(summary->retried) + " retried alone)"
            : std::string()) +
       ".");
  return absl::OkStatus();
}

absl::Status Shell::RunExport(std::string_view args) {
  const std::vector<std::string> words = SplitWords(args);
  if (words.size() != 1) return absl::InvalidArgumentError(".export FILE");
  ExportOptions options;
  options.database = options_.database;
  FillBasis(&options.basis);
  absl::StatusOr<ExportSummary> summary =
      ExportDatabase(client_.get(), words[0], options, canceller_);
  if (!summary.ok()) return summary.status();
  Info("Exported " + std::to_string(summary->entities) + " entities, " +
       std::to_string(summary->datoms) + " datoms in " +
       std::to_string(summary->transactions) + " transactions to " + words[0] +
       (basis_.label.empty() ? "" : " (" + basis_.label + ")") + "." +
       (summary->skipped > 0 ? " Left out " + std::to_string(summary->skipped) +
                                   " refs to transaction entities."
                             : ""));
  return absl::OkStatus();
}

}  // namespace mentat::cli
