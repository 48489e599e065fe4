// Replication.Follow: the log of a database after the follower's basis,
// then every commit as it is published (docs/replication.md). Fed like
// Subscribe: a commit listener wakes one task at a time on a reader
// thread; nothing polls and no thread parks.

#include <memory>

#include "call.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/tx_log.h"
#include "message_size.h"
#include "replication_service.h"
#include "stream_reactor.h"

namespace mentat::server {

namespace {

using storage::EntityId;

// A message holds entries up to about TargetMessageBytes, and at most this
// many (a follower applies a message's entries as one burst).
constexpr int kMaxEntries = 1024;

class FollowStream : public StreamReactor, public CommitListener {
 public:
  FollowStream(ServiceContext& sc, grpc::CallbackServerContext* ctx)
      : StreamReactor(sc, Method::kFollow, ctx) {
    sc.metrics.followers.fetch_add(1, std::memory_order_relaxed);
  }

  // `after`: the follower's basis (checked by the caller). `term`: this
  // node's term as primary when the stream starts (0: not a cluster
  // primary); with `check_term`, the stream ends once the node is no
  // longer the primary of that term (CheckServingTerm).
  void Start(std::shared_ptr<Database> database, EntityId after, uint64_t term,
             bool check_term) {
    term_ = term;
    check_term_ = check_term;
    database_ = std::move(database);
    // Listen first, then read: a commit in between is seen either way.
    database_->AddListener(this);
    listening_ = true;
    prev_ = after;
    next_ = after + 1;
    if (database_->deleted()) {
      OnClosed(absl::NotFoundError(
          StrCat("database ", database_->name(), " was deleted")));
    } else if (sc().shutting_down.load(std::memory_order_acquire)) {
      OnClosed(absl::UnavailableError("the server is shutting down"));
    }
    Schedule();
  }

  void OnCommit() override { Wake(); }
  void OnWritten() override { Wake(); }

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
    OnClosed(absl::CancelledError("the follower cancelled"));
  }
  void OnStreamDone() override {
    if (listening_) database_->RemoveListener(this);
    sc().metrics.followers.fetch_sub(1, std::memory_order_relaxed);
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

  // Reads one message's worth of entries after prev_.
  [[nodiscard]] absl::Status Fill(const storage::Db& db,
                                  v1::FollowResponse* message) {
    const size_t target = TargetMessageBytes(sc().config);
    size_t bytes = 0;
    absl::Status error;
    absl::Status s = storage::ReadTxLogRaw(
        db, prev_, next_, 0,
        [&](EntityId prev, EntityId tx, std::string_view entry) {
          if (message->entries_size() > 0 &&
              (message->entries_size() >= kMaxEntries ||
               bytes + entry.size() > target)) {
            return false;
          }
          auto datoms = storage::DecodeTxLogEntry(tx, entry);
          if (!datoms.ok()) {
            error = datoms.status();
            return false;
          }
          auto term = storage::TxLogEntryTerm(tx, entry);
          if (!term.ok()) {
            error = term.status();
            return false;
          }
          v1::LogEntry* e = message->add_entries();
          e->set_tx(tx);
          e->set_prev_tx(prev);
          e->set_term(static_cast<uint64_t>(*term));
          e->set_tx_instant_micros(storage::TxInstantOf(tx, *datoms));
          e->set_entry(entry.data(), entry.size());
          bytes += entry.size() + 32;
          prev_ = tx;
          next_ = tx + 1;
          return true;
        });
    if (!s.ok()) return s;
    return error;
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
      Done(absl::CancelledError("the follower cancelled"));
      return;
    }
    // A primary deposed (or whose lease may have lapsed) since the stream
    // began sends nothing more: its later entries may be a tail the next
    // primary does not have.
    if (check_term_) {
      absl::Status serving = CheckServingTerm(sc(), term_, /*exact=*/true,
                                              "Follow", /*check_lease=*/false);
      if (!serving.ok()) {
        Done(serving);
        return;
      }
    }
    // Written, not only published: a replica's fsync overlaps this node's
    // (StoreOptions::stream_before_sync; the same state otherwise).
    std::shared_ptr<const storage::Db> db = database_->LatestWritten();
    v1::FollowResponse message;
    absl::Status s = Fill(*db, &message);
    if (!s.ok()) {
      Done(s);
      return;
    }
    // The first message goes out even when empty: the follower learns the
    // primary's basis (its lag) at once.
    if (message.entries_size() > 0 || first_) {
      first_ = false;
      message.set_primary_basis_tx(db->basis_tx());
      message.set_primary_basis_tx_instant_micros(db->basis_tx_instant());
      message.set_term(term_);
      message.set_acks_wanted(sc().semi_sync != nullptr);
      sc().metrics.AddRowsStreamed(Method::kFollow, message.entries_size());
      sc().metrics.replication_bytes_sent.fetch_add(message.ByteSizeLong(),
                                                    std::memory_order_relaxed);
      grpc::ByteBuffer buffer;
      s = SerializeResponse(message, &buffer);
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
  bool listening_ = false;
  // Touched by one task at a time.
  EntityId prev_ = 0;
  EntityId next_ = 0;
  bool first_ = true;
  uint64_t term_ = 0;
  bool check_term_ = false;

  absl::Mutex mu_;
  bool idle_ ABSL_GUARDED_BY(mu_) = false;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);
};

// OK if a follower at `after` (with that transaction's instant, 0: not
// checked) can continue from this database's log.
[[nodiscard]] absl::Status CheckFollower(const Database& database,
                                         EntityId after,
                                         int64_t after_instant) {
  std::shared_ptr<const storage::Db> db = database.LatestWritten();
  if (after > db->basis_tx()) {
    return absl::FailedPreconditionError(StrCat(
        "the follower is ahead of this node: it has applied transaction ",
        after, " (t ", after & storage::kCounterMask, ") of database ",
        database.name(), ", whose basis here is ", db->basis_tx(), " (t ",
        db->basis_tx() & storage::kCounterMask,
        "); it holds transactions this node never wrote"));
  }
  if (after == 0 || after_instant == 0) return absl::OkStatus();
  auto datoms = storage::ReadTxLogEntry(*db, after);
  if (!datoms.ok()) {
    if (datoms.status().code() != absl::StatusCode::kNotFound) {
      return datoms.status();
    }
    return absl::FailedPreconditionError(
        StrCat("the follower's history differs from this node's: its basis, "
               "transaction ",
               after, ", is not in the log of database ", database.name()));
  }
  const int64_t instant = storage::TxInstantOf(after, *datoms);
  if (instant != after_instant) {
    return absl::FailedPreconditionError(
        StrCat("the follower's history differs from this node's: its "
               "transaction ",
               after, " has instant ", after_instant, ", this node's has ",
               instant, " (database ", database.name(), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

Writer* HandleFollow(ServiceContext& sc, Ctx* ctx, const Buf* req) {
  auto* reactor = new FollowStream(sc, ctx);
  v1::FollowRequest request;
  absl::Status s = Admit(sc, ctx);
  if (s.ok()) s = ParseRequest(*req, &request);
  if (s.ok()) s = CheckFollowerCluster(sc, request.cluster(), "Follow");
  EntityId after = 0;
  if (s.ok() && request.after_tx() != 0) {
    auto t = storage::Db::ResolveT(request.after_tx());
    if (t.ok()) {
      after = *t;
    } else {
      s = absl::InvalidArgumentError(
          StrCat("after_tx: ", t.status().message()));
    }
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
  if (s.ok()) {
    s = CheckServingTerm(sc, request.min_term(), /*exact=*/false, "Follow");
  }
  if (s.ok()) {
    s = CheckFollower(*database, after, request.after_tx_instant_micros());
  }
  if (!s.ok()) {
    reactor->Done(s);
    return reactor;
  }
  uint64_t term = 0;
  if (sc.role != nullptr) {
    const cluster::NodeRole::View view = sc.role->Get();
    if (view.kind == cluster::NodeRole::Kind::kPrimary) {
      term = static_cast<uint64_t>(view.term);
    }
  }
  if (request.min_term() != 0 && term < request.min_term()) {
    // The role changed since the check above.
    reactor->Done(absl::FailedPreconditionError(
        StrCat("Follow refused: the follower has seen term ",
               request.min_term(), "; this node is no longer its primary")));
    return reactor;
  }
  reactor->Start(std::move(database), after, term, request.min_term() != 0);
  return reactor;
}

}  // namespace mentat::server
