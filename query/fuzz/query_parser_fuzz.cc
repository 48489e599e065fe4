// Fuzz target: the Datalog parser and validator. The input is a query,
// optionally followed by a line "%%" and a rule set; what parses is
// validated against the fuzz store's schema (fuzz_store.h). Errors must be
// InvalidArgument.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "fuzz_store.h"
#include "mentat/query/parser.h"

namespace {

void Check(const absl::Status& status, const char* what) {
  if (status.ok() || status.code() == absl::StatusCode::kInvalidArgument) {
    return;
  }
  std::fprintf(stderr, "query_parser_fuzz: %s: unexpected error %s\n", what,
               status.ToString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view rules_text;
  if (size_t split = text.find("\n%%\n"); split != std::string_view::npos) {
    rules_text = text.substr(split + 4);
    text = text.substr(0, split);
  }
  static const std::shared_ptr<const mentat::storage::Db> db =
      mentat::fuzz::FuzzStore::Get().store().Latest();
  std::vector<mentat::query::Rule> rules;
  if (!rules_text.empty()) {
    auto parsed = mentat::query::ParseRules(rules_text);
    Check(parsed.status(), "rules");
    if (parsed.ok()) rules = *std::move(parsed);
  }
  auto query = mentat::query::ParseQuery(text);
  Check(query.status(), "parse");
  if (query.ok()) {
    Check(mentat::query::ValidateQuery(*query, db->schema(), rules),
          "validate");
  }
  return 0;
}
