// Pull and PullMany: resolve the entities, pull the pattern on a reader
// thread.

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "basis.h"
#include "call.h"
#include "mentat/base/str_cat.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/query/pull.h"
#include "mentat/storage/entity_resolution.h"
#include "query_limits.h"
#include "service.h"
#include "value_convert.h"
#include "value_limit.h"
#include "wire_encoding.h"
#include "wire_nesting.h"

namespace mentat::server {

namespace {

// Parsed pull patterns, per reader thread (no shared lock).
[[nodiscard]] absl::StatusOr<std::shared_ptr<const query::PullPattern>>
PatternOf(const std::string& text) {
  thread_local absl::flat_hash_map<std::string,
                                   std::shared_ptr<const query::PullPattern>>
      cache;
  if (auto it = cache.find(text); it != cache.end()) return it->second;
  auto form = edn::ParseEdn(text);
  if (!form.ok()) {
    return absl::InvalidArgumentError(
        StrCat("pattern: ", form.status().message()));
  }
  auto pattern = query::ParsePullPattern(*form);
  if (!pattern.ok()) {
    return absl::InvalidArgumentError(
        StrCat("pattern: ", pattern.status().message()));
  }
  auto shared = std::make_shared<const query::PullPattern>(*std::move(pattern));
  if (cache.size() >= 512) cache.clear();
  cache.emplace(text, shared);
  return shared;
}

// The entity an EntityRef names at `view`; NotFound if none.
[[nodiscard]] absl::StatusOr<storage::EntityId> ResolveEntity(
    const v1::EntityRef& ref, const storage::DbView& view,
    std::string_view where) {
  switch (ref.kind_case()) {
    case v1::EntityRef::kId:
      return storage::EntityOfId(ref.id(), where);
    case v1::EntityRef::kIdent:
      return storage::EntityOfIdent(view.schema(), ref.ident(), where);
    case v1::EntityRef::kLookup: {
      auto attr = storage::LookupRefAttribute(view.schema(),
                                              ref.lookup().attribute(), where);
      if (!attr.ok()) return attr.status();
      auto v = ProtoToAttributeValue(ref.lookup().value(), **attr,
                                     view.schema(), where);
      if (!v.ok()) return v.status();
      return storage::EntityOfLookupRef(view, **attr, *v, where);
    }
    case v1::EntityRef::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(StrCat(where, ": entity is not set"));
}

// A Pull runs inline (--inline-point-reads) only while it stays this
// small: a bigger one (recursion, components, long many-valued attributes)
// is handed to a reader and run again there, so that no gRPC thread works
// on it for long.
constexpr uint64_t kInlinePullScan = 4096;

// One run of a Pull. `inline_attempt`: on the gRPC thread, where it gives
// up past kInlinePullScan datoms and sets `*too_big_inline`.
[[nodiscard]] absl::StatusOr<grpc::ByteBuffer> RunPull(
    const UnaryCall& call, const v1::PullRequest& request, Database& database,
    bool inline_attempt, bool* too_big_inline) {
  *too_big_inline = false;
  auto resolved = ResolveBasis(
      database, request.basis(), 0,
      WithTxData{&request.with_tx_data(), MaxValueBytes(call.sc().config)});
  if (!resolved.ok()) return resolved.status();
  auto pattern = PatternOf(request.pattern());
  if (!pattern.ok()) return pattern.status();
  auto e = ResolveEntity(request.entity(), resolved->view, "entity");
  if (!e.ok()) return e.status();
  QueryLimits limits(call.sc().config, call.start(),
                     SteadyDeadline(call.context()), 0, call.cancel_flag(),
                     "pull");
  const uint64_t scan_limit = limits.options().max_rows_scanned;
  const bool capped =
      inline_attempt && (scan_limit == 0 || scan_limit > kInlinePullScan);
  if (capped) limits.mutable_options().max_rows_scanned = kInlinePullScan;
  auto executor =
      query::PullExecutor::Create(resolved->view, **pattern, limits.options());
  if (!executor.ok()) return executor.status();
  auto result = executor->Pull(*e);
  if (!result.ok()) {
    if (capped &&
        result.status().code() == absl::StatusCode::kResourceExhausted &&
        executor->rows_scanned() > kInlinePullScan) {
      *too_big_inline = true;
    }
    return limits.Outcome(result.status());
  }
  absl::Status deep = CheckWireNesting(*result, 0, "the pull result");
  if (!deep.ok()) return deep;
  grpc::ByteBuffer response;
  EncodePullResponse(*result, resolved->basis_tx, &response);
  return response;
}

}  // namespace

void ServePull(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  auto request = std::make_shared<v1::PullRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return call.Finish(s);
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return call.Finish(database.status());
  if (request->min_basis_tx() != 0) {
    // Read-your-writes: once the basis is there, on a reader.
    AfterMinBasis(
        sc, *database, request->min_basis_tx(), SteadyDeadline(call.context()),
        [call, request, database = *database](absl::Status ready) {
          if (!ready.ok()) return call.Finish(ready);
          call.sc().readers.Post([call, request, database] {
            bool unused = false;
            auto response = RunPull(call, *request, *database, false, &unused);
            if (!response.ok()) return call.Finish(response.status());
            call.FinishSerialized(*std::move(response));
          });
        });
    return;
  }
  auto on_reader = [call, request, database = *database] {
    bool unused = false;
    auto response = RunPull(call, *request, *database, false, &unused);
    if (!response.ok()) return call.Finish(response.status());
    call.FinishSerialized(*std::move(response));
  };
  // One entity's pull is a handful of seeks, mostly in the block cache:
  // cheaper to run here than to hand over (--inline-point-reads).
  // Transactions applied first (with_tx_data) make it no point read.
  if (!sc.config.inline_point_reads || request->with_tx_data_size() > 0) {
    sc.readers.Post(std::move(on_reader));
    return;
  }
  bool too_big = false;
  auto response = RunPull(call, *request, **database, true, &too_big);
  if (too_big) {
    sc.readers.Post(std::move(on_reader));
  } else if (!response.ok()) {
    call.Finish(response.status());
  } else {
    call.FinishSerialized(*std::move(response));
  }
}

void ServePullMany(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  auto request = std::make_shared<v1::PullManyRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return call.Finish(s);
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return call.Finish(database.status());
  std::shared_ptr<Database> db = *std::move(database);
  auto run = [call, request, database = db] {
    ServiceContext& sc = call.sc();
    auto resolved = ResolveBasis(
        *database, request->basis(), 0,
        WithTxData{&request->with_tx_data(), MaxValueBytes(sc.config)});
    if (!resolved.ok()) return call.Finish(resolved.status());
    auto pattern = PatternOf(request->pattern());
    if (!pattern.ok()) return call.Finish(pattern.status());
    QueryLimits limits(sc.config, call.start(), SteadyDeadline(call.context()),
                       0, call.cancel_flag(), "pull");
    auto executor = query::PullExecutor::Create(resolved->view, **pattern,
                                                limits.options());
    if (!executor.ok()) return call.Finish(executor.status());
    std::vector<edn::EdnValue> results;
    results.reserve(static_cast<size_t>(request->entities_size()));
    for (int i = 0; i < request->entities_size(); ++i) {
      if ((i & 255) == 255) {
        absl::Status wanted = call.StillWanted();
        if (!wanted.ok()) return call.Finish(limits.Outcome(wanted));
      }
      auto e = ResolveEntity(request->entities(i), resolved->view,
                             StrCat("entity ", i + 1));
      if (!e.ok()) {
        if (e.status().code() == absl::StatusCode::kNotFound) {
          results.push_back(edn::EdnValue::Nil());
          continue;
        }
        return call.Finish(e.status());
      }
      auto result = executor->Pull(*e);
      if (!result.ok()) return call.Finish(limits.Outcome(result.status()));
      absl::Status deep = CheckWireNesting(
          *result, 0, StrCat("the pull result of entity ", i + 1));
      if (!deep.ok()) return call.Finish(deep);
      results.push_back(*std::move(result));
    }
    grpc::ByteBuffer response;
    EncodePullManyResponse(results, resolved->basis_tx, &response);
    call.FinishSerialized(std::move(response));
  };
  // Read-your-writes: the read runs once the database has the basis.
  AfterMinBasis(sc, db, request->min_basis_tx(), SteadyDeadline(call.context()),
                [call, run](absl::Status ready) {
                  if (!ready.ok()) return call.Finish(ready);
                  call.sc().readers.Post(run);
                });
}

}  // namespace mentat::server
