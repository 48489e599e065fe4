#include "shell/statement.h"

#include <vector>

#include "mentat/edn/edn_scan.h"
#include "shell/command.h"

namespace mentat::cli {
namespace {

// Commands whose arguments are words, not EDN: their line is their whole.
bool TakesWords(std::string_view name) {
  for (std::string_view w :
       {"import", "export", "read", "output", "use", "create", "drop", "format",
        "timer", "pager", "expanded", "dbs", "stats", "help", "quit", "history",
        "latest", "watch"}) {
    if (name == w) return true;
  }
  return false;
}

// The top-level forms inside the brackets of `form` (which starts with an
// opener of `open_len` bytes), as views into `form`.
std::vector<std::string_view> InnerForms(std::string_view form,
                                         size_t open_len) {
  std::string_view inner = form.substr(open_len);
  if (!inner.empty()) inner.remove_suffix(1);
  std::vector<std::string_view> out;
  for (const edn::EdnFormSpan& span : edn::ScanEdn(inner).forms) {
    out.push_back(inner.substr(span.begin, span.end - span.begin));
  }
  return out;
}

}  // namespace

FormKind ClassifyForm(std::string_view form) {
  if (form.empty()) return FormKind::kOther;
  if (form.front() == '[' && form.back() == ']') {
    const std::vector<std::string_view> items = InnerForms(form, 1);
    if (!items.empty() && items.front() == ":find") return FormKind::kQuery;
    return FormKind::kTransaction;
  }
  if (form.front() == '{' && form.back() == '}') {
    const std::vector<std::string_view> items = InnerForms(form, 1);
    for (size_t k = 0; k < items.size(); k += 2) {
      if (items[k] == ":find") return FormKind::kQuery;
    }
  }
  return FormKind::kOther;
}

bool IsCompleteStatement(std::string_view text) {
  if (std::optional<CommandLine> cmd = ParseCommandLine(text)) {
    if (TakesWords(cmd->name)) return true;
    return edn::IsCompleteEdn(cmd->args);
  }
  return edn::IsCompleteEdn(text);
}

bool IsBlankStatement(std::string_view text) {
  const edn::EdnScan scan = edn::ScanEdn(text);
  return scan.forms.empty() && !scan.in_string && scan.depth == 0 &&
         !ParseCommandLine(text).has_value();
}

ScriptReader::ScriptReader(std::FILE* file) : file_(file) {}

ScriptReader::ScriptReader(std::string text) : text_(std::move(text)) {}

bool ScriptReader::ReadLine(std::string* line) {
  line->clear();
  if (file_ != nullptr) {
    int c;
    bool any = false;
    while ((c = std::fgetc(file_)) != EOF) {
      any = true;
      if (c == '\n') break;
      line->push_back(static_cast<char>(c));
    }
    if (!any) return false;
  } else {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string::npos) end = text_.size();
    line->assign(text_, pos_, end - pos_);
    pos_ = end + 1;
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  ++line_no_;
  return true;
}

std::optional<Statement> ScriptReader::Next() {
  Statement st;
  std::string line;
  while (ReadLine(&line)) {
    if (st.text.empty()) {
      if (IsBlankStatement(line)) continue;
      st.first_line = line_no_;
      st.text = line;
    } else {
      st.text.push_back('\n');
      st.text.append(line);
    }
    if (IsCompleteStatement(st.text)) return st;
  }
  if (!st.text.empty()) return st;
  return std::nullopt;
}

}  // namespace mentat::cli
