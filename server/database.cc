#include "database.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "mentat/base/str_cat.h"
#include "mentat/query/tx_data_parser.h"

namespace mentat::server {

namespace {

// The server's own schema, installed in every database it opens (each
// attribute when missing, so databases made before one existed get it).
constexpr char kRequestIdSchema[] = R"EDN([
  {:db/ident :mentat.tx/request-id
   :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one
   :db/index true
   :db/doc "The client request id of a Transact (mentatd idempotency)."}])EDN";
constexpr char kRequestDigestSchema[] = R"EDN([
  {:db/ident :mentat.tx/request-digest
   :db/valueType :db.type/long
   :db/cardinality :db.cardinality/one
   :db/doc "A fingerprint of the tx-data of a Transact with a request id."}])EDN";

// Most database values kept for resuming streams.
constexpr size_t kMaxKept = 64;

}  // namespace

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Database::Database(std::string name, std::string path,
                   const DatabaseOptions& options)
    : name_(std::move(name)), path_(std::move(path)), options_(options) {}

absl::StatusOr<std::shared_ptr<Database>> Database::Open(
    std::string name, std::string path, const DatabaseOptions& options,
    bool create) {
  std::shared_ptr<Database> db(
      new Database(std::move(name), std::move(path), options));
  storage::StoreOptions store_options = options.store;
  store_options.create_if_missing = create;
  // A column refused for its size is otherwise only a slow query.
  store_options.on_notice = [name = db->name_](std::string_view message) {
    spdlog::warn("database {}: {}", name, message);
  };
  if (store_options.stream_before_sync) {
    // The store is the database's: it never outlives it.
    store_options.on_written = [raw = db.get()] { raw->NotifyWritten(); };
  }
  auto store = storage::Store::Open(db->path_, store_options);
  if (!store.ok()) return store.status();
  db->store_ = *std::move(store);

  if (options.replica) {
    db->store_->SetRole(storage::StoreRole::kReplica);
    // Writes come from the primary only; the ledger's attributes are
    // there if the primary installed them (0 otherwise: no Transact runs
    // here to need them).
    const storage::Schema& schema = db->store_->Latest()->schema();
    if (const auto* a = schema.FindAttribute(kRequestIdAttr)) {
      db->request_id_attr_ = a->id;
    }
    if (const auto* a = schema.FindAttribute(kRequestDigestAttr)) {
      db->request_digest_attr_ = a->id;
    }
    db->ledger_ = std::make_unique<RequestLedger>(
        db->path_ + "/mentatd-requests.log", options.idempotency_window_micros,
        options.idempotency_cache_entries);
    return db;
  }

  auto install = [&](const char* ident,
                     const char* schema) -> absl::StatusOr<storage::EntityId> {
    const storage::Attribute* attr =
        db->store_->Latest()->schema().FindAttribute(ident);
    if (attr != nullptr) return attr->id;
    auto request = query::ParseTxData(schema);
    if (!request.ok()) return request.status();
    // The ledger's attributes are in the system namespace (mentat.*),
    // which only ops marked system may define.
    for (storage::TxOp& op : request->ops) op.system = true;
    auto report = db->store_->Transact(*std::move(request)).get();
    if (!report.ok()) {
      return absl::Status(report.status().code(),
                          StrCat("installing the server schema in ", db->path_,
                                 ": ", report.status().message()));
    }
    attr = db->store_->Latest()->schema().FindAttribute(ident);
    if (attr == nullptr) {
      return absl::InternalError("the server schema did not install");
    }
    return attr->id;
  };
  auto id_attr = install(kRequestIdAttr, kRequestIdSchema);
  if (!id_attr.ok()) return id_attr.status();
  db->request_id_attr_ = *id_attr;
  auto digest_attr = install(kRequestDigestAttr, kRequestDigestSchema);
  if (!digest_attr.ok()) return digest_attr.status();
  db->request_digest_attr_ = *digest_attr;

  db->ledger_ = std::make_unique<RequestLedger>(
      db->path_ + "/mentatd-requests.log", options.idempotency_window_micros,
      options.idempotency_cache_entries);
  absl::Status s = db->ledger_->Load(NowMicros());
  if (!s.ok()) return s;
  return db;
}

Database::~Database() {
  {
    absl::MutexLock lock(&kept_mu_);
    kept_.clear();
  }
  ledger_.reset();
  store_.reset();
  if (deleted()) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  if (on_destroyed_) on_destroyed_(deleted());
}

absl::Status Database::CheckLive() const {
  if (set_aside_.load(std::memory_order_acquire)) {
    return absl::UnavailableError(set_aside_why_);
  }
  if (!deleted()) return absl::OkStatus();
  return absl::NotFoundError(StrCat("database ", name_, " was deleted"));
}

void Database::Transact(storage::TxRequest request, storage::TxCallback done) {
  if (absl::Status live = CheckLive(); !live.ok()) {
    done(std::move(live));
    return;
  }
  store_->Transact(std::move(request),
                   [this, done = std::move(done)](
                       absl::StatusOr<storage::TxReport> report) mutable {
                     const bool committed = report.ok();
                     done(std::move(report));
                     if (committed) NotifyCommitted();
                   });
}

void Database::ApplyReplicated(storage::ReplicatedTx tx,
                               storage::TxCallback done) {
  if (absl::Status live = CheckLive(); !live.ok()) {
    done(std::move(live));
    return;
  }
  store_->ApplyReplicated(
      std::move(tx), [this, done = std::move(done)](
                         absl::StatusOr<storage::TxReport> report) mutable {
        const bool committed = report.ok();
        done(std::move(report));
        if (committed) NotifyCommitted();
      });
}

void Database::NotifyCommitted() {
  if (listener_count_.load(std::memory_order_acquire) == 0) return;
  absl::MutexLock lock(&listeners_mu_);
  for (CommitListener* l : listeners_) l->OnCommit();
}

void Database::NotifyWritten() {
  if (listener_count_.load(std::memory_order_acquire) == 0) return;
  absl::MutexLock lock(&listeners_mu_);
  for (CommitListener* l : listeners_) l->OnWritten();
}

void Database::AddListener(CommitListener* listener) {
  absl::MutexLock lock(&listeners_mu_);
  listeners_.push_back(listener);
  listener_count_.store(static_cast<int>(listeners_.size()),
                        std::memory_order_release);
}

void Database::RemoveListener(CommitListener* listener) {
  absl::MutexLock lock(&listeners_mu_);
  std::erase(listeners_, listener);
  listener_count_.store(static_cast<int>(listeners_.size()),
                        std::memory_order_release);
}

void Database::EndSubscriptions(const absl::Status& why) {
  absl::MutexLock lock(&listeners_mu_);
  for (CommitListener* l : listeners_) l->OnClosed(why);
}

void Database::Retain(const std::shared_ptr<const storage::Db>& db) {
  const int64_t now = NowMicros();
  const int64_t until = now + options_.resume_window_micros;
  absl::MutexLock lock(&kept_mu_);
  while (!kept_.empty() && kept_.front().until_micros < now) {
    kept_.pop_front();
  }
  for (Kept& k : kept_) {
    if (k.db->basis_tx() == db->basis_tx()) {
      k.until_micros = until;
      return;
    }
  }
  if (options_.resume_window_micros <= 0) return;
  kept_.push_back(Kept{until, db});
  if (kept_.size() > kMaxKept) kept_.pop_front();
}

std::shared_ptr<const storage::Db> Database::DbAt(storage::EntityId basis_tx) {
  std::shared_ptr<const storage::Db> latest = Latest();
  if (latest->basis_tx() == basis_tx) return latest;
  absl::MutexLock lock(&kept_mu_);
  for (const Kept& k : kept_) {
    if (k.db->basis_tx() == basis_tx) return k.db;
  }
  return nullptr;
}

void Database::MarkDeleted() {
  deleted_.store(true, std::memory_order_release);
  EndSubscriptions(
      absl::NotFoundError(StrCat("database ", name_, " was deleted")));
  store_->Close();
}

void Database::MarkSetAside(std::string why) {
  if (set_aside_.load(std::memory_order_acquire)) return;
  set_aside_why_ = std::move(why);
  set_aside_.store(true, std::memory_order_release);
  // After the flag: a listener added from here on sees it in CheckLive
  // (BasisWaiters::RunAt checks after adding), one added before is told.
  EndSubscriptions(absl::UnavailableError(set_aside_why_));
  store_->Close();
}

void Database::Close() {
  EndSubscriptions(absl::UnavailableError("the server is shutting down"));
  store_->Close();
}

}  // namespace mentat::server
