#ifndef MENTAT_BENCH_TOOL_ARGS_H_
#define MENTAT_BENCH_TOOL_ARGS_H_

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <string>
#include <system_error>
#include <utility>

namespace mentat::bench {

// The command line of the cluster tools (failover, chaos, replica-lag):
// flags with a value each, read in turn. A missing or malformed value
// exits with status 2 naming the flag (std::stoi threw instead, and
// "--rounds x" ended the tool with an uncaught exception). One thread.
class ToolArgs {
 public:
  ToolArgs(int argc, char** argv, std::string usage)
      : argc_(argc), argv_(argv), usage_(std::move(usage)) {}

  // The next flag into *flag; false once there are none left.
  bool Next(std::string* flag) {
    if (i_ + 1 >= argc_) return false;
    *flag = argv_[++i_];
    flag_ = *flag;
    return true;
  }

  // The current flag's value.
  std::string Value() {
    if (i_ + 1 >= argc_) Fail("needs a value");
    return argv_[++i_];
  }

  // The value as an int of at least `min`.
  int Int(int min) {
    const std::string v = Value();
    int n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < min) {
      Fail("wants an integer of at least " + std::to_string(min) + ", not \"" +
           v + "\"");
    }
    return n;
  }

  // The value as a number greater than 0.
  double Positive() {
    const std::string v = Value();
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(d > 0)) {
      Fail("wants a number greater than 0, not \"" + v + "\"");
    }
    return d;
  }

  // The value as true or false.
  bool Bool() {
    const std::string v = Value();
    if (v != "true" && v != "false") {
      Fail("wants true or false, not \"" + v + "\"");
    }
    return v == "true";
  }

  // An unknown flag, or none of the required ones: the usage, status 2.
  [[noreturn]] void Usage() const {
    std::cerr << usage_ << "\n";
    std::exit(2);
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    std::cerr << flag_ << " " << why << "\n" << usage_ << "\n";
    std::exit(2);
  }

  int argc_;
  char** argv_;
  std::string usage_;
  int i_ = 0;
  std::string flag_;
};

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_TOOL_ARGS_H_
