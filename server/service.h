#ifndef MENTAT_SERVER_SERVICE_H_
#define MENTAT_SERVER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "call.h"
#include "mentat/v1/mentat.grpc.pb.h"
#include "service_context.h"
#include "tsan_handoff.h"

namespace mentat::server {

// mentat.v1.Mentat with every method taking raw bytes (see call.h for
// why). The streams (Query, Datoms, TxRange, Subscribe, Import) use
// gRPC's callback API: each hands its work to the transactor or the
// reader pool and returns at once; the handlers live in *_call.cc, one
// file per concern. Every unary method is an async method instead, served
// on threads of our own (async_unary.h): a connection that made one
// callback-API call is polled by gRPC's callback threads from then on,
// which then read its point reads too (server/README.md).
template <class Base>
using CallbackMethods = v1::Mentat::WithRawCallbackMethod_Query<
    v1::Mentat::WithRawCallbackMethod_Datoms<
        v1::Mentat::WithRawCallbackMethod_TxRange<
            v1::Mentat::WithRawCallbackMethod_Subscribe<
                v1::Mentat::WithRawCallbackMethod_Import<Base>>>>>;
using AsyncMethods =
    v1::Mentat::WithRawMethod_Ping<v1::Mentat::WithRawMethod_QueryFirst<
        v1::Mentat::WithRawMethod_Pull<v1::Mentat::WithRawMethod_Transact<
            v1::Mentat::WithRawMethod_Schema<v1::Mentat::WithRawMethod_Stats<
                v1::Mentat::WithRawMethod_CreateDatabase<
                    v1::Mentat::WithRawMethod_ListDatabases<
                        v1::Mentat::WithRawMethod_DeleteDatabase<
                            v1::Mentat::WithRawMethod_PullMany<
                                v1::Mentat::WithRawMethod_Explain<
                                    v1::Mentat::WithRawMethod_Backup<
                                        v1::Mentat::Service>>>>>>>>>>>>;
using RawMentatService = CallbackMethods<AsyncMethods>;

using Ctx = grpc::CallbackServerContext;
using Buf = grpc::ByteBuffer;
using Unary = grpc::ServerUnaryReactor;
using Writer = grpc::ServerWriteReactor<grpc::ByteBuffer>;
using Reader = grpc::ServerReadReactor<grpc::ByteBuffer>;

// The handlers (defined in transact_call.cc, query_call.cc, pull_call.cc,
// datoms_call.cc, log_call.cc, admin_call.cc, import_call.cc,
// backup_call.cc, ping_call.cc).
Writer* HandleQuery(ServiceContext& sc, Ctx* ctx, const Buf* req);
Writer* HandleDatoms(ServiceContext& sc, Ctx* ctx, const Buf* req);
Writer* HandleTxRange(ServiceContext& sc, Ctx* ctx, const Buf* req);
Writer* HandleSubscribe(ServiceContext& sc, Ctx* ctx, const Buf* req);
// import_call.cc and backup_call.cc.
Reader* HandleImport(ServiceContext& sc, Ctx* ctx, Buf* resp);
// The async methods' handlers (transact_call.cc, query_call.cc,
// pull_call.cc, ping_call.cc),
// run on an async_unary.h thread: each finishes `call` exactly once, here
// or later from a reader.
void ServeTransact(const UnaryCall& call, const Buf* req);
void ServeQueryFirst(const UnaryCall& call, const Buf* req);
void ServePull(const UnaryCall& call, const Buf* req);
void ServePing(const UnaryCall& call, const Buf* req);
// admin_call.cc.
void ServeSchema(const UnaryCall& call, const Buf* req);
void ServeStats(const UnaryCall& call, const Buf* req);
void ServeCreateDatabase(const UnaryCall& call, const Buf* req);
void ServeListDatabases(const UnaryCall& call, const Buf* req);
void ServeDeleteDatabase(const UnaryCall& call, const Buf* req);
// pull_call.cc, query_call.cc, backup_call.cc.
void ServePullMany(const UnaryCall& call, const Buf* req);
void ServeExplain(const UnaryCall& call, const Buf* req);
void ServeBackup(const UnaryCall& call, const Buf* req);

// The service object registered with the gRPC server.
class MentatService final : public RawMentatService {
 public:
  explicit MentatService(ServiceContext& sc) : sc_(sc) {}

  Writer* Query(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleQuery(sc_, ctx, req));
  }
  Writer* Datoms(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleDatoms(sc_, ctx, req));
  }
  Writer* TxRange(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleTxRange(sc_, ctx, req));
  }
  Writer* Subscribe(Ctx* ctx, const Buf* req) override {
    return HandedToGrpc(HandleSubscribe(sc_, ctx, req));
  }
  Reader* Import(Ctx* ctx, Buf* resp) override {
    return HandedToGrpc(HandleImport(sc_, ctx, resp));
  }

 private:
  ServiceContext& sc_;
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_SERVICE_H_
