#include "shell/output_sink.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mentat::cli {

OutputSink::OutputSink(std::FILE* file, std::string pager, int rows,
                       int columns, absl::Status* error)
    : file_(file),
      pager_(std::move(pager)),
      rows_(rows),
      columns_(columns),
      deciding_(!pager_.empty() && rows > 0),
      error_(error) {}

OutputSink::~OutputSink() { Finish(); }

void OutputSink::Write(std::string_view text) {
  if (closed_ || text.empty()) return;
  if (!deciding_) {
    Emit(text);
    return;
  }
  held_.append(text);
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (in_escape_) {
      in_escape_ = c != 'm';
    } else if (c == 0x1B) {
      in_escape_ = true;
    } else if (c == '\n') {
      ++held_lines_;
      current_width_ = 0;
    } else if ((c & 0xC0) != 0x80) {
      ++current_width_;
      if (current_width_ > line_width_) line_width_ = current_width_;
    }
  }
  // Leave a row for the prompt that follows, as psql does.
  if (held_lines_ >= rows_ - 1 || (columns_ > 0 && line_width_ > columns_)) {
    StartPager();
  }
}

void OutputSink::StartPager() {
  deciding_ = false;
  std::fflush(file_);
  if (std::getenv("LESS") == nullptr) setenv("LESS", "-SRFX", 1);
  pipe_ = popen(pager_.c_str(), "w");
  std::string held = std::move(held_);
  held_.clear();
  Emit(held);
}

void OutputSink::Emit(std::string_view text) {
  std::FILE* out = pipe_ != nullptr ? pipe_ : file_;
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) {
    // EPIPE: the pager was quit before the end. Anything else on stdout is
    // just as final for this command, and an error.
    closed_ = true;
    Failed(errno);
  }
}

void OutputSink::Failed(int err) {
  if (err == EPIPE || error_ == nullptr || !error_->ok()) return;
  *error_ = absl::AbortedError(std::string("cannot write the results: ") +
                               std::strerror(err));
}

void OutputSink::Finish() {
  if (deciding_) {
    deciding_ = false;
    std::string held = std::move(held_);
    held_.clear();
    Emit(held);
  }
  if (pipe_ != nullptr) {
    pclose(pipe_);
    pipe_ = nullptr;
  } else if (std::fflush(file_) != 0) {
    closed_ = true;
    Failed(errno);
  }
}

std::string DefaultPager() {
  const char* env = std::getenv("PAGER");
  if (env != nullptr) return env;
  for (const char* dir : {"/usr/bin/", "/bin/", "/usr/local/bin/"}) {
    if (access((std::string(dir) + "less").c_str(), X_OK) == 0) return "less";
  }
  return "more";
}

}  // namespace mentat::cli
