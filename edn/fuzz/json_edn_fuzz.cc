// Fuzz target: JSON mapped to EDN (mentat/edn/json_edn.h: the server's
// JSON query inputs, the shell's NDJSON imports), parsed with simdjson.
// Any input either fails with InvalidArgument or gives a value that prints
// as EDN the reader accepts.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/edn/json_edn.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<mentat::edn::EdnValue> value =
      mentat::edn::JsonToEdn(json, "input 1");
  if (!value.ok()) {
    if (value.status().code() != absl::StatusCode::kInvalidArgument) {
      std::fprintf(stderr, "json_edn_fuzz: unexpected error %s\n",
                   value.status().ToString().c_str());
      std::abort();
    }
    return 0;
  }
  std::string printed = mentat::edn::PrintEdn(*value);
  absl::StatusOr<mentat::edn::EdnValue> again = mentat::edn::ParseEdn(printed);
  if (!again.ok()) {
    std::fprintf(stderr, "json_edn_fuzz: printed value does not read: %s\n%s\n",
                 again.status().ToString().c_str(), printed.c_str());
    std::abort();
  }
  return 0;
}
