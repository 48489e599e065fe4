// Fuzz target: the pull pattern parser and validator, and a pull of the
// fuzz store's first issue with what validates. The input is EDN text;
// errors must be InvalidArgument.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_store.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/query/pull.h"
#include "mentat/query/pull_pattern.h"

namespace {

void Check(const absl::Status& status, const char* what) {
  if (status.ok() || status.code() == absl::StatusCode::kInvalidArgument) {
    return;
  }
  std::fprintf(stderr, "pull_pattern_fuzz: %s: unexpected error %s\n", what,
               status.ToString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::shared_ptr<const mentat::storage::Db> db =
      mentat::fuzz::FuzzStore::Get().store().Latest();
  auto form = mentat::edn::ParseEdn(text);
  if (!form.ok()) return 0;
  auto pattern = mentat::query::ParsePullPattern(*form);
  Check(pattern.status(), "parse");
  if (!pattern.ok()) return 0;
  absl::Status valid =
      mentat::query::ValidatePullPattern(*pattern, db->schema());
  Check(valid, "validate");
  if (!valid.ok()) return 0;
  mentat::storage::DbView view = db->View(mentat::storage::Basis::Current());
  for (mentat::storage::EntityId e :
       mentat::fuzz::FuzzStore::Get().entities()) {
    Check(mentat::query::Pull(view, *pattern, e).status(), "pull");
  }
  return 0;
}
