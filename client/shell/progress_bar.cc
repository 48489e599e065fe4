#include "shell/progress_bar.h"

#include <algorithm>
#include <cmath>

namespace mentat::cli {

std::string HumanBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

std::string HumanCount(double n) {
  char buf[32];
  if (n < 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  } else if (n < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1fK", n / 1e3);
  } else if (n < 1e9) {
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2fG", n / 1e9);
  }
  return buf;
}

std::string HumanDuration(double seconds) {
  if (!(seconds >= 0) || seconds > 360000) return "-:--";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(
        buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
        static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld",
                  static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  }
  return buf;
}

std::string RenderProgress(const ImportProgress& p, int width) {
  const double rate = p.elapsed_seconds > 0
                          ? static_cast<double>(p.datoms) / p.elapsed_seconds
                          : 0;
  std::string stats;
  if (p.bytes_total > 0) {
    stats = HumanBytes(p.bytes_done) + "/" + HumanBytes(p.bytes_total);
  } else {
    stats = HumanBytes(p.bytes_done);
  }
  stats += "  " + HumanCount(static_cast<double>(p.datoms)) + " datoms  " +
           HumanCount(rate) + " datoms/s";
  if (p.bytes_total <= 0) return stats;

  const double fraction = std::min(1.0, static_cast<double>(p.bytes_done) /
                                            static_cast<double>(p.bytes_total));
  char pct[16];
  std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(fraction * 100));
  std::string eta = "ETA ";
  if (fraction >= 1) {
    eta = HumanDuration(p.elapsed_seconds) + "    ";
  } else if (fraction > 0 && p.elapsed_seconds > 0) {
    eta += HumanDuration(p.elapsed_seconds * (1 - fraction) / fraction);
  } else {
    eta += "-:--";
  }
  std::string tail = std::string(" ") + pct + "  " + stats + "  " + eta;
  const int bar = width - 2 - static_cast<int>(tail.size());
  if (bar < 10) return std::string(pct) + "  " + stats + "  " + eta;
  const int filled = static_cast<int>(fraction * bar);
  std::string out = "[";
  out.append(filled, '=');
  if (filled < bar) {
    out.push_back('>');
    out.append(bar - filled - 1, ' ');
  }
  out.push_back(']');
  out.append(tail);
  return out;
}

ProgressBar::ProgressBar(std::FILE* tty, int width)
    : tty_(tty), width_(width > 20 ? width - 1 : 79) {}

void ProgressBar::Update(const ImportProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  Draw(p);
}

void ProgressBar::Draw(const ImportProgress& p) {
  drawn_ = true;
  std::string line = "\r" + RenderProgress(p, width_) + "\033[K";
  std::fwrite(line.data(), 1, line.size(), tty_);
  std::fflush(tty_);
}

void ProgressBar::Finish(const ImportProgress& p) {
  Draw(p);
  std::fputc('\n', tty_);
  std::fflush(tty_);
}

}  // namespace mentat::cli
