#include "shell/command.h"

#include <doctest/doctest.h>

#include "shell/completion.h"
#include "shell/line_editor.h"
#include "shell/statement.h"

namespace mentat::cli {
namespace {

TEST_CASE("command: parse names and arguments") {
  auto c = ParseCommandLine("  .q [:find ?e :where [?e :a/b]] 42");
  REQUIRE(c.has_value());
  CHECK(c->name == "q");
  CHECK(c->args == "[:find ?e :where [?e :a/b]] 42");
  CHECK(c->args_offset == 5);
  c = ParseCommandLine(".q[:find ?e]");
  REQUIRE(c.has_value());
  CHECK(c->name == "q");
  CHECK(c->args == "[:find ?e]");
  CHECK(ParseCommandLine("\\q")->name == "quit");
  CHECK(ParseCommandLine(".exit")->name == "quit");
  CHECK(ParseCommandLine("\\?")->name == "help");
  CHECK(ParseCommandLine(".as-of 1000")->args == "1000");
  CHECK_FALSE(ParseCommandLine("[:find ?e]").has_value());
  CHECK(FindCommand("as-of") != nullptr);
  CHECK(FindCommand("nope") == nullptr);
  for (std::string_view name :
       {"help",     "q",       "t",      "pull",    "schema", "as-of",
        "since",    "history", "latest", "explain", "timer",  "format",
        "output",   "import",  "export", "dbs",     "use",    "create",
        "stats",    "log",     "watch",  "read",    "quit",   "backup",
        "expanded", "with",    "dry-run"}) {
    CHECK_MESSAGE(FindCommand(name) != nullptr, name);
  }
}

TEST_CASE("command: words") {
  CHECK(SplitWords(" a.edn  \"my file.edn\" ") ==
        std::vector<std::string>{"a.edn", "my file.edn"});
  CHECK(SplitWords("").empty());
}

TEST_CASE("statement: completeness and scripts") {
  CHECK(IsCompleteStatement(".import data/x[1.edn"));
  CHECK_FALSE(IsCompleteStatement(".q [:find ?e"));
  CHECK(IsCompleteStatement(".q [:find ?e]"));
  CHECK_FALSE(IsCompleteStatement("[:find ?e"));
  CHECK(IsBlankStatement("  ; comment"));
  CHECK_FALSE(IsBlankStatement(".dbs"));

  ScriptReader reader(std::string(
      "; a script\n.dbs\n\n[:find ?e\n :where [?e :a/b]]\n.q [:find ?x]\n"));
  auto s = reader.Next();
  REQUIRE(s.has_value());
  CHECK(s->text == ".dbs");
  CHECK(s->first_line == 2);
  s = reader.Next();
  REQUIRE(s.has_value());
  CHECK(s->text == "[:find ?e\n :where [?e :a/b]]");
  CHECK(s->first_line == 4);
  s = reader.Next();
  REQUIRE(s.has_value());
  CHECK(s->first_line == 6);
  CHECK_FALSE(reader.Next().has_value());

  ScriptReader unfinished(std::string("[:find ?e\n"));
  s = unfinished.Next();
  REQUIRE(s.has_value());
  CHECK(s->text == "[:find ?e");
}

TEST_CASE("completion: contexts and candidates") {
  CHECK(ClassifyCompletion("", ".sc") == CompletionKind::kCommand);
  CHECK(ClassifyCompletion(".use ", "de") == CompletionKind::kDatabase);
  CHECK(ClassifyCompletion(".import ", "da") == CompletionKind::kFile);
  CHECK(ClassifyCompletion("[:find ?e :where [?e ", ":us") ==
        CompletionKind::kKeyword);
  CHECK(ClassifyCompletion(".format ", "c") == CompletionKind::kWord);
  CHECK(ClassifyCompletion("[:find ", "?e") == CompletionKind::kNone);

  CompletionSources sources;
  sources.idents = {":user/email", ":user/name", ":issue/title"};
  sources.databases = {"default", "demo"};
  CHECK(CompletionCandidates(CompletionKind::kCommand, "", ".sc", sources) ==
        std::vector<std::string>{".schema"});
  CHECK(CompletionCandidates(CompletionKind::kKeyword, "", ":user/", sources) ==
        std::vector<std::string>{":user/email", ":user/name"});
  CHECK(
      CompletionCandidates(CompletionKind::kDatabase, ".use ", "de", sources) ==
      std::vector<std::string>{"default", "demo"});
  CHECK(CompletionCandidates(CompletionKind::kWord, ".format ", "", sources)
            .size() == 4);
  CHECK(CompletionCandidates(CompletionKind::kKeyword, "", ":fi", sources) ==
        std::vector<std::string>{":find"});
}

TEST_CASE("history: multi-line entries survive the file") {
  const std::string entry = "[:find ?e\n :where [?e :a/b \"x\\\\y\"]]";
  const std::string line = EncodeHistoryEntry(entry);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(DecodeHistoryEntry(line) == entry);
}

}  // namespace
}  // namespace mentat::cli
