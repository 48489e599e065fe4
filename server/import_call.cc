// Import: client-streaming bulk load (see the Import RPC in mentat.proto).
#include "call.h"
#include "service.h"

namespace mentat::server {
namespace {

// Placeholder until the import path lands: answers UNIMPLEMENTED.
class UnimplementedImport final : public Reader {
 public:
  UnimplementedImport() {
    Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "Import is not implemented yet"));
  }
  void OnDone() override { delete this; }
};

}  // namespace

Reader* HandleImport(ServiceContext& sc, Ctx* ctx, Buf* resp) {
  (void)sc;
  (void)ctx;
  (void)resp;
  return new UnimplementedImport();
}

}  // namespace mentat::server
