#include "replica.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"
#include "mentat/storage/tx_log.h"
#include "snapshot_receiver.h"

namespace mentat::server {

namespace fs = std::filesystem;

absl::Status CheckEntryTerm(const v1::LogEntry& entry) {
  auto stored = storage::TxLogEntryTerm(entry.tx(), entry.entry());
  if (!stored.ok()) return stored.status();
  if (static_cast<uint64_t>(*stored) == entry.term()) return absl::OkStatus();
  return absl::DataLossError(
      StrCat("the primary sent transaction ", entry.tx(), " as term ",
             entry.term(), " but its log entry was written in term ", *stored));
}

namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
// How long a follower waits for a set-aside copy of its database to close
// before it tries again (reads waiting on it end at once; this bounds a
// long query still running on it).
constexpr absl::Duration kSetAsideWait = absl::Seconds(10);
// How often the primary's list of databases is read again. A database
// created on the primary is followed only once a listing shows it; if the
// primary dies before that, an asynchronous cluster loses the database
// whole (chaos found it at 2 s). A listing costs the primary a few
// microseconds, so the window is kept short.
constexpr auto kListEvery = std::chrono::milliseconds(200);
// Entries queued on the transactor and not yet applied, per database: the
// stream is read no faster than the store applies.
constexpr int kMaxInFlight = 4096;

[[nodiscard]] absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message());
}

// The primary refused the follower's basis (follow_call.cc's
// CheckFollower): the follower holds transactions the primary never
// wrote.
bool IsTailRefusal(const absl::Status& s) {
  if (s.code() != absl::StatusCode::kFailedPrecondition) return false;
  return absl::StrContains(s.message(), "the follower is ahead of this node") ||
         absl::StrContains(s.message(),
                           "the follower's history differs from this node's");
}

// The node refused the stream for its term (ack_call.cc's
// CheckServingTerm, or this replica's own check): it is not, or no longer,
// the primary this node follows. Not lasting: the election moves this
// node to the right primary, or the node's lease recovers, within a TTL.
bool IsTermRefusal(const absl::Status& s) {
  if (s.code() != absl::StatusCode::kFailedPrecondition) return false;
  return absl::StrContains(s.message(), "the follower has seen term") ||
         absl::StrContains(s.message(), "this node has seen: not applying");
}

}  // namespace

// One database being followed. Counters are read by /metrics.
struct Replica::Follower {
  std::string name;
  std::thread thread;
  std::atomic<int64_t> applied_tx{0};
  std::atomic<int64_t> primary_tx{0};
  std::atomic<int64_t> lag_ms{0};
  std::atomic<uint64_t> reconnects{0};
  std::atomic<uint64_t> entries{0};
  // 1 while the last stream ended with an error that retrying does not
  // fix by itself (the follower diverged, or the snapshot failed).
  std::atomic<int> failing{0};

  absl::Mutex mu;
  // The stream in progress.
  grpc::ClientContext* ctx ABSL_GUARDED_BY(mu) = nullptr;
  // Signalled when an entry's apply finishes.
  absl::CondVar applied_cv;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  absl::Status apply_error ABSL_GUARDED_BY(mu);
  // Acknowledgements to a semi-synchronous primary: the stream asks for
  // them, in its term; one Ack in flight at a time (ack_calls counts the
  // callbacks not yet finished, which FollowOnce waits for).
  bool acks_wanted ABSL_GUARDED_BY(mu) = false;
  uint64_t stream_term ABSL_GUARDED_BY(mu) = 0;
  bool ack_in_flight ABSL_GUARDED_BY(mu) = false;
  int ack_calls ABSL_GUARDED_BY(mu) = 0;
  int64_t acked_tx ABSL_GUARDED_BY(mu) = 0;
};

Replica::Replica(const ServerConfig& config, DatabaseRegistry& registry,
                 std::string primary, bool discard_tails, uint64_t term)
    : config_(config),
      registry_(registry),
      primary_(std::move(primary)),
      discard_tails_(discard_tails),
      name_(config.node_id.empty() ? std::string("replica") : config.node_id),
      term_(term) {}

void Replica::RaiseTerm(uint64_t term) {
  uint64_t seen = term_.load();
  while (seen < term && !term_.compare_exchange_weak(seen, term)) {
  }
}

bool Replica::LagOf(const std::string& database, int64_t* primary_tx,
                    int64_t* lag_tx, int64_t* lag_ms) const {
  absl::MutexLock lock(&mu_);
  auto it = followers_.find(database);
  if (it == followers_.end()) return false;
  const Follower& f = *it->second;
  const int64_t applied = f.applied_tx.load();
  *primary_tx = f.primary_tx.load();
  *lag_tx = *primary_tx > applied
                ? ((*primary_tx - applied) & storage::kCounterMask)
                : 0;
  *lag_ms = f.lag_ms.load();
  return true;
}

void Replica::MaybeAck(Follower* f) {
  struct AckCall {
    grpc::ClientContext ctx;
    v1::AckRequest request;
    v1::AckResponse response;
  };
  auto call = std::make_unique<AckCall>();
  {
    absl::MutexLock lock(&f->mu);
    if (!f->acks_wanted || f->ack_in_flight) return;
    const int64_t tx = f->applied_tx.load(std::memory_order_relaxed);
    if (tx <= f->acked_tx) return;
    f->ack_in_flight = true;
    f->ack_calls++;
    call->request.set_database(f->name);
    call->request.set_applied_tx(tx);
    call->request.set_term(f->stream_term);
    call->request.set_follower(name_);
    call->request.set_cluster(config_.cluster);
  }
  AddToken(&call->ctx);
  call->ctx.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(5));
  AckCall* raw = call.release();
  replication_->async()->Ack(
      &raw->ctx, &raw->request, &raw->response, [this, f, raw](grpc::Status s) {
        const int64_t tx = raw->request.applied_tx();
        {
          absl::MutexLock lock(&f->mu);
          f->ack_in_flight = false;
          if (s.ok()) f->acked_tx = std::max(f->acked_tx, tx);
        }
        if (s.ok()) {
          acks_sent_.fetch_add(1, std::memory_order_relaxed);
          // Entries applied meanwhile are acknowledged next.
          MaybeAck(f);
        } else {
          ack_errors_.fetch_add(1, std::memory_order_relaxed);
          spdlog::warn("replica: acknowledging tx {} of database {} to {}: {}",
                       tx, f->name, primary_, s.error_message());
        }
        delete raw;
        absl::MutexLock lock(&f->mu);
        f->ack_calls--;
        f->applied_cv.SignalAll();
      });
}

Replica::~Replica() { Stop(); }

absl::Status Replica::Start() {
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (config_.primary_tls || !config_.primary_tls_ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!config_.primary_tls_ca.empty()) {
      std::ifstream in(config_.primary_tls_ca);
      if (!in) {
        return absl::InvalidArgumentError(
            StrCat("--primary-tls-ca: cannot read ", config_.primary_tls_ca));
      }
      std::stringstream pem;
      pem << in.rdbuf();
      ssl.pem_root_certs = pem.str();
    }
    creds = grpc::SslCredentials(ssl);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(config_.max_message_bytes);
  // A primary that vanishes without closing the connection (a machine
  // gone) is noticed within seconds, not at the next TCP timeout.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  channel_ = grpc::CreateCustomChannel(primary_, creds, args);
  mentat_ = v1::Mentat::NewStub(channel_);
  replication_ = v1::Replication::NewStub(channel_);
  InitialSync();
  // Every database held here is followed from its basis.
  {
    absl::MutexLock lock(&mu_);
    for (const auto& db : registry_.List()) {
      auto f = std::make_unique<Follower>();
      f->name = db->name();
      Follower* raw = f.get();
      followers_[db->name()] = std::move(f);
      raw->thread = std::thread([this, raw] { FollowLoop(raw); });
    }
  }
  list_thread_ = std::thread([this] { ListLoop(); });
  spdlog::info("replica of {}: following {} database(s) held here", primary_,
               registry_.List().size());
  return absl::OkStatus();
}

void Replica::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [name, f] : followers_) {
      absl::MutexLock fl(&f->mu);
      if (f->ctx != nullptr) f->ctx->TryCancel();
    }
  }
  // Unlocking mu_ wakes every Pause (AwaitWithTimeout on stopping_).
  if (list_thread_.joinable()) list_thread_.join();
  // No follower is added once stopping (ListLoop has ended); the threads
  // take mu_ themselves, so they are joined without it.
  std::vector<Follower*> followers;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [name, f] : followers_) followers.push_back(f.get());
  }
  for (Follower* f : followers) {
    if (f->thread.joinable()) f->thread.join();
  }
}

bool Replica::Pause(std::chrono::milliseconds d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::FromChrono(d));
  return !stopping_;
}

void Replica::AddToken(grpc::ClientContext* ctx) const {
  if (!config_.primary_token.empty()) {
    ctx->AddMetadata("authorization", "Bearer " + config_.primary_token);
  }
}

void Replica::ListLoop() {
  bool warned = false;
  do {
    grpc::ClientContext ctx;
    AddToken(&ctx);
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(5));
    v1::ListDatabasesRequest request;
    v1::ListDatabasesResponse response;
    grpc::Status s = mentat_->ListDatabases(&ctx, request, &response);
    if (!s.ok()) {
      if (!warned) {
        spdlog::warn(
            "replica: cannot list the databases of the primary {}: "
            "{}: {}; retrying",
            primary_, static_cast<int>(s.error_code()), s.error_message());
        warned = true;
      }
      continue;
    }
    warned = false;
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    for (const auto& info : response.databases()) {
      if (followers_.count(info.name()) > 0) continue;
      auto f = std::make_unique<Follower>();
      f->name = info.name();
      Follower* raw = f.get();
      followers_[info.name()] = std::move(f);
      raw->thread = std::thread([this, raw] { FollowLoop(raw); });
    }
  } while (Pause(kListEvery));
}

namespace {

// Fetches a Snapshot of `name` into <data_dir>/<name>.bootstrap, checks
// it, opens it to check its basis, and moves it to <data_dir>/<name>.
[[nodiscard]] absl::Status Bootstrap(v1::Replication::Stub& stub,
                                     const ServerConfig& config,
                                     const std::string& name,
                                     grpc::ClientContext* ctx,
                                     std::atomic<uint64_t>* bytes_received,
                                     int64_t* basis_out) {
  const fs::path final_dir = fs::path(config.data_dir) / name;
  const fs::path tmp = fs::path(config.data_dir) / (name + ".bootstrap");
  std::error_code ec;
  fs::remove_all(tmp, ec);
  SnapshotReceiver receiver(name, tmp.string());
  v1::SnapshotRequest request;
  request.set_database(name);
  request.set_cluster(config.cluster);
  auto reader = stub.Snapshot(ctx, request);
  v1::SnapshotChunk chunk;
  absl::Status s;
  while (reader->Read(&chunk)) {
    bytes_received->fetch_add(chunk.ByteSizeLong(), std::memory_order_relaxed);
    s = receiver.Add(chunk);
    if (!s.ok()) {
      ctx->TryCancel();
      break;
    }
  }
  const grpc::Status finished = reader->Finish();
  if (s.ok()) s = receiver.Finish(FromGrpc(finished));
  if (s.ok()) {
    // The copy must open at the basis the primary announced.
    storage::StoreOptions options;
    options.column_images = false;
    auto store = storage::Store::Open(tmp.string(), options);
    if (!store.ok()) {
      s = absl::DataLossError(
          StrCat("the snapshot of database ", name,
                 " does not open: ", store.status().message()));
    } else if ((*store)->Latest()->basis_tx() != receiver.basis_tx()) {
      s = absl::DataLossError(
          StrCat("the snapshot of database ", name, " opens at basis ",
                 (*store)->Latest()->basis_tx(), ", not the announced ",
                 receiver.basis_tx()));
    }
  }
  if (s.ok() && fs::exists(final_dir, ec) &&
      !fs::exists(final_dir / "CURRENT", ec)) {
    // Not a store (RocksDB writes CURRENT first): files a set-aside copy
    // left at its old path after the move (storage writes no such file
    // now; older builds could). Kept beside the set-aside copies, not
    // deleted, and out of the way of the new copy.
    const fs::path debris =
        fs::path(config.data_dir) /
        StrCat(name, ".debris-", absl::ToUnixMicros(absl::Now()));
    fs::rename(final_dir, debris, ec);
    if (ec) {
      s = absl::UnavailableError(
          StrCat("moving ", final_dir.string(),
                 " (not a store) out of the way: ", ec.message()));
    } else {
      spdlog::warn("replica: {} held no store; moved to {}", final_dir.string(),
                   debris.string());
    }
  }
  if (s.ok()) {
    fs::rename(tmp, final_dir, ec);
    if (ec) {
      s = absl::UnavailableError(StrCat("moving the snapshot of ", name,
                                        " into place: ", ec.message()));
    }
  }
  if (!s.ok()) {
    fs::remove_all(tmp, ec);
    return s;
  }
  *basis_out = receiver.basis_tx();
  return absl::OkStatus();
}

}  // namespace

void Replica::InitialSync() {
  grpc::ClientContext ctx;
  AddToken(&ctx);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::ListDatabasesResponse response;
  grpc::Status s =
      mentat_->ListDatabases(&ctx, v1::ListDatabasesRequest(), &response);
  if (!s.ok()) {
    spdlog::warn(
        "replica: the primary {} does not answer ({}); serving what this "
        "node holds and bootstrapping the rest once it does",
        primary_, s.error_message());
    return;
  }
  for (const auto& info : response.databases()) {
    if (registry_.Get(info.name()).ok()) continue;
    grpc::ClientContext bctx;
    AddToken(&bctx);
    bctx.set_deadline(std::chrono::system_clock::now() +
                      std::chrono::minutes(10));
    int64_t basis = 0;
    spdlog::info("replica: bootstrapping database {} from a snapshot of {}",
                 info.name(), primary_);
    absl::Status b = Bootstrap(*replication_, config_, info.name(), &bctx,
                               &bytes_received_, &basis);
    if (b.ok()) b = registry_.Adopt(info.name()).status();
    if (b.ok()) {
      bootstraps_.fetch_add(1, std::memory_order_relaxed);
      spdlog::info("replica: database {} bootstrapped at basis {}", info.name(),
                   basis);
    } else {
      spdlog::warn(
          "replica: bootstrapping database {} failed: {}; retrying "
          "in the background",
          info.name(), b.ToString());
    }
  }
}

void Replica::FollowLoop(Follower* f) {
  auto backoff = kFirstBackoff;
  absl::Status last_error;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    auto database = registry_.Get(f->name);
    absl::Status s;
    const bool missing = !database.ok() && (database.status().code() ==
                                                absl::StatusCode::kNotFound ||
                                            registry_.IsSetAside(f->name));
    if (missing) {
      // A copy set aside (a discarded tail) must have closed first: the
      // new one opens at the same path, which RocksDB locks per process.
      s = registry_.AwaitSetAside(f->name, kSetAsideWait);
    }
    if (missing && s.ok()) {
      grpc::ClientContext ctx;
      AddToken(&ctx);
      {
        absl::MutexLock lock(&f->mu);
        f->ctx = &ctx;
      }
      bool stop = false;
      {
        absl::MutexLock lock(&mu_);
        stop = stopping_;
      }
      if (stop) ctx.TryCancel();
      int64_t basis = 0;
      spdlog::info("replica: bootstrapping database {} from a snapshot of {}",
                   f->name, primary_);
      s = Bootstrap(*replication_, config_, f->name, &ctx, &bytes_received_,
                    &basis);
      {
        absl::MutexLock lock(&f->mu);
        f->ctx = nullptr;
      }
      if (s.ok()) {
        bootstraps_.fetch_add(1, std::memory_order_relaxed);
        database = registry_.Adopt(f->name);
        s = database.status();
        if (s.ok()) {
          spdlog::info("replica: database {} bootstrapped at basis {}", f->name,
                       basis);
        } else if (s.code() != absl::StatusCode::kAlreadyExists) {
          // Not opened, so nothing uses it: removed, so that the next
          // attempt's copy can move into place.
          std::error_code ec;
          fs::remove_all(registry_.PathOf(f->name), ec);
        }
      }
    } else if (!missing && !database.ok()) {
      s = database.status();
    }
    if (s.ok()) {
      // A stream that applied something worked: the next one starts at
      // the first backoff again. (entries counts every stream's entries,
      // so it is compared, not tested against 0: a follower that once
      // applied would otherwise retry a lasting failure every 100 ms.)
      const uint64_t before = f->entries.load();
      s = FollowOnce(f, *database);
      if (f->entries.load() > before) backoff = kFirstBackoff;
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    f->reconnects.fetch_add(1, std::memory_order_relaxed);
    if (discard_tails_ && IsTailRefusal(s)) {
      // A former primary's tail: this node's log has transactions the
      // primary (elected after it) never received. They were never
      // replicated, so no other node has them either; the database is
      // moved aside, kept for an operator, and bootstrapped again.
      std::string aside;
      absl::Status moved = registry_.SetAside(f->name, &aside);
      if (moved.ok()) {
        tails_discarded_.fetch_add(1, std::memory_order_relaxed);
        spdlog::error(
            "replica: database {} holds transactions the primary {} does "
            "not have ({}); moved it aside to {} and bootstrapping it from "
            "the primary",
            f->name, primary_, std::string(s.message()), aside);
        last_error = absl::OkStatus();
        if (!Pause(kFirstBackoff)) return;
        continue;
      }
      spdlog::error("replica: cannot discard the tail of database {}: {}",
                    f->name, moved.ToString());
    }
    const bool term_refusal = IsTermRefusal(s);
    const bool lasting =
        !term_refusal && (s.code() == absl::StatusCode::kFailedPrecondition ||
                          s.code() == absl::StatusCode::kDataLoss);
    f->failing.store(lasting ? 1 : 0, std::memory_order_relaxed);
    if (s.ToString() != last_error.ToString()) {
      if (lasting) {
        spdlog::error("replica: following database {} from {} failed: {}",
                      f->name, primary_, s.ToString());
      } else {
        spdlog::warn(
            "replica: the stream of database {} from {} ended: {}; "
            "reconnecting",
            f->name, primary_, s.ToString());
      }
      last_error = s;
    }
    if (!Pause(term_refusal ? kFirstBackoff : backoff)) return;
    if (!term_refusal) backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

absl::Status Replica::FollowOnce(Follower* f,
                                 std::shared_ptr<Database> database) {
  grpc::ClientContext ctx;
  AddToken(&ctx);
  {
    absl::MutexLock lock(&f->mu);
    f->ctx = &ctx;
    f->apply_error = absl::OkStatus();
    // The serving node may be new (restarted): this stream acknowledges
    // the basis again.
    f->acked_tx = 0;
  }
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) ctx.TryCancel();
  }
  std::shared_ptr<const storage::Db> db = database->Latest();
  f->applied_tx.store(db->basis_tx(), std::memory_order_relaxed);
  v1::FollowRequest request;
  request.set_database(f->name);
  request.set_after_tx(db->basis_tx());
  request.set_after_tx_instant_micros(db->basis_tx_instant());
  request.set_min_term(term_.load());
  request.set_follower(name_);
  request.set_cluster(config_.cluster);
  auto reader = replication_->Follow(&ctx, request);
  v1::FollowResponse response;
  absl::Status apply_error;
  // Each entry names its predecessor by id and instant. Entries are applied
  // several at a time: when one is refused, those already submitted after
  // it must not apply on top of what this store holds under that id (a
  // deposed primary's own last transaction, committed after the stream
  // began, shares its id with the new primary's first).
  int64_t prev_instant = db->basis_tx_instant();
  while (reader->Read(&response)) {
    bytes_received_.fetch_add(response.ByteSizeLong(),
                              std::memory_order_relaxed);
    // A stream of an older term than one this node has seen is a deposed
    // primary's: none of its entries apply (the primary checks min_term
    // too; this covers a primary that does not).
    const uint64_t term = term_.load();
    if (term > 0 && response.term() < term) {
      apply_error = absl::FailedPreconditionError(
          StrCat("the node at ", primary_, " serves term ", response.term(),
                 ", older than term ", term,
                 " this node has seen: not applying a deposed primary's log"));
      ctx.TryCancel();
      break;
    }
    if (term > 0) RaiseTerm(response.term());
    {
      absl::MutexLock lock(&f->mu);
      f->acks_wanted = response.acks_wanted();
      f->stream_term = response.term();
    }
    f->primary_tx.store(response.primary_basis_tx(), std::memory_order_relaxed);
    if (response.entries_size() == 0 &&
        f->applied_tx.load(std::memory_order_relaxed) >=
            response.primary_basis_tx()) {
      f->lag_ms.store(0, std::memory_order_relaxed);
    }
    for (v1::LogEntry& e : *response.mutable_entries()) {
      apply_error = CheckEntryTerm(e);
      if (!apply_error.ok()) {
        ctx.TryCancel();  // the rest of the stream is not applied either
        break;
      }
      {
        absl::MutexLock lock(&f->mu);
        while (f->in_flight >= kMaxInFlight && f->apply_error.ok()) {
          f->applied_cv.Wait(&f->mu);
        }
        apply_error = f->apply_error;
        if (!apply_error.ok()) break;
        f->in_flight++;
      }
      storage::ReplicatedTx tx;
      tx.prev_tx = e.prev_tx();
      tx.tx = e.tx();
      tx.entry = std::move(*e.mutable_entry());
      const int64_t instant = e.tx_instant_micros();
      tx.prev_instant = prev_instant;
      prev_instant = instant;
      database->ApplyReplicated(
          std::move(tx),
          [this, f, instant](absl::StatusOr<storage::TxReport> report) {
            // Applied and durable (synced as the store syncs commits): a
            // semi-synchronous primary hears of it. Before in_flight drops,
            // so that FollowOnce's wait covers the Ack's start.
            if (report.ok()) {
              f->applied_tx.store(report->tx, std::memory_order_relaxed);
              MaybeAck(f);
            }
            absl::MutexLock lock(&f->mu);
            f->in_flight--;
            if (report.ok()) {
              f->applied_tx.store(report->tx, std::memory_order_relaxed);
              f->entries.fetch_add(1, std::memory_order_relaxed);
              f->lag_ms.store(
                  std::max<int64_t>(0, (NowMicros() - instant) / 1000),
                  std::memory_order_relaxed);
            } else if (f->apply_error.ok()) {
              f->apply_error = report.status();
              // The stream's entries after this one cannot apply either:
              // start again from the store's basis.
              if (f->ctx != nullptr) f->ctx->TryCancel();
            }
            f->applied_cv.SignalAll();
          });
    }
    if (!apply_error.ok()) break;
    // A caught-up replica acknowledges the basis it already has (a new
    // stream, or an Ack that failed earlier).
    MaybeAck(f);
  }
  const grpc::Status finished = reader->Finish();
  {
    // The callbacks name `ctx` through f->ctx: wait for them before it goes.
    absl::MutexLock lock(&f->mu);
    while (f->in_flight != 0) f->applied_cv.Wait(&f->mu);
    // No Ack starts once the stream is over; those in flight finish.
    f->acks_wanted = false;
    while (f->ack_calls != 0) f->applied_cv.Wait(&f->mu);
    f->ctx = nullptr;
    if (apply_error.ok()) apply_error = f->apply_error;
  }
  if (!apply_error.ok()) {
    return absl::Status(apply_error.code(),
                        StrCat("applying the primary's log of database ",
                               f->name, ": ", apply_error.message()));
  }
  if (finished.ok()) {
    return absl::UnavailableError("the primary ended the stream");
  }
  return FromGrpc(finished);
}

std::string Replica::RenderPrometheus() const {
  std::string out;
  StrAppend(&out,
            "# HELP mentat_replica_applied_basis_tx The basis this replica "
            "has applied, per database.\n"
            "# TYPE mentat_replica_applied_basis_tx gauge\n");
  absl::MutexLock lock(&mu_);
  for (const auto& [name, f] : followers_) {
    StrAppend(&out, "mentat_replica_applied_basis_tx{database=\"", name, "\"} ",
              f->applied_tx.load(), "\n");
  }
  StrAppend(&out,
            "# HELP mentat_replica_lag_tx Transactions the primary has "
            "published and this replica has not applied (as last heard).\n"
            "# TYPE mentat_replica_lag_tx gauge\n");
  for (const auto& [name, f] : followers_) {
    const int64_t applied = f->applied_tx.load();
    const int64_t primary = f->primary_tx.load();
    const int64_t lag =
        primary > applied ? ((primary - applied) & storage::kCounterMask) : 0;
    StrAppend(&out, "mentat_replica_lag_tx{database=\"", name, "\"} ", lag,
              "\n");
  }
  StrAppend(&out,
            "# HELP mentat_replica_lag_ms Milliseconds from the primary's "
            "instant of the last applied transaction to its apply here (0 "
            "once caught up and idle).\n"
            "# TYPE mentat_replica_lag_ms gauge\n");
  for (const auto& [name, f] : followers_) {
    StrAppend(&out, "mentat_replica_lag_ms{database=\"", name, "\"} ",
              f->lag_ms.load(), "\n");
  }
  StrAppend(&out,
            "# HELP mentat_replica_entries_applied_total Log entries applied "
            "from the primary.\n"
            "# TYPE mentat_replica_entries_applied_total counter\n");
  for (const auto& [name, f] : followers_) {
    StrAppend(&out, "mentat_replica_entries_applied_total{database=\"", name,
              "\"} ", f->entries.load(), "\n");
  }
  StrAppend(&out,
            "# HELP mentat_replica_reconnects_total Follow streams that "
            "ended and were started again.\n"
            "# TYPE mentat_replica_reconnects_total counter\n");
  for (const auto& [name, f] : followers_) {
    StrAppend(&out, "mentat_replica_reconnects_total{database=\"", name, "\"} ",
              f->reconnects.load(), "\n");
  }
  StrAppend(&out,
            "# HELP mentat_replica_bootstraps_total Databases bootstrapped "
            "from a snapshot of the primary.\n"
            "# TYPE mentat_replica_bootstraps_total counter\n"
            "mentat_replica_bootstraps_total ",
            bootstraps_.load(), "\n");
  StrAppend(&out,
            "# HELP mentat_replica_failing 1 while following the database "
            "fails in a way retrying does not fix (diverged, bad snapshot).\n"
            "# TYPE mentat_replica_failing gauge\n");
  for (const auto& [name, f] : followers_) {
    StrAppend(&out, "mentat_replica_failing{database=\"", name, "\"} ",
              f->failing.load(), "\n");
  }
  StrAppend(&out,
            "# HELP mentat_replication_bytes_received_total Bytes of Follow "
            "and Snapshot messages received from the primary.\n"
            "# TYPE mentat_replication_bytes_received_total counter\n"
            "mentat_replication_bytes_received_total ",
            bytes_received_.load(),
            "\n"
            "# HELP mentat_replica_acks_total Acknowledgements of durable "
            "bases sent to a semi-synchronous primary, and those that "
            "failed.\n"
            "# TYPE mentat_replica_acks_total counter\n"
            "mentat_replica_acks_total{outcome=\"ok\"} ",
            acks_sent_.load(),
            "\n"
            "mentat_replica_acks_total{outcome=\"error\"} ",
            ack_errors_.load(),
            "\n"
            "# HELP mentat_replica_term The lowest primary term this replica "
            "follows (0: not a cluster node).\n"
            "# TYPE mentat_replica_term gauge\n"
            "mentat_replica_term ",
            term_.load(), "\n");
  return out;
}

}  // namespace mentat::server
