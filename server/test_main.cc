#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  // Servers started by the tests log at warn and above only.
  spdlog::set_level(spdlog::level::warn);
  doctest::Context context(argc, argv);
  return context.run();
}
