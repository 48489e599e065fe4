// Backup: a consistent online checkpoint of one database.
#include "call.h"
#include "service.h"

namespace mentat::server {

Unary* HandleBackup(ServiceContext& sc, Ctx* ctx, const Buf* req, Buf* resp) {
  (void)req;
  UnaryCall call(sc, Method::kBackup, ctx, resp);
  return FinishNow(call,
                   absl::UnimplementedError("Backup is not implemented yet"));
}

}  // namespace mentat::server
