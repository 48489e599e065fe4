// StreamFingerprint: the rows digest of resume tokens must not depend on
// how the rows were cut into messages (a message's rows are hashed at once,
// a resume's skipped rows one by one), and must tell different rows apart.

#include "fingerprint.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

namespace mentat::server {
namespace {

uint64_t Whole(const std::string& bytes) {
  StreamFingerprint f;
  f.Append(bytes);
  return f.value();
}

TEST_CASE("StreamFingerprint: any cut of a stream gives its value") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string bytes(rng() % 70, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    StreamFingerprint cut;
    size_t at = 0;
    while (at < bytes.size()) {
      const size_t n = 1 + rng() % 11;  // across word boundaries
      cut.Append(std::string_view(bytes).substr(at, n));
      at += n;
    }
    CHECK(cut.value() == Whole(bytes));
  }
}

TEST_CASE("StreamFingerprint: different streams, different values") {
  // A trailing zero byte, a byte changed, two bytes swapped, and nothing.
  const std::string base = "row one|row two|3";
  std::string changed = base;
  changed[9] = 'T';
  std::string swapped = base;
  std::swap(swapped[0], swapped[1]);
  CHECK(Whole(base) != Whole(base + std::string(1, '\0')));
  CHECK(Whole(base) != Whole(changed));
  CHECK(Whole(base) != Whole(swapped));
  CHECK(Whole("") != Whole(std::string(8, '\0')));
  // value() does not end the stream.
  StreamFingerprint f;
  f.Append("row one|");
  (void)f.value();
  f.Append("row two|3");
  CHECK(f.value() == Whole(base));
}

}  // namespace
}  // namespace mentat::server
