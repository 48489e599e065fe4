// Import: client-streaming bulk load (see the Import RPC in mentat.proto).
//
// The gRPC reader hands each message to a reader thread, which parses its
// tx-data and appends the transactions to a bounded queue; the next message
// is read only when the queue has room again (flow control: a fast client
// cannot make the server buffer the whole import). A dedicated import
// thread drains the queue:
//
//  * into an empty database (nothing but the bootstrap and the server's own
//    schema) through Store::Import, which applies the transactions on the
//    transactor thread and ingests sorted SST files ("ingest");
//  * into any other database as ordinary transactions, each with its own
//    tempids, several in flight so that group commit batches them
//    ("transact").
//
// One import at a time per database; a second gets RESOURCE_EXHAUSTED.

#include <spdlog/spdlog.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "call.h"
#include "mentat/base/str_cat.h"
#include "mentat/query/tx_data_parser.h"
#include "mentat/storage/tx_log.h"
#include "service.h"
#include "tsan_handoff.h"
#include "value_limit.h"

namespace mentat::server {
namespace {

using Clock = std::chrono::steady_clock;

// Parsed transactions waiting for the importer; reading stops above
// either bound. The ops bound is the one that holds memory: a parsed op
// is about 600 bytes (TxOp) before its strings, and a bulk load's
// transactions carry thousands (m's 3,700 each: 256 of them held some
// 570 MB). 128K ops is well over what the transactor applies while the
// next message (4 MB from mentat-bench) is read and parsed.
constexpr size_t kQueueTransactions = 256;
constexpr size_t kQueueOps = size_t{1} << 17;
// Transactions in flight at once in "transact" mode.
constexpr size_t kTransactInFlight = 16;

// True if the database holds nothing but the bootstrap schema and the
// server's own schema (attributes in the mentat.tx namespace): reads the
// first few log entries.
[[nodiscard]] absl::StatusOr<bool> IsEmpty(Database& database) {
  constexpr int kMaxEntries = 8;
  std::shared_ptr<const storage::Db> db = database.Latest();
  int entries = 0;
  bool only_server_schema = true;
  absl::Status s = storage::ReadTxLog(
      *db, 0, 0,
      [&](storage::EntityId tx, const std::vector<storage::Datom>& datoms) {
        // The first entry is the bootstrap.
        if (++entries >= 2) {
          for (const storage::Datom& d : datoms) {
            if (d.e == tx) continue;
            const storage::Attribute* attr = db->schema().FindAttribute(d.e);
            if (attr == nullptr || !attr->ident.starts_with("mentat.tx/")) {
              only_server_schema = false;
            }
          }
        }
        return entries <= kMaxEntries && only_server_schema;
      });
  if (!s.ok()) return s;
  return entries <= kMaxEntries && only_server_schema;
}

class ImportReactor;

// What the gRPC side, the parsing tasks and the import thread share.
// Everything below mu is guarded by it.
struct ImportState {
  ServiceContext* sc = nullptr;
  Ctx* ctx = nullptr;
  Clock::time_point start;

  absl::Mutex mu;
  absl::CondVar changed;
  ImportReactor* reactor ABSL_GUARDED_BY(mu) = nullptr;  // null once finished
  std::deque<storage::TxRequest> queue ABSL_GUARDED_BY(mu);
  size_t queued_ops ABSL_GUARDED_BY(mu) = 0;  // of the transactions in queue
  // Transactions parsed (the index of the next).
  int64_t parsed ABSL_GUARDED_BY(mu) = 0;
  bool reading ABSL_GUARDED_BY(mu) = false;  // a read is outstanding
  // The queue was full when a read was due.
  bool read_blocked ABSL_GUARDED_BY(mu) = false;
  bool end_of_input ABSL_GUARDED_BY(mu) = false;  // the client half-closed
  // Stops the import after the transactions queued before it.
  absl::Status parse_error ABSL_GUARDED_BY(mu);
  // Stops the import at once (cancellation, the call finished).
  absl::Status abort ABSL_GUARDED_BY(mu);

  // Set once, from the first message (before the import thread starts).
  std::shared_ptr<Database> database;
  grpc::ByteBuffer buffer;
  Buf* response = nullptr;
};

class ImportReactor final : public Reader {
 public:
  ImportReactor(ServiceContext& sc, Ctx* ctx, Buf* response)
      : state_(std::make_shared<ImportState>()) {
    sc.active_calls.fetch_add(1, std::memory_order_relaxed);
    state_->sc = &sc;
    state_->ctx = ctx;
    state_->response = response;
    state_->start = Clock::now();
    state_->reactor = this;
    absl::Status s = Admit(sc, ctx);
    if (s.ok()) s = RefuseAtReplica(sc, "Import");
    if (!s.ok()) {
      FinishWith(state_, s, nullptr);
      return;
    }
    absl::MutexLock lock(&state_->mu);
    state_->reading = true;
    HandOffRelease(handoff());
    StartRead(&state_->buffer);
  }

  // gRPC calls these on its threads; each takes the reactor over from the
  // thread before it and gives it back (tsan_handoff.h).
  void OnReadDone(bool ok) override {
    HandOffAcquire(handoff());
    ReadDone(ok);
    HandOffRelease(handoff());
  }

  void OnCancel() override {
    HandOffAcquire(handoff());
    {
      absl::MutexLock lock(&state_->mu);
      if (state_->abort.ok()) {
        state_->abort = absl::CancelledError("the client cancelled the import");
      }
      state_->changed.SignalAll();
    }
    HandOffRelease(handoff());
  }

  void OnDone() override {
    HandOffAcquire(handoff());
    ServiceContext* sc = state_->sc;
    delete this;
    sc->active_calls.fetch_sub(1, std::memory_order_release);
  }

  // Records metrics and finishes the call once (later calls do nothing).
  // Safe from any thread.
  static void FinishWith(const std::shared_ptr<ImportState>& st,
                         const absl::Status& status,
                         const v1::ImportResponse* response);

  // Starts the next read if one is due and the queue has room. Call with
  // st->mu held.
  static void MaybeRead(ImportState* st) ABSL_EXCLUSIVE_LOCKS_REQUIRED(st->mu);

 private:
  void ReadDone(bool ok);
  void OnFirstMessage(v1::ImportRequest request);
  const void* handoff() const { return static_cast<const Reader*>(this); }

  std::shared_ptr<ImportState> state_;
  bool first_ = true;  // only gRPC's reactions touch it, one at a time
};

void ImportReactor::FinishWith(const std::shared_ptr<ImportState>& st,
                               const absl::Status& status,
                               const v1::ImportResponse* response) {
  ImportReactor* reactor;
  absl::Status final_status = status;
  {
    absl::MutexLock lock(&st->mu);
    if (st->reactor == nullptr) return;
    reactor = st->reactor;
    st->reactor = nullptr;
    if (final_status.ok() && response != nullptr) {
      final_status = SerializeResponse(*response, st->response);
    }
    if (st->abort.ok()) {
      st->abort = final_status.ok()
                      ? absl::CancelledError("the import call finished")
                      : final_status;
    }
    st->changed.SignalAll();
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - st->start).count();
  st->sc->metrics.RecordRpc(Method::kImport,
                            static_cast<int>(final_status.code()), seconds);
  if (!final_status.ok()) LogCallError(Method::kImport, final_status, "");
  // Outside the lock: after Finish, gRPC may destroy the reactor.
  HandOffRelease(reactor->handoff());
  reactor->Finish(ToGrpcStatus(final_status));
}

void ImportReactor::MaybeRead(ImportState* st) {
  if (st->reactor == nullptr || st->reading || st->end_of_input ||
      !st->parse_error.ok() || !st->abort.ok() || !st->read_blocked) {
    return;
  }
  if (st->queue.size() >= kQueueTransactions || st->queued_ops >= kQueueOps) {
    return;
  }
  st->read_blocked = false;
  st->reading = true;
  HandOffRelease(st->reactor->handoff());
  st->reactor->StartRead(&st->buffer);
}

// Parses one message's tx-data (on a reader thread) and queues it.
void ParseAndQueue(const std::shared_ptr<ImportState>& st,
                   const v1::ImportRequest& request, int64_t first_index) {
  std::vector<storage::TxRequest> parsed;
  parsed.reserve(static_cast<size_t>(request.tx_data_size()));
  absl::Status error;
  const size_t max_value_bytes = MaxValueBytes(st->sc->config);
  for (int i = 0; i < request.tx_data_size(); ++i) {
    auto tx = query::ParseTxData(request.tx_data(i));
    if (tx.ok()) {
      absl::Status size = CheckValueSizes(*tx, max_value_bytes);
      if (!size.ok()) {
        error = absl::Status(
            size.code(),
            StrCat("import transaction ", first_index + i,
                   " (counting from 0) is refused: ", size.message()));
        break;
      }
    }
    if (!tx.ok()) {
      error = absl::Status(
          tx.status().code(),
          StrCat("import transaction ", first_index + i,
                 " (counting from 0) does not parse: ", tx.status().message()));
      break;
    }
    parsed.push_back(*std::move(tx));
  }
  absl::MutexLock lock(&st->mu);
  for (storage::TxRequest& tx : parsed) {
    st->queued_ops += tx.ops.size();
    st->queue.push_back(std::move(tx));
  }
  if (!error.ok() && st->parse_error.ok()) st->parse_error = error;
  st->read_blocked = true;
  ImportReactor::MaybeRead(st.get());
  st->changed.SignalAll();
}

void ImportReactor::ReadDone(bool ok) {
  std::shared_ptr<ImportState> st = state_;
  if (!ok) {
    {
      absl::MutexLock lock(&st->mu);
      st->reading = false;
      st->end_of_input = true;
      st->changed.SignalAll();
    }
    if (first_) {
      // An import of nothing: no database was even named.
      first_ = false;
      FinishWith(st,
                 absl::InvalidArgumentError(
                     "the import sent no message (the first names the "
                     "database)"),
                 nullptr);
    }
    return;
  }
  v1::ImportRequest request;
  absl::Status s = ParseRequest(st->buffer, &request);
  st->buffer.Clear();
  if (!s.ok()) {
    {
      absl::MutexLock lock(&st->mu);
      st->reading = false;
    }
    FinishWith(st, s, nullptr);
    return;
  }
  if (first_) {
    first_ = false;
    OnFirstMessage(std::move(request));
    return;
  }
  int64_t first_index;
  {
    absl::MutexLock lock(&st->mu);
    st->reading = false;
    first_index = st->parsed;
    st->parsed += request.tx_data_size();
  }
  st->sc->readers.Post([st, request = std::move(request), first_index]() {
    ParseAndQueue(st, request, first_index);
  });
}

// Reports the outcome of the import thread's work.
struct Outcome {
  absl::Status status;
  v1::ImportResponse response;
};

// Pops the next transaction (blocking); false at the end of the input or
// on an error (then *error says which).
bool PopNext(ImportState* st, storage::TxRequest* out, absl::Status* error) {
  absl::MutexLock lock(&st->mu);
  while (st->queue.empty() && st->parse_error.ok() && st->abort.ok() &&
         !st->end_of_input) {
    st->changed.Wait(&st->mu);
  }
  if (!st->abort.ok()) {
    *error = st->abort;
    return false;
  }
  if (st->queue.empty()) {
    // A parse error stops the import after the transactions before it.
    *error = st->parse_error;
    return false;
  }
  *out = std::move(st->queue.front());
  st->queue.pop_front();
  st->queued_ops -= out->ops.size();
  ImportReactor::MaybeRead(st);
  return true;
}

// Store::Import's source: the queue.
class QueueSource final : public storage::ImportSource {
 public:
  QueueSource(ImportState* st, v1::ImportResponse* response)
      : st_(st), response_(response) {}

  [[nodiscard]] absl::StatusOr<bool> Next(
      storage::TxRequest* request) override {
    absl::Status error;
    if (PopNext(st_, request, &error)) return true;
    if (!error.ok()) return error;
    return false;
  }

  void OnReport(const storage::TxReport& report) override {
    if (response_->first_tx() == 0) response_->set_first_tx(report.tx);
    response_->set_last_tx(report.tx);
  }

 private:
  ImportState* st_;
  v1::ImportResponse* response_;
};

Outcome RunIngest(ImportState* st) {
  Outcome out;
  out.response.set_method("ingest");
  QueueSource source(st, &out.response);
  auto report = st->database->store().Import(
      &source,
      storage::ImportOptions::WithinMemory(st->sc->config.import_memory_bytes));
  // Subscribe streams follow the log: wake them for what was ingested
  // (failed or not, the chunks before the failure are in).
  st->database->NotifyCommitted();
  if (!report.ok()) {
    out.status = report.status();
    return out;
  }
  out.response.set_transactions(report->transactions);
  out.response.set_datoms(report->datoms);
  return out;
}

Outcome RunTransact(ImportState* st) {
  Outcome out;
  out.response.set_method("transact");
  // The outcomes of the transactions in flight, by index.
  struct Flight {
    absl::Mutex mu;
    absl::CondVar done;
    size_t in_flight ABSL_GUARDED_BY(mu) = 0;
    int64_t first_failed ABSL_GUARDED_BY(mu) = -1;
    absl::Status failure ABSL_GUARDED_BY(mu);
    std::vector<int64_t> committed_after_failure ABSL_GUARDED_BY(mu);
    int64_t transactions ABSL_GUARDED_BY(mu) = 0;
    int64_t datoms ABSL_GUARDED_BY(mu) = 0;
    storage::EntityId first_tx ABSL_GUARDED_BY(mu) = 0;
    storage::EntityId last_tx ABSL_GUARDED_BY(mu) = 0;
  };
  auto flight = std::make_shared<Flight>();
  int64_t index = 0;
  absl::Status input_error;
  for (;;) {
    {
      absl::MutexLock lock(&flight->mu);
      while (flight->in_flight >= kTransactInFlight) {
        flight->done.Wait(&flight->mu);
      }
      if (flight->first_failed >= 0) break;
    }
    storage::TxRequest tx;
    if (!PopNext(st, &tx, &input_error)) break;
    {
      absl::MutexLock lock(&flight->mu);
      flight->in_flight++;
    }
    const int64_t i = index++;
    st->database->Transact(
        std::move(tx), [flight, i](absl::StatusOr<storage::TxReport> report) {
          absl::MutexLock lock(&flight->mu);
          flight->in_flight--;
          if (report.ok()) {
            if (flight->first_failed >= 0 && i > flight->first_failed) {
              flight->committed_after_failure.push_back(i);
            }
            flight->transactions++;
            flight->datoms += static_cast<int64_t>(report->datoms.size());
            if (flight->first_tx == 0) flight->first_tx = report->tx;
            flight->last_tx = std::max(flight->last_tx, report->tx);
          } else if (flight->first_failed < 0 || i < flight->first_failed) {
            flight->first_failed = i;
            flight->failure = report.status();
          }
          flight->done.SignalAll();
        });
  }
  absl::MutexLock lock(&flight->mu);
  while (flight->in_flight != 0) flight->done.Wait(&flight->mu);
  if (flight->first_failed >= 0) {
    std::string after;
    if (!flight->committed_after_failure.empty()) {
      after = StrCat("; ", flight->committed_after_failure.size(),
                     " later transaction(s) already in flight committed too "
                     "(the last is ",
                     flight->committed_after_failure.back(), ")");
    }
    out.status =
        absl::Status(flight->failure.code(),
                     StrCat("import transaction ", flight->first_failed,
                            " (counting from 0) failed, the ",
                            flight->first_failed, " before it are imported",
                            after, ": ", flight->failure.message()));
    return out;
  }
  if (!input_error.ok()) {
    out.status = input_error;
    return out;
  }
  out.response.set_transactions(flight->transactions);
  out.response.set_datoms(flight->datoms);
  out.response.set_first_tx(flight->first_tx);
  out.response.set_last_tx(flight->last_tx);
  return out;
}

void ImportReactor::OnFirstMessage(v1::ImportRequest request) {
  std::shared_ptr<ImportState> st = state_;
  {
    absl::MutexLock lock(&st->mu);
    st->reading = false;
  }
  auto database = st->sc->registry.Get(request.database());
  if (!database.ok()) {
    FinishWith(st, database.status(), nullptr);
    return;
  }
  if (!(*database)->BeginImport()) {
    FinishWith(st,
               absl::ResourceExhaustedError(
                   StrCat("another import is running on database ",
                          (*database)->name(), "; one at a time")),
               nullptr);
    return;
  }
  st->database = *std::move(database);
  auto empty = IsEmpty(*st->database);
  if (!empty.ok()) {
    st->database->EndImport();
    FinishWith(st, empty.status(), nullptr);
    return;
  }
  {
    absl::MutexLock lock(&st->mu);
    st->parsed = request.tx_data_size();
  }
  const bool ingest = *empty;
  std::thread([st, ingest] {
    Outcome out = ingest ? RunIngest(st.get()) : RunTransact(st.get());
    out.response.set_basis_tx(st->database->Latest()->basis_tx());
    out.response.set_elapsed_micros(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                              st->start)
            .count());
    st->database->EndImport();
    if (out.status.ok()) {
      spdlog::info("import into {} ({}): {} transactions, {} datoms in {} ms",
                   st->database->name(), out.response.method(),
                   out.response.transactions(), out.response.datoms(),
                   out.response.elapsed_micros() / 1000);
    }
    FinishWith(st, out.status, &out.response);
  }).detach();
  // The first message may carry transactions too.
  st->sc->readers.Post(
      [st, request = std::move(request)]() { ParseAndQueue(st, request, 0); });
}

}  // namespace

Reader* HandleImport(ServiceContext& sc, Ctx* ctx, Buf* resp) {
  return new ImportReactor(sc, ctx, resp);
}

}  // namespace mentat::server
