// Pull and PullMany: resolve the entities, pull the pattern on a reader
// thread.

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "basis.h"
#include "call.h"
#include "mentat/query/edn/edn_reader.h"
#include "mentat/query/pull.h"
#include "mentat/storage/str_cat.h"
#include "query_limits.h"
#include "service.h"
#include "value_convert.h"
#include "wire_nesting.h"

namespace mentat::server {

namespace {

// Parsed pull patterns, per reader thread (no shared lock).
absl::StatusOr<std::shared_ptr<const query::PullPattern>> PatternOf(
    const std::string& text) {
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

std::string_view StripColon(std::string_view s) {
  if (s.starts_with(":")) s.remove_prefix(1);
  return s;
}

// The entity an EntityRef names at `view`; NotFound if none.
absl::StatusOr<storage::EntityId> ResolveEntity(const v1::EntityRef& ref,
                                                const storage::DbView& view,
                                                std::string_view where) {
  const storage::Schema& schema = view.schema();
  switch (ref.kind_case()) {
    case v1::EntityRef::kId:
      if (ref.id() < 0) {
        return absl::InvalidArgumentError(
            StrCat(where, ": entity id ", ref.id(), " is negative"));
      }
      return ref.id();
    case v1::EntityRef::kIdent: {
      std::string_view ident = StripColon(ref.ident());
      auto e = schema.EntityForIdent(ident);
      if (!e) {
        return absl::NotFoundError(
            StrCat(where, ": no entity has the ident :", ident));
      }
      return *e;
    }
    case v1::EntityRef::kLookup: {
      std::string_view ident = StripColon(ref.lookup().attribute());
      const storage::Attribute* attr = schema.FindAttribute(ident);
      if (attr == nullptr) {
        return absl::InvalidArgumentError(
            StrCat(where, ": lookup ref on unknown attribute :", ident));
      }
      if (attr->unique == storage::Unique::kNone) {
        return absl::InvalidArgumentError(StrCat(
            where, ": lookup ref on :", ident, ", which is not :db/unique"));
      }
      auto v =
          ProtoToAttributeValue(ref.lookup().value(), *attr, schema, where);
      if (!v.ok()) return v.status();
      auto e = view.LookupUnique(attr->id, *v);
      if (!e.ok()) return e.status();
      if (!e->has_value()) {
        return absl::NotFoundError(
            StrCat(where, ": no entity has :", ident, " ", v->DebugString()));
      }
      return **e;
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
absl::StatusOr<v1::PullResponse> RunPull(const UnaryCall& call,
                                         const v1::PullRequest& request,
                                         Database& database,
                                         bool inline_attempt,
                                         bool* too_big_inline) {
  *too_big_inline = false;
  auto resolved = ResolveBasis(database, request.basis());
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
  v1::PullResponse response;
  EdnToProto(*result, response.mutable_result());
  response.set_basis_tx(resolved->basis_tx);
  return response;
}

}  // namespace

Unary* HandlePull(ServiceContext& sc, Ctx* ctx, const Buf* req, Buf* resp) {
  UnaryCall call(sc, Method::kPull, ctx, resp);
  auto request = std::make_shared<v1::PullRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return FinishNow(call, s);
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return FinishNow(call, database.status());
  auto on_reader = [call, request, database = *database] {
    bool unused = false;
    auto response = RunPull(call, *request, *database, false, &unused);
    if (!response.ok()) return call.Finish(response.status());
    call.Finish(absl::OkStatus(), &*response);
  };
  // One entity's pull is a handful of seeks, mostly in the block cache:
  // cheaper to run here than to hand over (--inline-point-reads).
  if (!sc.config.inline_point_reads) {
    sc.readers.Post(std::move(on_reader));
    return call.reactor();
  }
  bool too_big = false;
  auto response = RunPull(call, *request, **database, true, &too_big);
  if (too_big) {
    sc.readers.Post(std::move(on_reader));
  } else if (!response.ok()) {
    call.Finish(response.status());
  } else {
    call.Finish(absl::OkStatus(), &*response);
  }
  return call.reactor();
}

Unary* HandlePullMany(ServiceContext& sc, Ctx* ctx, const Buf* req, Buf* resp) {
  UnaryCall call(sc, Method::kPullMany, ctx, resp);
  auto request = std::make_shared<v1::PullManyRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return FinishNow(call, s);
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return FinishNow(call, database.status());
  sc.readers.Post([call, request, database = *std::move(database)] {
    ServiceContext& sc = call.sc();
    auto resolved = ResolveBasis(*database, request->basis());
    if (!resolved.ok()) return call.Finish(resolved.status());
    auto pattern = PatternOf(request->pattern());
    if (!pattern.ok()) return call.Finish(pattern.status());
    QueryLimits limits(sc.config, call.start(), SteadyDeadline(call.context()),
                       0, call.cancel_flag(), "pull");
    auto executor = query::PullExecutor::Create(resolved->view, **pattern,
                                                limits.options());
    if (!executor.ok()) return call.Finish(executor.status());
    v1::PullManyResponse response;
    response.mutable_results()->Reserve(request->entities_size());
    for (int i = 0; i < request->entities_size(); ++i) {
      if ((i & 255) == 255) {
        absl::Status wanted = call.StillWanted();
        if (!wanted.ok()) return call.Finish(limits.Outcome(wanted));
      }
      v1::Value* out = response.add_results();
      auto e = ResolveEntity(request->entities(i), resolved->view,
                             StrCat("entity ", i + 1));
      if (!e.ok()) {
        if (e.status().code() == absl::StatusCode::kNotFound) {
          out->set_nil(true);
          continue;
        }
        return call.Finish(e.status());
      }
      auto result = executor->Pull(*e);
      if (!result.ok()) return call.Finish(limits.Outcome(result.status()));
      absl::Status deep = CheckWireNesting(
          *result, 0, StrCat("the pull result of entity ", i + 1));
      if (!deep.ok()) return call.Finish(deep);
      EdnToProto(*result, out);
    }
    response.set_basis_tx(resolved->basis_tx);
    call.Finish(absl::OkStatus(), &response);
  });
  return call.reactor();
}

}  // namespace mentat::server
