// Writes the fuzz targets' seed corpora from the conformance suite and the
// workload queries, one file per input, named by a hash of its contents:
//
//   fuzz_seed_corpus CASES_DIR WORKLOAD_DIR OUT_DIR
//
// OUT_DIR/<target>_fuzz/ gets: edn_reader (every case file and every form in
// it), tx_data (schemas and transactions), query_parser (queries, with their
// rules after "%%"), pull_pattern (the patterns of pull expressions),
// json_edn (query inputs written as JSON), transact_query (a case's last
// transaction, its query and its inputs). A missing WORKLOAD_DIR is
// skipped (it sits outside the repository).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/strings/str_format.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"

namespace {

using mentat::StrAppend;
using mentat::StrCat;
using mentat::edn::EdnValue;
namespace fs = std::filesystem;

fs::path out_root;
int written = 0;

void Write(std::string_view target, std::string_view data) {
  fs::path dir = out_root / StrCat(target, "_fuzz");
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string name =
      absl::StrFormat("%016x", std::hash<std::string_view>()(data));
  std::ofstream out(dir / name, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  ++written;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

const EdnValue* Get(const EdnValue& map, std::string_view key) {
  if (!map.is_map()) return nullptr;
  for (size_t i = 0; i + 1 < map.items().size(); i += 2) {
    if (map.items()[i].is_keyword(key)) return &map.items()[i + 1];
  }
  return nullptr;
}

// The conformance cases' #ref "x" / #ref :x / #tx N as plain tx-data: the
// tempid, the ident, the transaction.
EdnValue Untag(const EdnValue& v) {
  if (v.is_tagged()) {
    if (v.text() == "ref") return v.tagged_value();
    if (v.text() == "tx") return EdnValue::String("datomic.tx");
    return v;
  }
  if (!v.is_collection()) return v;
  std::vector<EdnValue> items;
  for (const EdnValue& item : v.items()) items.push_back(Untag(item));
  switch (v.kind()) {
    case mentat::edn::EdnKind::kList:
      return EdnValue::List(std::move(items));
    case mentat::edn::EdnKind::kVector:
      return EdnValue::Vector(std::move(items));
    case mentat::edn::EdnKind::kMap:
      return EdnValue::Map(std::move(items));
    default:
      return EdnValue::Set(std::move(items));
  }
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The JSON mapping of mentat.v1.Input (mentat/edn/json_edn.h), where it
// has one.
std::optional<std::string> ToJson(const EdnValue& v) {
  using mentat::edn::EdnKind;
  switch (v.kind()) {
    case EdnKind::kNil:
      return "null";
    case EdnKind::kBool:
      return v.as_bool() ? "true" : "false";
    case EdnKind::kInt:
      return StrCat(v.as_int());
    case EdnKind::kFloat:
      return mentat::edn::PrintEdn(v);
    case EdnKind::kString:
      return JsonString(v.text().starts_with(":") ? ":" + v.text() : v.text());
    case EdnKind::kKeyword:
      return JsonString(":" + v.text());
    case EdnKind::kSymbol:
      return StrCat("{\"#symbol\": ", JsonString(v.text()), "}");
    case EdnKind::kBigInt:
      return StrCat("{\"#bigint\": ", JsonString(v.text()), "}");
    case EdnKind::kBigDec:
      return StrCat("{\"#bigdec\": ", JsonString(v.text()), "}");
    case EdnKind::kInst:
    case EdnKind::kUuid: {
      std::string printed = mentat::edn::PrintEdn(v);  // #inst "..."
      size_t space = printed.find(' ');
      return StrCat("{\"", printed.substr(0, space),
                    "\": ", printed.substr(space + 1), "}");
    }
    case EdnKind::kTagged:
      if (v.text() == "ref" && v.tagged_value().is_int()) {
        return StrCat("{\"#ref\": ", v.tagged_value().as_int(), "}");
      }
      return std::nullopt;
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kSet: {
      std::string out;
      for (const EdnValue& item : v.items()) {
        std::optional<std::string> j = ToJson(item);
        if (!j) return std::nullopt;
        StrAppend(&out, out.empty() ? "" : ", ", *j);
      }
      if (v.is_vector()) return StrCat("[", out, "]");
      return StrCat("{\"#", v.is_set() ? "set" : "list", "\": [", out, "]}");
    }
    case EdnKind::kMap: {
      std::string out;
      for (size_t i = 0; i + 1 < v.items().size(); i += 2) {
        const EdnValue& key = v.items()[i];
        std::string k = key.is_keyword()  ? ":" + key.text()
                        : key.is_string() ? key.text()
                                          : "";
        std::optional<std::string> j = ToJson(v.items()[i + 1]);
        if (k.empty() || !j) return std::nullopt;
        StrAppend(&out, out.empty() ? "" : ", ", JsonString(k), ": ", *j);
      }
      return StrCat("{", out, "}");
    }
    default:
      return std::nullopt;
  }
}

// Pull patterns in `form`: the last argument of every (pull ...) list.
void CollectPulls(const EdnValue& form) {
  if (form.is_list() && form.items().size() >= 2 &&
      form.items()[0].is_symbol() && form.items()[0].text() == "pull") {
    Write("pull_pattern", mentat::edn::PrintEdn(form.items().back()));
  }
  for (const EdnValue& item : form.items()) CollectPulls(item);
}

// A rules input: a vector of vectors each starting with a list.
bool IsRules(const EdnValue& v) {
  return v.is_vector() && !v.items().empty() && v.items()[0].is_vector() &&
         !v.items()[0].items().empty() && v.items()[0].items()[0].is_list();
}

void AddQuery(const std::string& query, const EdnValue* inputs,
              const std::string& tx) {
  std::string with_rules = query;
  std::vector<EdnValue> plain_inputs;
  if (inputs != nullptr && inputs->is_vector()) {
    for (const EdnValue& input : inputs->items()) {
      if (IsRules(input)) {
        StrAppend(&with_rules, "\n%%\n", mentat::edn::PrintEdn(input));
      } else if (std::optional<std::string> json = ToJson(input)) {
        Write("json_edn", *json);
      }
      plain_inputs.push_back(Untag(input));
    }
  }
  Write("query_parser", with_rules);
  std::string tq = StrCat(tx, "\n====\n", query);
  if (!plain_inputs.empty()) {
    StrAppend(&tq, "\n====\n",
              mentat::edn::PrintEdn(EdnValue::Vector(std::move(plain_inputs))));
  }
  Write("transact_query", tq);
}

void AddCaseFile(const fs::path& path) {
  std::string text = ReadFile(path);
  Write("edn_reader", text);
  auto forms = mentat::edn::ParseEdnAll(text);
  if (!forms.ok()) {
    std::fprintf(stderr, "fuzz_seed_corpus: %s: %s\n", path.c_str(),
                 forms.status().ToString().c_str());
    return;
  }
  for (const EdnValue& form : *forms) {
    Write("edn_reader", mentat::edn::PrintEdn(form));
    const EdnValue* c = Get(form, "defaults");
    if (c == nullptr) c = &form;
    std::string last_tx = "[]";
    if (const EdnValue* schema = Get(*c, "schema")) {
      Write("tx_data", mentat::edn::PrintEdn(Untag(*schema)));
    }
    if (const EdnValue* txs = Get(*c, "tx"); txs && txs->is_vector()) {
      for (const EdnValue& tx : txs->items()) {
        last_tx = mentat::edn::PrintEdn(Untag(tx));
        Write("tx_data", last_tx);
      }
    }
    if (const EdnValue* query = Get(*c, "query")) {
      CollectPulls(*query);
      AddQuery(
          query->is_string() ? query->text() : mentat::edn::PrintEdn(*query),
          Get(*c, "inputs"), last_tx);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s CASES_DIR WORKLOAD_DIR OUT_DIR\n", argv[0]);
    return 1;
  }
  out_root = argv[3];
  std::error_code ec;
  std::vector<fs::path> files;
  for (const char* dir : {argv[1], argv[2]}) {
    if (!fs::is_directory(dir, ec)) {
      std::fprintf(stderr, "fuzz_seed_corpus: skipping %s (no directory)\n",
                   dir);
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".edn") {
        files.push_back(entry.path());
      }
    }
  }
  for (const fs::path& file : files) {
    // Workload query files hold one query form (and comments).
    if (file.parent_path().filename() == "queries") {
      std::string text = ReadFile(file);
      Write("edn_reader", text);
      auto form = mentat::edn::ParseEdn(text);
      if (form.ok()) CollectPulls(*form);
      AddQuery(text, nullptr, "[]");
    } else if (file.filename() == "schema.edn" &&
               file.parent_path().filename() != "cases") {
      std::string text = ReadFile(file);
      Write("edn_reader", text);
      Write("tx_data", text);
    } else {
      AddCaseFile(file);
    }
  }
  std::printf("fuzz_seed_corpus: %d seeds from %zu files in %s\n", written,
              files.size(), argv[3]);
  return 0;
}
