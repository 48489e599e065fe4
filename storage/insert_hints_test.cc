// Memtable insert hints: on for the writing thread only inside a scope
// that asks for them, and asked for only by writes with runs of keys.

#include "internal/insert_hints.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>

namespace mentat::storage::internal {
namespace {

TEST_CASE("insert hints: a key is hinted only inside a scope that asks") {
  InsertHintTransform transform;
  const std::string key = "12345678rest-of-key";
  const rocksdb::Slice slice(key);
  CHECK_FALSE(transform.InDomain(slice));
  {
    HintedInserts on(true);
    CHECK(transform.InDomain(slice));
    CHECK(transform.Transform(slice) == rocksdb::Slice(key.data(), 8));
    // Shorter than the prefix: never in the domain.
    CHECK_FALSE(transform.InDomain(rocksdb::Slice("1234567")));
    {
      HintedInserts off(false);
      CHECK_FALSE(transform.InDomain(slice));
    }
    CHECK(transform.InDomain(slice));  // the outer scope's again
    // Another thread's writes are not this scope's.
    bool other = true;
    std::thread([&] { other = transform.InDomain(slice); }).join();
    CHECK_FALSE(other);
  }
  CHECK_FALSE(transform.InDomain(slice));
}

TEST_CASE("insert hints: asked for by large transactions, not small ones") {
  // 64 clients' single-datom writes in one group: about 10 entries each.
  CHECK_FALSE(HintedInserts::Gains(64 * 10, 64));
  CHECK_FALSE(HintedInserts::Gains(10, 1));
  // A bulk load's transaction of 500 entities: thousands of entries.
  CHECK(HintedInserts::Gains(16000, 1));
  // One large transaction among small ones: by the mean.
  CHECK(HintedInserts::Gains(16000 + 10 * 10, 11));
  CHECK_FALSE(HintedInserts::Gains(1000 + 100 * 10, 101));
}

}  // namespace
}  // namespace mentat::storage::internal
