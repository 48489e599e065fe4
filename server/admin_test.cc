#include <doctest/doctest.h>
#include <grpcpp/generic/generic_stub.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

grpc::Status DeleteDb(TestServer& t, const std::string& name) {
  pb::DeleteDatabaseRequest req;
  req.set_name(name);
  pb::DeleteDatabaseResponse resp;
  auto ctx = Ctx();
  return t.stub().DeleteDatabase(ctx.get(), req, &resp);
}

std::vector<std::string> ListDbs(TestServer& t) {
  pb::ListDatabasesRequest req;
  pb::ListDatabasesResponse resp;
  auto ctx = Ctx();
  REQUIRE(t.stub().ListDatabases(ctx.get(), req, &resp).ok());
  std::vector<std::string> names;
  for (const auto& d : resp.databases()) names.push_back(d.name());
  return names;
}

TEST_CASE("server: create, list and delete databases") {
  TestServer t;
  CHECK(ListDbs(t) == std::vector<std::string>{"default"});
  REQUIRE(CreateDatabaseStatus(t, "sales").ok());
  CHECK(CreateDatabaseStatus(t, "sales").error_code() ==
        grpc::StatusCode::ALREADY_EXISTS);
  CHECK(CreateDatabaseStatus(t, "bad/name").error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(ListDbs(t) == std::vector<std::string>{"default", "sales"});
  Transact(t, kPeopleSchema, "sales");
  Transact(t, People(0, 5), "sales");
  // Databases are separate.
  CHECK(Query(t, "[:find ?e :where [?e :person/name _]]", {}, "sales")
            .rows.size() == 5);
  CHECK(Query(t, "[:find ?e :where [?e :person/name _]]").status.error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);

  // A subscription on a database that gets deleted ends with NOT_FOUND.
  pb::SubscribeRequest sub;
  sub.set_database("sales");
  grpc::ClientContext sub_ctx;
  sub_ctx.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  auto stream = t.stub().Subscribe(&sub_ctx, sub);

  REQUIRE(DeleteDb(t, "sales").ok());
  pb::SubscribeResponse msg;
  while (stream->Read(&msg)) {
  }
  CHECK(stream->Finish().error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(DeleteDb(t, "sales").error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(ListDbs(t) == std::vector<std::string>{"default"});
  // Writes and reads of a deleted database.
  CHECK(TransactStatus(t, People(10, 1), "sales").error_code() ==
        grpc::StatusCode::NOT_FOUND);
  CHECK(Query(t, "[:find ?e :where [?e :person/name _]]", {}, "sales")
            .status.error_code() == grpc::StatusCode::NOT_FOUND);

  // The name can be used again, for an empty database.
  grpc::Status again;
  for (int i = 0; i < 100; ++i) {
    again = CreateDatabaseStatus(t, "sales");
    if (again.error_code() != grpc::StatusCode::FAILED_PRECONDITION) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE_MESSAGE(again.ok(), StatusText(again));
  CHECK(TransactStatus(t, People(10, 1), "sales").error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);  // no schema there
  // It survives a restart.
  t.Restart();
  CHECK(ListDbs(t) == std::vector<std::string>{"default", "sales"});
}

TEST_CASE("server: deleting a database ends its running streams (NOT_FOUND)") {
  TestServer t;
  CreateDatabase(t, "sales");
  Transact(t, kPeopleSchema, "sales");
  // 60 transactions of 1,000 datoms, read through a channel whose window
  // does not grow: every stream below has far more to send (TxRange's
  // messages hold up to 256 KiB, a few transactions) than gRPC's
  // flow-control windows and the server's two queued messages let through
  // before the client reads, however late the deletion lands.
  constexpr int kTxs = 60;
  constexpr int kPeople = kTxs * 500;
  for (int i = 0; i < kTxs; ++i) Transact(t, People(i * 500, 500), "sales");

  // Three streams, each read to its first message, so each holds the
  // database with more to send.
  pb::QueryRequest query;
  query.set_database("sales");
  query.set_query("[:find ?e ?n :where [?e :person/name ?n]]");
  query.set_batch_rows(10);
  auto query_ctx = Ctx();
  auto slow = OwnStub(t, 1);
  auto query_stream = slow->Query(query_ctx.get(), query);
  pb::QueryResponse query_msg;
  REQUIRE(query_stream->Read(&query_msg));

  pb::DatomsRequest datoms;
  datoms.set_database("sales");
  datoms.set_index(pb::AEVT);
  datoms.set_batch_size(10);
  auto datoms_ctx = Ctx();
  auto datoms_stream = slow->Datoms(datoms_ctx.get(), datoms);
  pb::DatomsResponse datoms_msg;
  REQUIRE(datoms_stream->Read(&datoms_msg));

  pb::TxRangeRequest range;
  range.set_database("sales");
  auto range_ctx = Ctx();
  auto range_stream = slow->TxRange(range_ctx.get(), range);
  pb::TxRangeResponse range_msg;
  REQUIRE(range_stream->Read(&range_msg));

  REQUIRE(DeleteDb(t, "sales").ok());
  // What was on its way before the deletion still arrives; then NOT_FOUND,
  // well before the end.
  int64_t rows = query_msg.rows_size();
  while (query_stream->Read(&query_msg)) rows += query_msg.rows_size();
  grpc::Status s = query_stream->Finish();
  MESSAGE("query stream: ", rows, " of ", kPeople, " rows, ", StatusText(s));
  CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(s.error_message() == "database sales was deleted");
  CHECK(rows < kPeople);
  int64_t read = datoms_msg.datoms_size();
  while (datoms_stream->Read(&datoms_msg)) read += datoms_msg.datoms_size();
  s = datoms_stream->Finish();
  MESSAGE("datoms stream: ", read, " datoms, ", StatusText(s));
  CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(read < 2 * kPeople);
  int64_t txs = range_msg.transactions_size();
  while (range_stream->Read(&range_msg)) txs += range_msg.transactions_size();
  s = range_stream->Finish();
  MESSAGE("tx-range stream: ", txs, " transactions, ", StatusText(s));
  CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(txs < kTxs);

  // The files go with the last stream, then the deletion marker.
  const std::string data = t.config().data_dir;
  bool gone = false;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    gone = !std::filesystem::exists(data + "/sales") &&
           !std::filesystem::exists(data + "/sales.deleted");
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(gone);
  CHECK(ListDbs(t) == std::vector<std::string>{"default"});
}

TEST_CASE("server: a deletion left unfinished is finished at the next start") {
  TestServer t;
  CreateDatabase(t, "sales");
  Transact(t, kPeopleSchema, "sales");
  Transact(t, People(0, 5), "sales");
  // What a crash leaves when it hits after DeleteDatabase answered, while
  // a call still held the database: its files and its marker.
  t.Stop();
  const std::string data = t.config().data_dir;
  { std::ofstream(data + "/sales.deleted").flush(); }
  REQUIRE(std::filesystem::exists(data + "/sales/CURRENT"));
  t.Start();
  CHECK(ListDbs(t) == std::vector<std::string>{"default"});
  CHECK(!std::filesystem::exists(data + "/sales"));
  CHECK(!std::filesystem::exists(data + "/sales.deleted"));
  CHECK(Query(t, "[:find ?e :where [?e :person/name _]]", {}, "sales")
            .status.error_code() == grpc::StatusCode::NOT_FOUND);
  // The name is free again.
  CreateDatabase(t, "sales");
  t.Restart();
  CHECK(ListDbs(t) == std::vector<std::string>{"default", "sales"});
}

TEST_CASE("server: bearer token") {
  TestServer t([](ServerConfig* c) { c->auth_token = "s3cret"; });
  // Without the token: UNAUTHENTICATED, nothing written.
  CHECK(TransactStatus(t, kPeopleSchema).error_code() ==
        grpc::StatusCode::UNAUTHENTICATED);
  pb::TransactRequest req;
  req.set_tx_data(kPeopleSchema);
  pb::TransactResponse resp;
  grpc::ClientContext wrong;
  wrong.AddMetadata("authorization", "Bearer nope");
  CHECK(t.stub().Transact(&wrong, req, &resp).error_code() ==
        grpc::StatusCode::UNAUTHENTICATED);
  QueryOutcome q = Query(t, "[:find ?e :where [?e :db/ident :person/name]]");
  CHECK(q.status.error_code() == grpc::StatusCode::UNAUTHENTICATED);

  grpc::ClientContext right;
  right.AddMetadata("authorization", "Bearer s3cret");
  REQUIRE(t.stub().Transact(&right, req, &resp).ok());

  pb::QueryRequest qreq;
  qreq.set_query("[:find ?e :where [?e :db/ident :person/name]]");
  grpc::ClientContext qctx;
  qctx.AddMetadata("authorization", "Bearer s3cret");
  auto reader = t.stub().Query(&qctx, qreq);
  pb::QueryResponse msg;
  int rows = 0;
  while (reader->Read(&msg)) rows += msg.rows_size();
  CHECK(reader->Finish().ok());
  CHECK(rows == 1);

  // The health service needs no token.
  grpc::GenericStub generic(t.channel());
  grpc::ClientContext hctx;
  grpc::ByteBuffer request;  // HealthCheckRequest{service: ""} is empty
  grpc::Slice empty;
  request = grpc::ByteBuffer(&empty, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&hctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                    &request, &response,
                    [&](grpc::Status s) { done.set_value(s); });
  grpc::Status hs = done.get_future().get();
  REQUIRE_MESSAGE(hs.ok(), StatusText(hs));
  std::vector<grpc::Slice> slices;
  REQUIRE(response.Dump(&slices).ok());
  std::string bytes;
  for (const auto& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  CHECK(bytes == std::string("\x08\x01", 2));  // status: SERVING
}

TEST_CASE("server: /metrics and /healthz") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 10));
  CHECK(TransactStatus(t, "[", "").error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  Query(t, "[:find ?e :where [?e :person/name _]]");
  int status = 0;
  CHECK(HttpGet(t.server().http_port(), "/healthz", &status) == "ok\n");
  CHECK(status == 200);
  // A stream's metrics are recorded when the server has seen the stream
  // end, which can be just after the client did.
  std::string m;
  for (int i = 0; i < 100; ++i) {
    m = HttpGet(t.server().http_port(), "/metrics", &status);
    if (MetricValue(m, "mentat_open_streams") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(status == 200);
  CHECK(
      m.find("mentat_rpc_requests_total{method=\"Transact\",code=\"OK\"} 2") !=
      std::string::npos);
  CHECK(m.find("mentat_rpc_requests_total{method=\"Transact\",code=\"INVALID_"
               "ARGUMENT\"} 1") != std::string::npos);
  CHECK(m.find("mentat_rpc_duration_seconds_bucket{method=\"Query\",code="
               "\"OK\",le=\"+Inf\"} 1") != std::string::npos);
  CHECK(m.find("mentat_transactions_total{database=\"default\"}") !=
        std::string::npos);
  CHECK(m.find("mentat_block_cache_hits_total") != std::string::npos);
  CHECK(MetricValue(m, "mentat_open_streams") == 0);
  HttpGet(t.server().http_port(), "/nothing", &status);
  CHECK(status == 404);
}

TEST_CASE("server: reflection lists the service") {
  TestServer t;
  grpc::GenericStub generic(t.channel());
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = generic.PrepareCall(
      &ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      &cq);
  void* tag;
  bool ok;
  auto next = [&](intptr_t want) {
    REQUIRE(cq.Next(&tag, &ok));
    CHECK(reinterpret_cast<intptr_t>(tag) == want);
    return ok;
  };
  call->StartCall(reinterpret_cast<void*>(1));
  REQUIRE(next(1));
  // ServerReflectionRequest{list_services: ""}: field 7, empty string.
  grpc::Slice list(std::string("\x3a\x00", 2));
  grpc::ByteBuffer request(&list, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  REQUIRE(next(2));
  call->WritesDone(reinterpret_cast<void*>(3));
  REQUIRE(next(3));
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(4));
  REQUIRE(next(4));
  std::vector<grpc::Slice> slices;
  REQUIRE(response.Dump(&slices).ok());
  std::string bytes;
  for (const auto& sl : slices) {
    bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  }
  CHECK(bytes.find("mentat.v1.Mentat") != std::string::npos);
  CHECK(bytes.find("grpc.health.v1.Health") != std::string::npos);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  next(5);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

TEST_CASE("server: TLS") {
  TempDir keys;
  std::filesystem::create_directories(keys.path());
  const std::string cert = keys.path() + "/cert.pem";
  const std::string key = keys.path() + "/key.pem";
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost "
      "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " > /dev/null 2>&1";
  if (std::system(command.c_str()) != 0) {
    MESSAGE("openssl is not available; TLS not tested");
    return;
  }
  TestServer t([&](ServerConfig* c) {
    c->tls_cert = cert;
    c->tls_key = key;
  });
  std::ifstream in(cert);
  std::stringstream pem;
  pem << in.rdbuf();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = pem.str();
  auto stub = pb::Mentat::NewStub(
      grpc::CreateChannel(t.Address(), grpc::SslCredentials(ssl)));
  pb::TransactRequest req;
  req.set_tx_data(kPeopleSchema);
  pb::TransactResponse resp;
  auto ctx = Ctx();
  grpc::Status s = stub->Transact(ctx.get(), req, &resp);
  CHECK_MESSAGE(s.ok(), StatusText(s));
  // A plaintext client cannot talk to it.
  auto ctx2 = Ctx(2000);
  CHECK_FALSE(t.stub().Transact(ctx2.get(), req, &resp).ok());
}

}  // namespace
}  // namespace mentat::server::testing
