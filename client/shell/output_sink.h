#ifndef MENTAT_CLIENT_SHELL_OUTPUT_SINK_H_
#define MENTAT_CLIENT_SHELL_OUTPUT_SINK_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace mentat::cli {

// Where one command's results go. Text is held back until it is clear
// whether it fits the screen; if it does not (more lines than the terminal
// has rows, or a line wider than it) and paging is on, the text is piped
// through the pager as psql does, otherwise written to the file.
//
// Not thread-safe; one command uses one sink at a time.
class OutputSink {
 public:
  // `file` is not owned. `pager` is the command to run ("" never pages);
  // `rows`/`columns` are the terminal's size. `error`, if not null (not
  // owned), gets the first write that failed for another reason than a
  // reader that went away (a full disk, an I/O error): Aborted naming it,
  // so that the command fails instead of losing its results silently.
  OutputSink(std::FILE* file, std::string pager, int rows, int columns,
             absl::Status* error = nullptr);
  ~OutputSink();

  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  void Write(std::string_view text);

  // Flushes what is held back, closes the pager and waits for it to exit.
  void Finish();

  // True once the reader of the output went away (the user quit the
  // pager): producers should stop, and cancel what feeds them.
  bool closed() const { return closed_; }

 private:
  void StartPager();
  void Emit(std::string_view text);
  // Records a failed write or flush (errno `err`).
  void Failed(int err);

  std::FILE* file_;
  std::string pager_;
  int rows_;
  int columns_;
  std::string held_;
  int held_lines_ = 0;
  int line_width_ = 0;
  int current_width_ = 0;
  bool in_escape_ = false;  // inside an ANSI colour sequence
  bool deciding_;           // still holding text back
  std::FILE* pipe_ = nullptr;
  bool closed_ = false;
  absl::Status* error_;
};

// The pager command to use: $PAGER if set (empty disables paging), else
// "less" if it is installed, else "more". LESS defaults to -SRFX so short
// output exits at once and colours pass through.
std::string DefaultPager();

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_OUTPUT_SINK_H_
