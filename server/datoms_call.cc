// Datoms: raw index access, streamed in batches. Each batch re-seeks its
// cursor after the last key sent, so no cursor outlives a task and a
// broken stream resumes from the token's key.

#include <memory>

#include "basis.h"
#include "batch_stream.h"
#include "call.h"
#include "fingerprint.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_resolution.h"
#include "mentat/storage/index_range.h"
#include "mentat/storage/keys.h"
#include "message_size.h"
#include "service.h"
#include "value_convert.h"

namespace mentat::server {

namespace {

using storage::EntityId;
using storage::IndexOrder;

// The storage order of a wire index (checked to be one of the four).
IndexOrder ToIndexOrder(v1::Index index) {
  switch (index) {
    case v1::AEVT:
      return IndexOrder::kAevt;
    case v1::AVET:
      return IndexOrder::kAvet;
    case v1::VAET:
      return IndexOrder::kVaet;
    default:
      return IndexOrder::kEavt;
  }
}

// An entity position: an id, an ident keyword, or a lookup ref
// [keyword value].
[[nodiscard]] absl::StatusOr<EntityId> EntityComponent(
    const v1::Value& v, const storage::DbView& view, std::string_view where) {
  if (v.has_long_value()) return v.long_value();
  if (v.has_ref()) return v.ref();
  if (v.has_keyword()) {
    return storage::EntityOfIdent(view.schema(), v.keyword(), where);
  }
  if (v.has_list() && v.list().values_size() == 2 &&
      v.list().values(0).has_keyword()) {
    auto attr = storage::LookupRefAttribute(
        view.schema(), v.list().values(0).keyword(), where);
    if (!attr.ok()) return attr.status();
    auto value =
        ProtoToAttributeValue(v.list().values(1), **attr, view.schema(), where);
    if (!value.ok()) return value.status();
    return storage::EntityOfLookupRef(view, **attr, *value, where);
  }
  return absl::InvalidArgumentError(
      StrCat(where, ": an entity is an id, an ident keyword or a lookup ref"));
}

[[nodiscard]] absl::StatusOr<const storage::Attribute*> AttributeComponent(
    const v1::Value& v, const storage::Schema& schema, std::string_view where) {
  if (v.has_keyword()) {
    return storage::AttributeOfIdent(schema, v.keyword(), where);
  }
  if (v.has_long_value() || v.has_ref()) {
    return storage::AttributeOfId(
        schema, v.has_ref() ? v.ref() : v.long_value(), where);
  }
  return absl::InvalidArgumentError(
      StrCat(where, ": an attribute is a keyword or an id"));
}

// The key prefix the components select in `order`: decodes each component
// as its slot of the key asks (storage::SlotOf), then storage builds the
// range.
[[nodiscard]] absl::StatusOr<std::string> PrefixFor(
    IndexOrder order,
    const google::protobuf::RepeatedPtrField<v1::Value>& comps,
    const storage::DbView& view) {
  if (comps.size() > 3) {
    return absl::InvalidArgumentError(
        StrCat("at most 3 components, got ", comps.size()));
  }
  storage::IndexComponents range;
  range.count = comps.size();
  for (int i = 0; i < comps.size(); ++i) {
    const std::string where = StrCat("component ", i + 1);
    switch (storage::SlotOf(order, i)) {
      case storage::KeySlot::kEntity: {
        auto e = EntityComponent(comps[i], view, where);
        if (!e.ok()) return e.status();
        range.entity = *e;
        break;
      }
      case storage::KeySlot::kRefValue: {
        auto e =
            EntityComponent(comps[i], view, StrCat(where, " (a ref value)"));
        if (!e.ok()) return e.status();
        range.entity_value = *e;
        break;
      }
      case storage::KeySlot::kAttribute: {
        auto a = AttributeComponent(comps[i], view.schema(), where);
        if (!a.ok()) return a.status();
        range.attribute = *a;
        break;
      }
      case storage::KeySlot::kValue: {
        auto v = ProtoToAttributeValue(comps[i], *range.attribute,
                                       view.schema(), where);
        if (!v.ok()) return v.status();
        range.value = *std::move(v);
        break;
      }
    }
  }
  return storage::IndexRangePrefix(order, range);
}

uint64_t RequestDigest(const v1::DatomsRequest& r) {
  Fingerprint f;
  f.Add(r.database().empty() ? std::string_view("default") : r.database());
  f.Add(static_cast<uint64_t>(r.index()));
  f.Add(static_cast<uint64_t>(r.components_size()));
  for (const v1::Value& c : r.components()) f.Add(c.SerializeAsString());
  f.Add(static_cast<uint64_t>(r.basis().kind()));
  f.Add(static_cast<uint64_t>(r.basis().point_case()));
  f.Add(static_cast<uint64_t>(r.basis().tx()));
  f.Add(static_cast<uint64_t>(r.basis().instant_micros()));
  // Only when set, so that tokens of requests without it stay valid
  // across an upgrade.
  if (r.with_tx_data_size() > 0) {
    f.Add(static_cast<uint64_t>(r.with_tx_data_size()));
    for (const std::string& tx_data : r.with_tx_data()) f.Add(tx_data);
  }
  return f.value();
}

class DatomsStream : public BatchStream {
 public:
  DatomsStream(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : BatchStream(sc, Method::kDatoms, ctx) {}

  void Start(v1::DatomsRequest request, std::shared_ptr<Database> database) {
    request_ = std::move(request);
    database_ = std::move(database);
    Begin();
  }

 protected:
  [[nodiscard]] absl::StatusOr<bool> Produce(grpc::ByteBuffer* out,
                                             bool* has_message) override {
    // A deleted database ends its streams (NOT_FOUND), as the proto says.
    absl::Status live = database_->CheckLive();
    if (!live.ok()) return live;
    if (!view_) {
      absl::Status s = Setup();
      if (!s.ok()) return s;
    }
    auto cursor = view_->NewCursor(order_);
    cursor->Seek(prefix_);
    if (!last_key_.empty()) cursor->SeekWithin(last_key_);
    int64_t skip_same = last_key_.empty() ? 0 : same_key_count_;
    v1::DatomsResponse message;
    const int64_t limit = request_.limit();
    const size_t target_bytes = TargetMessageBytes(sc().config);
    size_t bytes = 0;
    bool more = true;
    while (true) {
      if (!cursor->Valid()) {
        more = false;
        break;
      }
      if (limit > 0 && position_ >= limit) {
        more = false;
        break;
      }
      if (message.datoms_size() >= batch_size_ || bytes >= target_bytes) break;
      const std::string_view key = cursor->key();
      if (skip_same > 0 && key == last_key_) {
        --skip_same;
        cursor->Next();
        continue;
      }
      skip_same = 0;
      if (key == last_key_) {
        ++same_key_count_;
      } else {
        last_key_.assign(key.data(), key.size());
        same_key_count_ = 1;
      }
      const storage::Datom& datom = cursor->datom();
      const size_t datom_bytes = ApproxProtoBytes(datom);
      if (datom_bytes > MaxItemBytes(sc().config)) {
        return absl::ResourceExhaustedError(
            TooBigForAMessage(datom, sc().config));
      }
      bytes += datom_bytes;
      DatomToProto(datom, message.add_datoms());
      ++position_;
      cursor->Next();
    }
    if (!cursor->status().ok()) return cursor->status();
    if (message.datoms_size() == 0 && !first_) return false;
    first_ = false;
    if (more && message.datoms_size() > 0 && !retained_) {
      retained_ = true;
      database_->Retain(db_);
    }
    message.set_basis_tx(basis_tx_);
    v1::ResumeToken token;
    token.set_version(1);
    token.set_request_digest(digest_);
    token.set_db_tx(basis_tx_);
    token.set_position(position_);
    token.set_last_key(last_key_);
    token.set_same_key_count(same_key_count_);
    message.set_resume_token(token.SerializeAsString());
    sc().metrics.AddRowsStreamed(Method::kDatoms, message.datoms_size());
    absl::Status s = SerializeResponse(message, out);
    if (!s.ok()) return s;
    *has_message = true;
    return more;
  }

 private:
  [[nodiscard]] absl::Status Setup() {
    digest_ = RequestDigest(request_);
    EntityId pinned = 0;
    if (!request_.resume_token().empty()) {
      v1::ResumeToken token;
      if (!token.ParseFromString(request_.resume_token()) ||
          token.version() != 1) {
        return absl::InvalidArgumentError("resume_token is not a valid token");
      }
      if (token.request_digest() != digest_) {
        return absl::InvalidArgumentError(
            "resume_token belongs to another request (database, index, "
            "components, basis and with_tx_data must be those of the "
            "original)");
      }
      pinned = token.db_tx();
      position_ = token.position();
      last_key_ = token.last_key();
      same_key_count_ = token.same_key_count();
    }
    // A resume applies the with_tx_data again to the same committed
    // value: the same ids (the clock's instant aside).
    auto resolved = ResolveBasis(
        *database_, request_.basis(), pinned,
        WithTxData{&request_.with_tx_data(), MaxValueBytes(sc().config)});
    if (!resolved.ok()) return resolved.status();
    // Held for resuming: the committed value the transactions apply to.
    db_ = resolved->committed;
    basis_tx_ = resolved->basis_tx;
    order_ = ToIndexOrder(request_.index());
    auto prefix = PrefixFor(order_, request_.components(), resolved->view);
    if (!prefix.ok()) return prefix.status();
    prefix_ = *std::move(prefix);
    if (!last_key_.empty() &&
        !std::string_view(last_key_).starts_with(prefix_)) {
      return absl::InvalidArgumentError(
          "resume_token does not fit the request's components");
    }
    batch_size_ = request_.batch_size() > 0
                      ? static_cast<int>(
                            std::min<uint32_t>(request_.batch_size(), 100000))
                      : 1000;
    view_.emplace(resolved->view);
    return absl::OkStatus();
  }

  v1::DatomsRequest request_;
  std::shared_ptr<Database> database_;
  std::shared_ptr<const storage::Db> db_;
  std::optional<storage::DbView> view_;
  IndexOrder order_ = IndexOrder::kEavt;
  std::string prefix_;
  std::string last_key_;
  int64_t same_key_count_ = 0;
  int64_t position_ = 0;
  int batch_size_ = 1000;
  uint64_t digest_ = 0;
  EntityId basis_tx_ = 0;
  bool first_ = true;
  bool retained_ = false;
};

}  // namespace

Writer* HandleDatoms(ServiceContext& sc, Ctx* ctx, const Buf* req) {
  auto* reactor = new DatomsStream(sc, ctx);
  v1::DatomsRequest request;
  absl::Status s = Admit(sc, ctx);
  if (s.ok()) s = ParseRequest(*req, &request);
  if (s.ok() && request.index() == v1::INDEX_UNSPECIFIED) {
    s = absl::InvalidArgumentError(
        "index: name the index to read (EAVT, AEVT, AVET or VAET)");
  } else if (s.ok() &&
             (request.index() < v1::EAVT || request.index() > v1::VAET)) {
    s = absl::InvalidArgumentError(StrCat("index: unknown index ",
                                          static_cast<int>(request.index()),
                                          " (EAVT, AEVT, AVET or VAET)"));
  }
  std::shared_ptr<Database> database;
  if (s.ok()) {
    auto db = sc.registry.Get(request.database());
    if (db.ok()) {
      database = *std::move(db);
    } else {
      s = db.status();
    }
  }
  if (!s.ok()) {
    reactor->Done(s);
    return reactor;
  }
  // Read-your-writes: the stream starts once the database has the basis.
  const int64_t min_basis = request.min_basis_tx();
  auto shared = std::make_shared<v1::DatomsRequest>(std::move(request));
  AfterMinBasis(sc, database, min_basis, SteadyDeadline(ctx),
                [reactor, shared, database](absl::Status ready) {
                  if (!ready.ok()) return reactor->Done(ready);
                  reactor->Start(std::move(*shared), database);
                });
  return reactor;
}

}  // namespace mentat::server
