#include "shell/completion.h"

#include <algorithm>

#include "shell/command.h"

namespace mentat::cli {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Query and transaction keywords offered with the schema's idents.
constexpr std::string_view kLanguageKeywords[] = {
    ":find",
    ":where",
    ":in",
    ":with",
    ":keys",
    ":strs",
    ":syms",
    ":limit",
    ":offset",
    ":db/id",
    ":db/add",
    ":db/retract",
    ":db/retractEntity",
    ":db/cas",
    ":db/ident",
    ":db/valueType",
    ":db/cardinality",
    ":db/unique",
    ":db/index",
    ":db/doc",
    ":db/isComponent",
    ":db/noHistory",
    ":db/fulltext",
    ":db/txInstant",
    ":db.type/ref",
    ":db.type/keyword",
    ":db.type/string",
    ":db.type/long",
    ":db.type/double",
    ":db.type/boolean",
    ":db.type/instant",
    ":db.type/uuid",
    ":db.type/bigint",
    ":db.type/bigdec",
    ":db.type/bytes",
    ":db.cardinality/one",
    ":db.cardinality/many",
    ":db.unique/identity",
    ":db.unique/value",
};

// The first word of the line if it is a command, without its dot.
std::string_view CommandOf(std::string_view before) {
  size_t i = 0;
  while (i < before.size() && (before[i] == ' ' || before[i] == '\t')) ++i;
  if (i >= before.size() || (before[i] != '.' && before[i] != '\\')) return {};
  const size_t begin = i + 1;
  while (i < before.size() && before[i] != ' ' && before[i] != '\t') ++i;
  if (i >= before.size()) return {};  // still typing the command itself
  return before.substr(begin, i - begin);
}

}  // namespace

CompletionKind ClassifyCompletion(std::string_view before,
                                  std::string_view word) {
  const bool line_start =
      before.find_first_not_of(" \t") == std::string_view::npos;
  if (line_start && (StartsWith(word, ".") || StartsWith(word, "\\"))) {
    return CompletionKind::kCommand;
  }
  const std::string_view command = CommandOf(before);
  if (command == "use" || command == "drop") return CompletionKind::kDatabase;
  if (command == "import" || command == "export" || command == "read" ||
      command == "output") {
    return CompletionKind::kFile;
  }
  if (command == "format" || command == "timer" || command == "pager" ||
      command == "expanded") {
    return CompletionKind::kWord;
  }
  if (StartsWith(word, ":")) return CompletionKind::kKeyword;
  return CompletionKind::kNone;
}

std::vector<std::string> CompletionCandidates(
    CompletionKind kind, std::string_view before, std::string_view word,
    const CompletionSources& sources) {
  std::vector<std::string> out;
  const auto offer = [&](std::string_view candidate) {
    if (StartsWith(candidate, word)) out.emplace_back(candidate);
  };
  switch (kind) {
    case CompletionKind::kNone:
    case CompletionKind::kFile:
      break;
    case CompletionKind::kCommand:
      for (const CommandSpec& spec : AllCommands()) {
        offer("." + std::string(spec.name));
      }
      offer(".exit");
      break;
    case CompletionKind::kDatabase:
      for (const std::string& db : sources.databases) offer(db);
      break;
    case CompletionKind::kWord: {
      const std::string_view command = CommandOf(before);
      if (command == "format") {
        for (std::string_view w : {"table", "edn", "json", "csv"}) offer(w);
      } else {
        for (std::string_view w : {"on", "off"}) offer(w);
      }
      break;
    }
    case CompletionKind::kKeyword:
      for (const std::string& ident : sources.idents) offer(ident);
      for (std::string_view k : kLanguageKeywords) offer(k);
      break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace mentat::cli
