#include "shell/line_editor.h"

// readline's headers need stdio first.
#include <cstdio>
// clang-format off
#include <readline/readline.h>
#include <readline/history.h>
// clang-format on
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "shell/completion.h"
#include "shell/interrupts.h"

namespace mentat::cli {
namespace {

constexpr int kHistorySize = 1000;

LineEditor::Completer* g_completer = nullptr;
std::vector<std::string>* g_matches = nullptr;
bool g_got_line = false;
char* g_line = nullptr;

void OnLine(char* line) {
  g_got_line = true;
  g_line = line;
  // Without this readline would print the prompt again at once.
  rl_callback_handler_remove();
}

char* NextMatch(const char*, int state) {
  static size_t index;
  if (state == 0) index = 0;
  if (g_matches == nullptr || index >= g_matches->size()) return nullptr;
  return strdup((*g_matches)[index++].c_str());
}

char** Complete(const char* text, int start, int) {
  const std::string_view before(rl_line_buffer, static_cast<size_t>(start));
  if (ClassifyCompletion(before, text) == CompletionKind::kFile) {
    return nullptr;  // readline's own file name completion
  }
  rl_attempted_completion_over = 1;
  if (g_completer == nullptr || !*g_completer) return nullptr;
  *g_matches = (*g_completer)(before, text);
  // Idents end where the user would type a space; keep '/' completions open.
  rl_completion_append_character = ' ';
  return rl_completion_matches(text, NextMatch);
}

}  // namespace

std::string EncodeHistoryEntry(std::string_view entry) {
  std::string out;
  for (char c : entry) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string DecodeHistoryEntry(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      out.push_back(line[i] == 'n' ? '\n' : line[i]);
    } else {
      out.push_back(line[i]);
    }
  }
  return out;
}

std::string DefaultHistoryFile() {
  if (const char* env = std::getenv("MENTAT_HISTORY")) return env;
  if (const char* home = std::getenv("HOME")) {
    return std::string(home) + "/.mentat_history";
  }
  return "";
}

LineEditor::LineEditor(std::string history_file, Completer completer)
    : history_file_(std::move(history_file)) {
  g_completer = new Completer(std::move(completer));
  g_matches = new std::vector<std::string>;
  rl_readline_name = "mentat";
  // SIGINT belongs to Interrupts; readline must not catch it.
  rl_catch_signals = 0;
  rl_attempted_completion_function = Complete;
  static char kBreaks[] = " \t\n\"\\'`@$><=;|&{([])},";
  rl_completer_word_break_characters = kBreaks;
  using_history();
  stifle_history(kHistorySize);
  LoadHistory();
}

LineEditor::~LineEditor() {
  SaveHistory();
  delete g_completer;
  g_completer = nullptr;
  delete g_matches;
  g_matches = nullptr;
}

void LineEditor::LoadHistory() {
  if (history_file_.empty()) return;
  std::ifstream in(history_file_);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) add_history(DecodeHistoryEntry(line).c_str());
  }
}

void LineEditor::SaveHistory() const {
  if (history_file_.empty()) return;
  const std::string tmp = history_file_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;
    HIST_ENTRY** entries = history_list();
    for (int i = 0; entries != nullptr && entries[i] != nullptr; ++i) {
      out << EncodeHistoryEntry(entries[i]->line) << '\n';
    }
    if (!out) return;
  }
  std::rename(tmp.c_str(), history_file_.c_str());
}

void LineEditor::AddHistory(const std::string& entry) {
  // Repeating the last entry adds nothing, as in bash's ignoredups.
  HIST_ENTRY* last = history_length > 0
                         ? history_get(history_base + history_length - 1)
                         : nullptr;
  if (last != nullptr && entry == last->line) return;
  add_history(entry.c_str());
  SaveHistory();
}

bool LineEditor::Read(const std::string& prompt,
                      const std::string& continuation, Statement* out) {
  Interrupts::DrainPrompt();
  std::string buffer;
  for (;;) {
    g_got_line = false;
    g_line = nullptr;
    rl_callback_handler_install(
        buffer.empty() ? prompt.c_str() : continuation.c_str(), OnLine);
    bool interrupted = false;
    bool eof = false;
    while (!g_got_line) {
      pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0},
                       {Interrupts::prompt_fd(), POLLIN, 0}};
      const int n = poll(fds, Interrupts::prompt_fd() >= 0 ? 2 : 1, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        eof = true;
        break;
      }
      if (fds[1].revents & POLLIN) {
        Interrupts::DrainPrompt();
        interrupted = true;
        break;
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        rl_callback_read_char();
      }
    }
    if (interrupted || eof) {
      // Ctrl-C drops the whole statement being typed, as in psql.
      rl_replace_line("", 0);
      rl_callback_sigcleanup();
      rl_callback_handler_remove();
      std::fputs(interrupted ? "^C\n" : "\n", stdout);
      std::fflush(stdout);
      buffer.clear();
      if (eof) return false;
      continue;
    }
    if (g_line == nullptr) {
      // Ctrl-D.
      std::fputc('\n', stdout);
      std::fflush(stdout);
      return false;
    }
    std::string line(g_line);
    std::free(g_line);
    g_line = nullptr;
    if (buffer.empty() && IsBlankStatement(line)) continue;
    if (!buffer.empty()) buffer.push_back('\n');
    buffer.append(line);
    if (IsCompleteStatement(buffer)) {
      AddHistory(buffer);
      out->text = std::move(buffer);
      out->first_line = 1;
      return true;
    }
  }
}

bool LineEditor::Confirm(const std::string& question) {
  std::fputs((question + " [y/N] ").c_str(), stdout);
  std::fflush(stdout);
  char buf[64];
  if (std::fgets(buf, sizeof buf, stdin) == nullptr) return false;
  std::string answer(buf);
  while (!answer.empty() && (answer.back() == '\n' || answer.back() == ' ')) {
    answer.pop_back();
  }
  return answer == "y" || answer == "Y" || answer == "yes";
}

}  // namespace mentat::cli
