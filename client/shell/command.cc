#include "shell/command.h"

#include <algorithm>

#include "mentat/base/closest_name.h"

namespace mentat::cli {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',';
}

}  // namespace

const std::vector<CommandSpec>& AllCommands() {
  static const std::vector<CommandSpec>* const kCommands =
      new std::vector<CommandSpec>{
          {"q", "QUERY [INPUTS...]", "run a Datalog query with inputs"},
          {"t", "TX-DATA", "transact a vector of tx forms"},
          {"pull", "PATTERN ENTITY",
           "pull an entity (id, ident or lookup ref)"},
          {"schema", "[ATTR]", "list attributes, or describe one"},
          {"as-of", "T", "read the database as of tx T (id or #inst)"},
          {"since", "T", "read only what changed after tx T"},
          {"history", "", "read every assertion and retraction"},
          {"latest", "", "read the current database again"},
          {"with", "[TX-DATA...]",
           "read as if TX-DATA were transacted, committing nothing (.with "
           "alone: stop)"},
          {"dry-run", "TX-DATA",
           "show what transacting TX-DATA would do, committing nothing"},
          {"explain", "QUERY", "show the plan of a query"},
          {"timer", "on|off", "print how long each command took"},
          {"format", "table|edn|json|csv", "set the output format"},
          {"pager", "on|off", "page long results through $PAGER"},
          {"expanded", "on|off",
           "show table rows as records, a line per column (\\x)"},
          {"output", "[FILE]", "write results to FILE (none: stdout)"},
          {"import", "FILE [OPTIONS]",
           "load EDN transactions, NDJSON entities or CSV rows (--map "
           "COL=:ns/attr, --batch N, --skip N; Ctrl-C stops cleanly)"},
          {"export", "FILE", "write the database as EDN transactions"},
          {"dbs", "", "list databases"},
          {"use", "DB", "switch to database DB"},
          {"create", "DB", "create database DB"},
          {"drop", "DB", "delete database DB and all its data"},
          {"backup", "DIR",
           "back up the database online into DIR on the server"},
          {"stats", "", "show database statistics"},
          {"cluster", "",
           "show each node's role, term, basis and lag (--addr a,b,c)"},
          {"log", "FROM [TO]", "show transactions from tx FROM to TO"},
          {"watch", "", "follow transactions as they commit (Ctrl-C stops)"},
          {"read", "FILE", "run the commands in FILE"},
          {"help", "", "show this list"},
          {"quit", "", "exit (also .exit, \\q, Ctrl-D)"},
      };
  return *kCommands;
}

const CommandSpec* FindCommand(std::string_view name) {
  for (const CommandSpec& spec : AllCommands()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::optional<CommandLine> ParseCommandLine(std::string_view input) {
  size_t i = 0;
  while (i < input.size() && IsBlank(input[i])) ++i;
  if (i >= input.size() || (input[i] != '.' && input[i] != '\\')) {
    return std::nullopt;
  }
  const char lead = input[i];
  ++i;
  const size_t name_begin = i;
  while (i < input.size() && !IsBlank(input[i]) && input[i] != '[' &&
         input[i] != '{' && input[i] != '(' && input[i] != '"') {
    ++i;
  }
  CommandLine out;
  out.name = std::string(input.substr(name_begin, i - name_begin));
  out.typed = std::string(1, lead) + out.name;
  // psql's habits, as the dot command that does the job.
  bool toggle = false;
  if (lead == '\\') {
    if (out.name == "q") out.name = "quit";
    if (out.name == "?" || out.name == "h") out.name = "help";
    if (out.name == "d") out.name = "schema";
    if (out.name == "l") out.name = "dbs";
    if (out.name == "c" || out.name == "connect") out.name = "use";
    if (out.name == "timing") {
      out.name = "timer";
      toggle = true;  // psql's \timing with no argument flips it
    }
    if (out.name == "x") {
      out.name = "expanded";
      toggle = true;  // psql's \x with no argument flips it too
    }
  }
  // sqlite3's.
  if (out.name == "mode") out.name = "format";
  if (out.name == "tables") out.name = "schema";
  if (out.name == "databases") out.name = "dbs";
  if (out.name == "exit") out.name = "quit";
  while (i < input.size() && IsBlank(input[i])) ++i;
  out.args_offset = i;
  out.args = input.substr(i);
  while (!out.args.empty() && IsBlank(out.args.back())) {
    out.args.remove_suffix(1);
  }
  if (toggle && out.args.empty()) out.args = "toggle";
  return out;
}

std::vector<std::string> SplitWords(std::string_view args) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < args.size()) {
    while (i < args.size() && IsBlank(args[i])) ++i;
    if (i >= args.size()) break;
    std::string word;
    if (args[i] == '"') {
      ++i;
      while (i < args.size() && args[i] != '"') {
        if (args[i] == '\\' && i + 1 < args.size()) ++i;
        word.push_back(args[i++]);
      }
      ++i;
    } else {
      while (i < args.size() && !IsBlank(args[i])) word.push_back(args[i++]);
    }
    words.push_back(std::move(word));
  }
  return words;
}

std::string SuggestCommand(std::string_view name) {
  ClosestName closest(name);
  for (const CommandSpec& spec : AllCommands()) closest.Offer(spec.name);
  return closest.best().empty() ? "" : "." + std::string(closest.best());
}

std::string_view TrimEdn(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace mentat::cli
