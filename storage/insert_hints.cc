#include "internal/insert_hints.h"

namespace mentat::storage::internal {

namespace {

thread_local bool hints_on = false;

// Mean batch entries a transaction at which hints pay: a datom is 3 to 5
// entries (its indexes and the log), so about 30 datoms. A bulk load's
// transactions write thousands; a client's single-datom write about 10.
constexpr size_t kHintedEntriesPerTransaction = 128;

}  // namespace

bool InsertHintTransform::InDomain(const rocksdb::Slice& key) const {
  return hints_on && key.size() >= kPrefixBytes;
}

HintedInserts::HintedInserts(bool on) : was_(hints_on) { hints_on = on; }

HintedInserts::~HintedInserts() { hints_on = was_; }

bool HintedInserts::Gains(size_t entries, size_t transactions) {
  return entries >= kHintedEntriesPerTransaction * transactions;
}

}  // namespace mentat::storage::internal
