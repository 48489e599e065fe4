// Column images (internal/column_image.h): mapping one reads its header
// and its first and last key, whatever its size; the other keys' offsets
// are checked with the arrays' checksum, before any reader is given them.

#include "internal/column_image.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "internal/key_run.h"
#include "test_support.h"

namespace mentat::storage {
namespace {

using testing::TempDir;

constexpr EntityId kAttribute = 70;
constexpr size_t kKeys = 100;
// The offsets array follows the 64-byte header, 4 bytes a key.
constexpr size_t kEndsAt = 64;

// An AEVT key of kAttribute: attribute, entity, then a value's bytes.
std::string Key(uint64_t entity) {
  std::string k;
  for (int i = 7; i >= 0; --i) {
    k.push_back(static_cast<char>(uint64_t{kAttribute} >> (8 * i)));
  }
  for (int i = 7; i >= 0; --i)
    k.push_back(static_cast<char>(entity >> (8 * i)));
  k.append("value");
  return k;
}

// Sets byte `at` of the file to `byte`.
void Poke(const std::string& path, size_t at, char byte) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(at));
  file.put(byte);
}

TEST_CASE("an image's key offsets are checked with its arrays, not mapped") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  internal::KeyRun keys;
  for (uint64_t e = 1; e <= kKeys; ++e) {
    keys.Append(Key(e), 3, /*with_entity=*/true);
  }
  REQUIRE(internal::WriteColumnImage(dir.path(), IndexOrder::kAevt, kAttribute,
                                     3, keys)
              .ok());
  const std::string path =
      internal::ColumnImagePath(dir.path(), IndexOrder::kAevt, kAttribute);

  SUBCASE("an intact image maps and passes") {
    auto image = internal::MapColumnImage(path);
    REQUIRE(image.ok());
    CHECK(image->keys->size() == kKeys);
    CHECK(internal::ColumnImageIntact(*image->keys, image->checksum));
  }
  SUBCASE("a middle key's offset out of bounds: mapped, then refused") {
    // The high byte of key 50's end: far past the keys.
    Poke(path, kEndsAt + 4 * 50 + 3, 0x7f);
    auto image = internal::MapColumnImage(path);
    REQUIRE(image.ok());
    CHECK_FALSE(internal::ColumnImageIntact(*image->keys, image->checksum));
    // Refused for the offsets themselves, not only the checksum: the
    // check holds no key readable that is not.
    CHECK_FALSE(internal::ColumnImageIntact(
        *image->keys, internal::ColumnImageChecksum(*image->keys)));
  }
  SUBCASE("offsets out of order: refused even with a matching checksum") {
    // Key 40 ends where key 38 did: before key 39's end.
    auto intact = internal::MapColumnImage(path);
    REQUIRE(intact.ok());
    const uint32_t end38 = intact->keys->ends[38];
    for (int i = 0; i < 4; ++i) {
      Poke(path, kEndsAt + 4 * 40 + i, static_cast<char>(end38 >> (8 * i)));
    }
    auto image = internal::MapColumnImage(path);
    REQUIRE(image.ok());
    CHECK_FALSE(internal::ColumnImageIntact(
        *image->keys, internal::ColumnImageChecksum(*image->keys)));
  }
  SUBCASE("the last key's offset is checked when mapped") {
    Poke(path, kEndsAt + 4 * (kKeys - 1) + 3, 0x7f);
    auto image = internal::MapColumnImage(path);
    CHECK(image.status().code() == absl::StatusCode::kDataLoss);
  }
  SUBCASE("the first key's offset is checked when mapped") {
    // Shorter than an attribute and an entity.
    for (int i = 0; i < 4; ++i) Poke(path, kEndsAt + i, i == 0 ? 4 : 0);
    auto image = internal::MapColumnImage(path);
    CHECK(image.status().code() == absl::StatusCode::kDataLoss);
  }
}

}  // namespace
}  // namespace mentat::storage
