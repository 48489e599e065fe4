#include <doctest/doctest.h>

#include <set>
#include <thread>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

const pb::Value* MapGet(const pb::Value& map, const std::string& keyword) {
  for (const pb::MapEntry& e : map.map().entries()) {
    if (e.key().keyword() == keyword) return &e.value();
  }
  return nullptr;
}

TEST_CASE("server: pull and pull-many, by id, ident and lookup ref") {
  TestServer t;
  Transact(t, kPeopleSchema);
  pb::TransactResponse r =
      Transact(t, R"([{:db/id "ann" :person/name "Ann" :person/email "ann@x"
              :person/age 31 :person/friend "bob" :person/tag #{:a :b}}
             {:db/id "bob" :person/name "Bob"}])");
  const int64_t ann = r.tempids().at("ann");
  const int64_t bob = r.tempids().at("bob");

  pb::PullRequest req;
  req.set_pattern(
      "[:person/name :person/age {:person/friend [:person/name]} "
      ":person/tag]");
  req.mutable_entity()->set_id(ann);
  pb::PullResponse resp;
  auto ctx = Ctx();
  grpc::Status s = t.stub().Pull(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(resp.basis_tx() == r.tx());
  REQUIRE(resp.result().has_map());
  CHECK(MapGet(resp.result(), "person/name")->string_value() == "Ann");
  CHECK(MapGet(resp.result(), "person/age")->long_value() == 31);
  const pb::Value* friends = MapGet(resp.result(), "person/friend");
  REQUIRE(friends != nullptr);
  REQUIRE(friends->list().values_size() == 1);
  CHECK(MapGet(friends->list().values(0), "person/name")->string_value() ==
        "Bob");
  CHECK(MapGet(resp.result(), "person/tag")->list().values_size() == 2);

  // By lookup ref.
  req.mutable_entity()->mutable_lookup()->set_attribute(":person/email");
  req.mutable_entity()->mutable_lookup()->mutable_value()->set_string_value(
      "ann@x");
  ctx = Ctx();
  s = t.stub().Pull(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(MapGet(resp.result(), "person/name")->string_value() == "Ann");

  // A lookup ref naming no entity.
  req.mutable_entity()->mutable_lookup()->mutable_value()->set_string_value(
      "nobody@x");
  ctx = Ctx();
  CHECK(t.stub().Pull(ctx.get(), req, &resp).error_code() ==
        grpc::StatusCode::NOT_FOUND);
  // By ident.
  req.mutable_entity()->set_ident(":person/name");
  req.set_pattern("[:db/valueType]");
  ctx = Ctx();
  s = t.stub().Pull(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  // Bad patterns.
  req.set_pattern("[:person/name");
  ctx = Ctx();
  CHECK(t.stub().Pull(ctx.get(), req, &resp).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  req.set_pattern("[:no/such]");
  ctx = Ctx();
  CHECK(t.stub().Pull(ctx.get(), req, &resp).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);

  // as_of the schema transaction: Ann did not exist.
  req.set_pattern("[:person/name]");
  req.mutable_entity()->set_id(ann);
  req.mutable_basis()->set_kind(pb::Basis::AS_OF);
  req.mutable_basis()->set_tx(r.tx() - 1);
  ctx = Ctx();
  s = t.stub().Pull(ctx.get(), req, &resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(MapGet(resp.result(), "person/name") == nullptr);

  // Pull many: a missing lookup ref gives nil in its place.
  pb::PullManyRequest many;
  many.set_pattern("[:person/name]");
  many.add_entities()->set_id(bob);
  auto* missing = many.add_entities()->mutable_lookup();
  missing->set_attribute("person/name");
  missing->mutable_value()->set_string_value("Nobody");
  many.add_entities()->set_id(ann);
  pb::PullManyResponse many_resp;
  ctx = Ctx();
  s = t.stub().PullMany(ctx.get(), many, &many_resp);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  REQUIRE(many_resp.results_size() == 3);
  CHECK(MapGet(many_resp.results(0), "person/name")->string_value() == "Bob");
  CHECK(many_resp.results(1).has_nil());
  CHECK(MapGet(many_resp.results(2), "person/name")->string_value() == "Ann");
}

std::vector<pb::Datom> ReadDatoms(TestServer& t, const pb::DatomsRequest& req,
                                  grpc::Status* status,
                                  std::vector<std::string>* tokens = nullptr) {
  std::vector<pb::Datom> out;
  auto ctx = Ctx();
  auto reader = t.stub().Datoms(ctx.get(), req);
  pb::DatomsResponse msg;
  while (reader->Read(&msg)) {
    for (const pb::Datom& d : msg.datoms()) out.push_back(d);
    if (tokens != nullptr) tokens->push_back(msg.resume_token());
  }
  *status = reader->Finish();
  return out;
}

TEST_CASE("server: datoms streams an index by components, resumably") {
  TestServer t;
  Transact(t, kPeopleSchema);
  for (int i = 0; i < 2500; i += 500) Transact(t, People(i, 500));
  pb::DatomsRequest req;
  req.set_index(pb::AEVT);
  req.add_components()->set_keyword(":person/age");
  req.set_batch_size(300);
  grpc::Status s;
  std::vector<std::string> tokens;
  std::vector<pb::Datom> all = ReadDatoms(t, req, &s, &tokens);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK(all.size() == 2500);
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].e() < all[i].e());

  // Resume from the third message's token.
  pb::DatomsRequest again = req;
  again.set_resume_token(tokens[2]);
  std::vector<pb::Datom> rest = ReadDatoms(t, again, &s);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  REQUIRE(rest.size() == 2500 - 900);
  CHECK(rest.front().e() == all[900].e());

  // AVET with a value, EAVT for one entity, VAET needs refs.
  pb::DatomsRequest avet;
  avet.set_index(pb::AVET);
  avet.add_components()->set_keyword("person/age");
  avet.add_components()->set_long_value(7);
  CHECK(ReadDatoms(t, avet, &s).size() == 25);
  CHECK(s.ok());
  pb::DatomsRequest eavt;
  eavt.set_index(pb::EAVT);
  auto* lookup = eavt.add_components()->mutable_list();
  lookup->add_values()->set_keyword("person/name");
  lookup->add_values()->set_string_value("person 3");
  CHECK(ReadDatoms(t, eavt, &s).size() == 2);
  CHECK(s.ok());
  avet.mutable_components(1)->set_string_value("seven");
  ReadDatoms(t, avet, &s);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  // No index named (the enum's zero, INDEX_UNSPECIFIED), or none known.
  pb::DatomsRequest unnamed;
  unnamed.add_components()->set_keyword("person/age");
  ReadDatoms(t, unnamed, &s);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("name the index to read") != std::string::npos);
  unnamed.set_index(static_cast<pb::Index>(9));
  ReadDatoms(t, unnamed, &s);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(s.error_message().find("unknown index 9") != std::string::npos);
  pb::DatomsRequest vaet;
  vaet.set_index(pb::VAET);
  vaet.add_components()->set_long_value(1);
  vaet.add_components()->set_keyword("person/age");
  ReadDatoms(t, vaet, &s);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  // History sees retractions.
  Transact(t, R"([[:db/add [:person/name "person 3"] :person/age 40]])");
  pb::DatomsRequest hist = eavt;
  hist.add_components()->set_keyword("person/age");
  hist.mutable_basis()->set_kind(pb::Basis::HISTORY);
  std::vector<pb::Datom> h = ReadDatoms(t, hist, &s);
  REQUIRE(s.ok());
  CHECK(h.size() == 3);  // 3 asserted, 3 retracted, 40 asserted
}

TEST_CASE("server: tx range and subscribe follow the log") {
  TestServer t;
  pb::TransactResponse schema = Transact(t, kPeopleSchema);
  std::vector<int64_t> txs;
  for (int i = 0; i < 5; ++i)
    txs.push_back(Transact(t, People(i * 10, 10)).tx());

  pb::TxRangeRequest range;
  range.set_from_tx(txs[1]);
  range.set_to_tx(txs[4]);
  auto ctx = Ctx();
  auto reader = t.stub().TxRange(ctx.get(), range);
  pb::TxRangeResponse msg;
  std::vector<pb::Transaction> got;
  while (reader->Read(&msg)) {
    for (const auto& tx : msg.transactions()) got.push_back(tx);
  }
  REQUIRE(reader->Finish().ok());
  REQUIRE(got.size() == 3);
  CHECK(got[0].tx() == txs[1]);
  CHECK(got[2].tx() == txs[3]);
  CHECK(got[0].datoms_size() == 10 * 2 + 1);
  CHECK(got[0].tx_instant_micros() > 0);

  // Subscribe from the schema transaction: catch up, then follow.
  pb::SubscribeRequest sub;
  sub.set_from_tx(schema.tx());
  grpc::ClientContext sub_ctx;
  auto stream = t.stub().Subscribe(&sub_ctx, sub);
  std::vector<int64_t> seen;
  pb::SubscribeResponse sm;
  while (seen.size() < 6 && stream->Read(&sm)) {
    for (const auto& tx : sm.transactions()) seen.push_back(tx.tx());
  }
  REQUIRE(seen.size() == 6);
  CHECK(seen[0] == schema.tx());
  CHECK(seen[5] == txs[4]);
  std::thread writer([&] {
    for (int i = 0; i < 20; ++i) Transact(t, People(1000 + i, 1));
  });
  while (seen.size() < 26 && stream->Read(&sm)) {
    for (const auto& tx : sm.transactions()) seen.push_back(tx.tx());
  }
  writer.join();
  CHECK(seen.size() == 26);
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i - 1] < seen[i]);
  sub_ctx.TryCancel();
  CHECK(stream->Finish().error_code() == grpc::StatusCode::CANCELLED);
}

TEST_CASE("server: schema, stats, explain") {
  TestServer t;
  Transact(t, kPeopleSchema);
  Transact(t, People(0, 300));
  pb::SchemaRequest sreq;
  pb::SchemaResponse schema;
  auto ctx = Ctx();
  REQUIRE(t.stub().Schema(ctx.get(), sreq, &schema).ok());
  bool found = false;
  for (const pb::Attribute& a : schema.attributes()) {
    if (a.ident() == "person/name") {
      found = true;
      CHECK(a.value_type() == ":db.type/string");
      CHECK(a.unique() == pb::Attribute::UNIQUE_IDENTITY);
      CHECK_FALSE(a.many());
    }
    if (a.ident() == "person/friend") CHECK(a.many());
  }
  CHECK(found);
  CHECK(schema.idents_size() > schema.attributes_size() - 1);

  pb::StatsRequest streq;
  streq.set_value_counts(true);
  pb::StatsResponse stats;
  ctx = Ctx();
  REQUIRE(t.stub().Stats(ctx.get(), streq, &stats).ok());
  bool age = false;
  for (const pb::AttributeStats& a : stats.attributes()) {
    if (a.ident() == "person/age") {
      age = true;
      CHECK(a.datoms() == 300);
      CHECK(a.distinct_values() == 100);
      CHECK(a.value_counts_size() == 100);
    }
  }
  CHECK(age);
  CHECK(stats.transactor().transactions() >= 2);
  CHECK(stats.storage().disk_size_bytes() > 0);

  pb::ExplainRequest ereq;
  ereq.set_query("[:find ?e :in $ ?n :where [?e :person/name ?n]]");
  ereq.add_inputs()->set_edn("\"person 1\"");
  pb::ExplainResponse plan;
  ctx = Ctx();
  grpc::Status s = t.stub().Explain(ctx.get(), ereq, &plan);
  REQUIRE_MESSAGE(s.ok(), StatusText(s));
  CHECK_FALSE(plan.plan().empty());
}

}  // namespace
}  // namespace mentat::server::testing
