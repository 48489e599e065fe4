#ifndef MENTAT_STORAGE_INTERNAL_FULLTEXT_INDEX_H_
#define MENTAT_STORAGE_INTERNAL_FULLTEXT_INDEX_H_

// The `fulltext` column family: one empty-valued key per (attribute, term,
// entity), written with the datom that brought the term and never removed
// (mentat/storage/fulltext.h says why that is exact).
//
//   key = attribute (8 BE) | kind ('s' stem, 'w' folded word) | term | 0x00
//         | entity (8 BE)
//
// Terms hold no 0x00 (TokenizeFulltext drops such words), so the byte
// after a term ends it, and an entity's 8 bytes are always the key's last.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "internal/store_core.h"
#include "mentat/storage/fulltext.h"
#include "mentat/storage/schema.h"
#include "mentat/storage/value.h"

namespace mentat::storage::internal {

class TxBatch;

// The key prefix of `term` of `kind` under `attribute`; with `whole`, the
// term's 0x00 end too (an exact term, not a prefix).
void EncodePostingPrefix(EntityId attribute, PostingKind kind,
                         std::string_view term, bool whole, std::string* out);

// Writes to `batch` the postings of an asserted string `v` of `attribute`
// held by entity `e`. Errors: those of TokenizeFulltext.
[[nodiscard]] absl::Status PutPostings(EntityId attribute, EntityId e,
                                       const Value& v, TxBatch* batch);

// Deletes from `batch` the postings of string `v` of `attribute` held by
// entity `e` (an excision's: another value of `e` with the same words must
// be posted again after). Errors: those of TokenizeFulltext.
[[nodiscard]] absl::Status DeletePostings(EntityId attribute, EntityId e,
                                          const Value& v, TxBatch* batch);

// Meta key: present once the postings cover every :db/fulltext attribute's
// values (a new store writes it at bootstrap; a store from before the
// family existed gets it from BuildFulltextIndex).
inline constexpr char kMetaFulltextKey[] = "fulltext";

// Builds the postings of every :db/fulltext attribute of `schema` from its
// current and retracted datoms (AEVT and AEVT history), then writes
// kMetaFulltextKey; does nothing when that key is present. For a store
// opened by a build older than the family. Errors: Unavailable (RocksDB),
// DataLoss (a malformed key).
[[nodiscard]] absl::Status BuildFulltextIndex(StoreCore* core,
                                              const Schema& schema);

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_FULLTEXT_INDEX_H_
