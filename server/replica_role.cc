// What a read replica refuses, and the min_basis_tx wait every read makes
// (service_context.h).

#include "mentat/base/str_cat.h"
#include "service_context.h"

namespace mentat::server {

absl::Status RefuseAtReplica(const ServiceContext& sc, std::string_view what) {
  if (sc.role != nullptr) return sc.role->CheckWritable(what);
  if (sc.config.replica_of.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      StrCat("this node is a read replica of ", sc.config.replica_of, ": ",
             what, " is refused here; send writes to the primary at ",
             sc.config.replica_of));
}

void AfterMinBasis(ServiceContext& sc, std::shared_ptr<Database> database,
                   int64_t min_basis_tx,
                   std::chrono::steady_clock::time_point deadline,
                   std::function<void(absl::Status)> then) {
  if (min_basis_tx == 0 || sc.basis_waiters == nullptr) {
    then(absl::OkStatus());
    return;
  }
  sc.basis_waiters->RunAt(std::move(database), min_basis_tx, deadline,
                          std::move(then));
}

}  // namespace mentat::server
