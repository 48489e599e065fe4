// .import and .export.

#include <unistd.h>

#include <cstdio>

#include "shell/command.h"
#include "shell/exporter.h"
#include "shell/importer.h"
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
  for (size_t i = 0; i < words.size(); ++i) {
    if ((words[i] == "--inflight" || words[i] == "--batch") &&
        i + 1 < words.size()) {
      int* target = words[i] == "--inflight" ? &options.inflight
                                             : &options.entities_per_tx;
      if (!ParseCount(words[i + 1], target)) {
        return absl::InvalidArgumentError(words[i] + " takes a count");
      }
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
        ".import FILE [--inflight N] [--batch N]: EDN transactions or NDJSON "
        "entities");
  }
  options.progress = isatty(STDERR_FILENO) && options_.interactive;
  absl::StatusOr<ImportSummary> summary =
      ImportFile(client_.get(), path, options, canceller_);
  if (!summary.ok()) return summary.status();
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
