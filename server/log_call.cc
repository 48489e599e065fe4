// TxRange (the log between two transactions) and Subscribe (the log from a
// transaction on, then every new commit as it happens).

#include <memory>

#include "batch_stream.h"
#include "call.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/tx_log.h"
#include "message_size.h"
#include "service.h"
#include "value_convert.h"

namespace mentat::server {

namespace {

using storage::EntityId;

// A message holds transactions until it has about this many datoms or
// TargetMessageBytes (message_size.h); a transaction bigger than that goes
// alone, and one bigger than TargetMessageBytes is split into parts
// (Transaction.continued).
constexpr size_t kBatchDatoms = 1000;
constexpr int kBatchTransactions = 256;

[[nodiscard]] absl::StatusOr<EntityId> TxArg(int64_t v, std::string_view name) {
  if (v == 0) return EntityId{0};
  auto t = storage::Db::ResolveT(v);
  if (!t.ok()) {
    return absl::InvalidArgumentError(StrCat(name, ": ", t.status().message()));
  }
  return *t;
}

// Where a log stream stands: the next transaction to read and, while a
// transaction too big for one message goes out in parts, the datoms of it
// not sent yet.
struct LogPosition {
  EntityId next = 0;
  EntityId split_tx = 0;
  int64_t split_instant = 0;
  std::vector<storage::Datom> rest;
  size_t rest_index = 0;
};

// Moves datoms from `datoms` (from *index on) into `t` while the message
// stays within `target` bytes (*bytes so far), at least one.
[[nodiscard]] absl::Status AddPart(const std::vector<storage::Datom>& datoms,
                                   size_t* index, size_t* bytes,
                                   const ServerConfig& config,
                                   v1::Transaction* t) {
  const size_t target = TargetMessageBytes(config);
  const size_t max_item = MaxItemBytes(config);
  bool first = true;
  while (*index < datoms.size()) {
    const storage::Datom& d = datoms[*index];
    const size_t b = ApproxProtoBytes(d);
    if (b > max_item) {
      return absl::ResourceExhaustedError(TooBigForAMessage(d, config));
    }
    if (!first && *bytes + b > target) break;
    first = false;
    DatomToProto(d, t->add_datoms());
    *bytes += b;
    ++*index;
  }
  return absl::OkStatus();
}

// Reads transactions from `pos` (advancing it) up to `to` (0: the basis),
// one message's worth. Returns whether the log had more.
[[nodiscard]] absl::StatusOr<bool> ReadBatch(
    const storage::Db& db, LogPosition* pos, EntityId to, bool omit_datoms,
    const ServerConfig& config,
    google::protobuf::RepeatedPtrField<v1::Transaction>* out) {
  const size_t target = TargetMessageBytes(config);
  size_t datoms = 0;
  size_t bytes = 0;
  if (!pos->rest.empty()) {
    v1::Transaction* t = out->Add();
    t->set_tx(pos->split_tx);
    t->set_tx_instant_micros(pos->split_instant);
    const size_t before = pos->rest_index;
    absl::Status s = AddPart(pos->rest, &pos->rest_index, &bytes, config, t);
    if (!s.ok()) return s;
    datoms += pos->rest_index - before;
    if (pos->rest_index < pos->rest.size()) {
      t->set_continued(true);
      return true;
    }
    pos->rest.clear();
    pos->rest.shrink_to_fit();
    pos->rest_index = 0;
  }
  bool full = false;
  absl::Status error;
  absl::Status s = storage::ReadTxLog(
      db, pos->next, to,
      [&](EntityId tx, const std::vector<storage::Datom>& tx_datoms) {
        size_t tx_bytes = 0;
        if (!omit_datoms) {
          for (const storage::Datom& d : tx_datoms) {
            tx_bytes += ApproxProtoBytes(d);
          }
        }
        if (out->size() > 0 &&
            (datoms + tx_datoms.size() > kBatchDatoms ||
             out->size() >= kBatchTransactions || bytes + tx_bytes > target)) {
          full = true;
          return false;
        }
        v1::Transaction* t = out->Add();
        t->set_tx(tx);
        t->set_tx_instant_micros(storage::TxInstantOf(tx, tx_datoms));
        pos->next = tx + 1;
        datoms += tx_datoms.size();
        if (omit_datoms) return true;
        if (bytes + tx_bytes <= target) {
          t->mutable_datoms()->Reserve(static_cast<int>(tx_datoms.size()));
          for (const storage::Datom& d : tx_datoms) {
            DatomToProto(d, t->add_datoms());
          }
          bytes += tx_bytes;
          return true;
        }
        // Too big for one message: the first part now, the rest later.
        size_t index = 0;
        error = AddPart(tx_datoms, &index, &bytes, config, t);
        if (!error.ok()) return false;
        if (index < tx_datoms.size()) {
          t->set_continued(true);
          pos->split_tx = tx;
          pos->split_instant = t->tx_instant_micros();
          pos->rest = tx_datoms;
          pos->rest_index = index;
          full = true;
          return false;
        }
        return true;
      });
  if (!s.ok()) return s;
  if (!error.ok()) return error;
  return full;
}

class TxRangeStream : public BatchStream {
 public:
  TxRangeStream(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : BatchStream(sc, Method::kTxRange, ctx) {}

  void Start(std::shared_ptr<Database> database, EntityId from, EntityId to) {
    database_ = std::move(database);
    db_ = database_->Latest();
    pos_.next = from;
    to_ = to;
    Begin();
  }

 protected:
  [[nodiscard]] absl::StatusOr<bool> Produce(grpc::ByteBuffer* out,
                                             bool* has_message) override {
    // A deleted database ends its streams (NOT_FOUND), as the proto says.
    absl::Status live = database_->CheckLive();
    if (!live.ok()) return live;
    v1::TxRangeResponse message;
    auto more = ReadBatch(*db_, &pos_, to_, false, sc().config,
                          message.mutable_transactions());
    if (!more.ok()) return more.status();
    if (message.transactions_size() == 0 && !first_) return false;
    first_ = false;
    message.set_basis_tx(db_->basis_tx());
    sc().metrics.AddRowsStreamed(Method::kTxRange, message.transactions_size());
    absl::Status s = SerializeResponse(message, out);
    if (!s.ok()) return s;
    *has_message = true;
    return *more;
  }

 private:
  std::shared_ptr<Database> database_;
  std::shared_ptr<const storage::Db> db_;
  LogPosition pos_;
  EntityId to_ = 0;
  bool first_ = true;
};

// Follows the log: reads what is there, then waits for the database's
// commit notifications. One task at a time, never a parked thread.
class SubscribeStream : public StreamReactor, public CommitListener {
 public:
  SubscribeStream(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : StreamReactor(sc, Method::kSubscribe, ctx) {
    sc.metrics.subscribers.fetch_add(1, std::memory_order_relaxed);
  }

  void Start(std::shared_ptr<Database> database, EntityId from,
             bool omit_datoms) {
    database_ = std::move(database);
    omit_datoms_ = omit_datoms;
    // Listen first, then read: a commit in between is seen either way.
    database_->AddListener(this);
    listening_ = true;
    pos_.next = from != 0 ? from : database_->Latest()->basis_tx() + 1;
    if (database_->deleted()) {
      OnClosed(absl::NotFoundError(
          StrCat("database ", database_->name(), " was deleted")));
    } else if (sc().shutting_down.load(std::memory_order_acquire)) {
      OnClosed(absl::UnavailableError("the server is shutting down"));
    }
    Schedule();
  }

  void OnCommit() override { Wake(); }

  void OnClosed(const absl::Status& why) override {
    {
      absl::MutexLock lock(&mu_);
      if (closed_.ok()) closed_ = why;
    }
    Wake();
  }

 protected:
  void OnRoom() override { Schedule(); }
  void OnCancelled() override {
    OnClosed(absl::CancelledError("the client cancelled"));
  }
  void OnStreamDone() override {
    if (listening_) database_->RemoveListener(this);
    sc().metrics.subscribers.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  void Wake() {
    bool schedule = false;
    {
      absl::MutexLock lock(&mu_);
      if (idle_) {
        idle_ = false;
        schedule = true;
      } else {
        notified_ = true;
      }
    }
    if (schedule) Schedule();
  }

  void Schedule() {
    Ref();
    sc().readers.Post([this] {
      Step();
      Unref();
    });
  }

  void Step() {
    absl::Status closed;
    {
      absl::MutexLock lock(&mu_);
      closed = closed_;
      notified_ = false;
    }
    if (!closed.ok()) {
      Done(closed);
      return;
    }
    if (cancelled()) {
      Done(absl::CancelledError("the client cancelled"));
      return;
    }
    std::shared_ptr<const storage::Db> db = database_->Latest();
    v1::SubscribeResponse message;
    auto more = ReadBatch(*db, &pos_, 0, omit_datoms_, sc().config,
                          message.mutable_transactions());
    if (!more.ok()) {
      Done(more.status());
      return;
    }
    if (message.transactions_size() > 0) {
      message.set_basis_tx(db->basis_tx());
      sc().metrics.AddRowsStreamed(Method::kSubscribe,
                                   message.transactions_size());
      grpc::ByteBuffer buffer;
      absl::Status s = SerializeResponse(message, &buffer);
      if (!s.ok()) {
        Done(s);
        return;
      }
      Push(std::move(buffer));  // OnRoom schedules the next step
      return;
    }
    bool again = false;
    {
      absl::MutexLock lock(&mu_);
      if (notified_ || !closed_.ok()) {
        notified_ = false;
        again = true;
      } else {
        idle_ = true;
      }
    }
    if (again) Schedule();
  }

  std::shared_ptr<Database> database_;
  bool omit_datoms_ = false;
  bool listening_ = false;
  LogPosition pos_;  // touched by one task at a time

  absl::Mutex mu_;
  bool idle_ ABSL_GUARDED_BY(mu_) = false;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

Writer* HandleTxRange(ServiceContext& sc, Ctx* ctx, const Buf* req) {
  auto* reactor = new TxRangeStream(sc, ctx);
  v1::TxRangeRequest request;
  absl::Status s = Admit(sc, ctx);
  if (s.ok()) s = ParseRequest(*req, &request);
  absl::StatusOr<EntityId> from = s.ok() ? TxArg(request.from_tx(), "from_tx")
                                         : absl::StatusOr<EntityId>(s);
  absl::StatusOr<EntityId> to =
      from.ok() ? TxArg(request.to_tx(), "to_tx") : from;
  if (!to.ok()) {
    reactor->Done(to.status());
    return reactor;
  }
  auto database = sc.registry.Get(request.database());
  if (!database.ok()) {
    reactor->Done(database.status());
    return reactor;
  }
  // Read-your-writes: the range is read once the database has the basis.
  AfterMinBasis(sc, *database, request.min_basis_tx(), SteadyDeadline(ctx),
                [reactor, database = *database, from = *from,
                 to = *to](absl::Status ready) {
                  if (!ready.ok()) return reactor->Done(ready);
                  reactor->Start(database, from, to);
                });
  return reactor;
}

Writer* HandleSubscribe(ServiceContext& sc, Ctx* ctx, const Buf* req) {
  auto* reactor = new SubscribeStream(sc, ctx);
  v1::SubscribeRequest request;
  absl::Status s = Admit(sc, ctx);
  if (s.ok()) s = ParseRequest(*req, &request);
  absl::StatusOr<EntityId> from = s.ok() ? TxArg(request.from_tx(), "from_tx")
                                         : absl::StatusOr<EntityId>(s);
  if (!from.ok()) {
    reactor->Done(from.status());
    return reactor;
  }
  auto database = sc.registry.Get(request.database());
  if (!database.ok()) {
    reactor->Done(database.status());
    return reactor;
  }
  AfterMinBasis(sc, *database, request.min_basis_tx(), SteadyDeadline(ctx),
                [reactor, database = *database, from = *from,
                 omit = request.omit_datoms()](absl::Status ready) {
                  if (!ready.ok()) return reactor->Done(ready);
                  reactor->Start(database, from, omit);
                });
  return reactor;
}

}  // namespace mentat::server
