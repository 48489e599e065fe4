// Helpers of the column tests (column_cache_test.cc,
// column_image_store_test.cc): a small schema, store options with and
// without columns, and every way a reader walks an attribute, so that a
// store with columns can be compared with one without.

#ifndef MENTAT_STORAGE_COLUMN_TEST_SUPPORT_H_
#define MENTAT_STORAGE_COLUMN_TEST_SUPPORT_H_

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "mentat/base/str_cat.h"
#include "mentat/storage/store.h"
#include "test_support.h"

namespace mentat::storage::testing {

inline std::vector<TxOp> SchemaOps() {
  std::vector<TxOp> ops;
  for (auto attr :
       {Attr("c/one", "db.type/long"), Attr("c/many", "db.type/long", true),
        Attr("c/name", "db.type/string")}) {
    ops.insert(ops.end(), attr.begin(), attr.end());
  }
  return ops;
}

// Options that queue a column's build at the first bulk read.
inline StoreOptions EagerColumns() {
  StoreOptions options;
  options.column_build_after_rows = 1;
  return options;
}

inline StoreOptions NoColumns() {
  StoreOptions options;
  options.column_cache_bytes = 0;
  return options;
}

// Every datom of `attr` through AEVT and AVET: whole scans, a seek to one
// entity (AEVT) and to one value (AVET), and a range from a value on.
inline std::vector<std::string> Scan(const DbView& view, EntityId attr,
                                     EntityId some_entity) {
  std::vector<std::string> out;
  auto dump = [&](DatomCursor& cursor, const char* what) {
    for (; cursor.Valid(); cursor.Next()) {
      const Datom& d = cursor.datom();
      out.push_back(StrCat(what, " ", d.e, " ", d.a, " ", d.v.DebugString(),
                           " ", d.tx, " ", d.added));
    }
    REQUIRE(cursor.status().ok());
  };
  auto aevt = view.NewCursor(IndexOrder::kAevt);
  std::string prefix;
  AevtKey::EncodePrefix(attr, &prefix);
  aevt->Seek(prefix);
  dump(*aevt, "aevt");
  std::string entity;
  AevtKey::EncodePrefix(attr, some_entity, &entity);
  aevt->Seek(entity);
  dump(*aevt, "aevt entity");
  aevt->Seek(prefix);
  aevt->SeekWithin(entity);
  dump(*aevt, "aevt within");

  auto avet = view.NewCursor(IndexOrder::kAvet);
  prefix.clear();
  AvetKey::EncodePrefix(attr, &prefix);
  avet->Seek(prefix);
  dump(*avet, "avet");
  std::string value;
  AvetKey::EncodePrefix(attr, Value::Long(2), &value);
  avet->Seek(value);
  dump(*avet, "avet value");
  avet->Seek(prefix);
  avet->SeekWithin(value);
  dump(*avet, "avet range");
  // Keys only (counting) must see the same keys.
  avet->SetKeysOnly(true);
  size_t keys = 0;
  for (avet->Seek(prefix); avet->Valid(); avet->Next()) ++keys;
  out.push_back(StrCat("avet keys ", keys));
  // Skipping counts what stepping counts: runs of one value (AVET) and of
  // one entity (AEVT), in lots of 1, 2 and 3 and whole, and the attribute.
  for (DatomCursor* cursor : {avet.get(), aevt.get()}) {
    const bool by_value = cursor == avet.get();
    std::string attr_prefix;
    if (by_value) {
      AvetKey::EncodePrefix(attr, &attr_prefix);
    } else {
      AevtKey::EncodePrefix(attr, &attr_prefix);
    }
    for (const uint64_t lot : {uint64_t{1}, uint64_t{2}, uint64_t{3},
                               std::numeric_limits<uint64_t>::max()}) {
      std::string runs;
      cursor->Seek(attr_prefix);
      while (cursor->Valid()) {
        const std::string_view key = cursor->key();
        const std::string run(by_value ? key.substr(0, key.size() - 8)
                                       : key.substr(0, 16));
        uint64_t n = 0, k = 0;
        do {
          k = cursor->SkipPrefix(run, lot);
          n += k;
        } while (k == lot);
        REQUIRE(n > 0);
        StrAppend(&runs, n, " ");
      }
      REQUIRE(cursor->status().ok());
      out.push_back(StrCat(by_value ? "avet" : "aevt", " runs ", runs));
    }
    cursor->Seek(attr_prefix);
    out.push_back(StrCat("skipped ", cursor->SkipPrefix(attr_prefix, keys + 9),
                         " valid after ", cursor->Valid()));
  }
  return out;
}

}  // namespace mentat::storage::testing

#endif  // MENTAT_STORAGE_COLUMN_TEST_SUPPORT_H_
