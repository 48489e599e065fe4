// Fuzz target: the tx-data parser (EDN text to a transaction request,
// before any schema is consulted). Errors must be InvalidArgument.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "mentat/query/tx_data_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<mentat::storage::TxRequest> request =
      mentat::query::ParseTxData(text);
  if (!request.ok() &&
      request.status().code() != absl::StatusCode::kInvalidArgument) {
    std::fprintf(stderr, "tx_data_fuzz: unexpected error %s\n",
                 request.status().ToString().c_str());
    std::abort();
  }
  return 0;
}
