// spdlog set-up: plain text or one JSON object per line.

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <ctime>

#include "mentat/base/str_cat.h"
#include "mentat/server/server.h"

namespace mentat::server {

namespace {

void AppendJsonString(std::string_view s, spdlog::memory_buf_t* out) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out->append(std::string_view("\\\""));
        break;
      case '\\':
        out->append(std::string_view("\\\\"));
        break;
      case '\n':
        out->append(std::string_view("\\n"));
        break;
      case '\r':
        out->append(std::string_view("\\r"));
        break;
      case '\t':
        out->append(std::string_view("\\t"));
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(std::string_view(buf));
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

// {"ts":"2025-01-02T03:04:05.123456Z","level":"info","thread":N,"msg":"..."}
class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                            msg.time.time_since_epoch())
                            .count();
    const std::time_t secs = static_cast<std::time_t>(micros / 1000000);
    std::tm tm;
    gmtime_r(&secs, &tm);
    char ts[64];
    snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, static_cast<int>(micros % 1000000));
    dest.append(std::string_view("{\"ts\":\""));
    dest.append(std::string_view(ts));
    dest.append(std::string_view("\",\"level\":\""));
    const auto level = spdlog::level::to_string_view(msg.level);
    dest.append(std::string_view(level.data(), level.size()));
    dest.append(std::string_view("\",\"thread\":"));
    const std::string thread = std::to_string(msg.thread_id);
    dest.append(std::string_view(thread));
    dest.append(std::string_view(",\"msg\":"));
    AppendJsonString(std::string_view(msg.payload.data(), msg.payload.size()),
                     &dest);
    dest.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

absl::Status SetUpLogging(const ServerConfig& config) {
  const spdlog::level::level_enum level =
      spdlog::level::from_str(config.log_level);
  if (level == spdlog::level::off && config.log_level != "off") {
    return absl::InvalidArgumentError(
        StrCat("--log-level: unknown level \"", config.log_level, "\""));
  }
  auto logger = std::make_shared<spdlog::logger>(
      "mentatd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (config.log_format == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %^%l%$ [%t] %v",
                        spdlog::pattern_time_type::utc);
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return absl::OkStatus();
}

}  // namespace mentat::server
