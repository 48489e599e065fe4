// Fuzz target: the EDN reader and printer. Any input either fails with
// InvalidArgument or reads; what reads prints, and the printed text reads
// back to a value that prints the same (the printer's output is EDN the
// reader accepts). The streaming reader (EdnReader / ParseEdnAll) gets the
// same input.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view a,
                       std::string_view b) {
  std::fprintf(stderr, "edn_reader_fuzz: %s\n  first:  %.*s\n  second: %.*s\n",
               what, static_cast<int>(a.size()), a.data(),
               static_cast<int>(b.size()), b.data());
  std::abort();
}

void CheckReadFails(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    Fail("error is not InvalidArgument", status.ToString(), "");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<mentat::edn::EdnValue> value = mentat::edn::ParseEdn(text);
  if (value.ok()) {
    std::string printed = mentat::edn::PrintEdn(*value);
    absl::StatusOr<mentat::edn::EdnValue> again =
        mentat::edn::ParseEdn(printed);
    if (!again.ok())
      Fail("printed value does not read", printed, again.status().ToString());
    std::string reprinted = mentat::edn::PrintEdn(*again);
    if (reprinted != printed) Fail("print is not stable", printed, reprinted);
    (void)mentat::edn::PrintEdnAbbreviated(*value, 40);
  } else {
    CheckReadFails(value.status());
  }
  absl::StatusOr<std::vector<mentat::edn::EdnValue>> all =
      mentat::edn::ParseEdnAll(text);
  if (!all.ok()) CheckReadFails(all.status());
  return 0;
}
