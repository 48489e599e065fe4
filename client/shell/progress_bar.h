#ifndef MENTAT_CLIENT_SHELL_PROGRESS_BAR_H_
#define MENTAT_CLIENT_SHELL_PROGRESS_BAR_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace mentat::cli {

// What an import has done so far.
struct ImportProgress {
  int64_t bytes_done = 0;
  int64_t bytes_total = 0;  // 0 if unknown
  int64_t datoms = 0;
  int64_t transactions = 0;
  double elapsed_seconds = 0;
};

// One line for a terminal `width` columns wide:
//   [=======>      ]  45%  12.3/27.4 MB  45.1K datoms/s  ETA 0:12
// The bar shrinks to fit; with an unknown total there is no bar or ETA.
std::string RenderProgress(const ImportProgress& p, int width);

// "1.5 KB", "12.3 MB": sizes in powers of 1024.
std::string HumanBytes(int64_t bytes);
// "950", "45.1K", "1.20M": rates and counts.
std::string HumanCount(double n);
// "0:07", "1:02:03".
std::string HumanDuration(double seconds);

// Redraws a progress line on a terminal in place, at most every 100 ms.
// Use only when the stream is a TTY. Not thread-safe.
class ProgressBar {
 public:
  ProgressBar(std::FILE* tty, int width);
  void Update(const ImportProgress& p);
  // Draws the final state and moves to the next line.
  void Finish(const ImportProgress& p);

 private:
  void Draw(const ImportProgress& p);

  std::FILE* tty_;
  int width_;
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
};

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_PROGRESS_BAR_H_
