// Transact: parse the tx-data, hand the transaction to the database's
// transactor, answer from the transactor's callback. With a request id,
// first make sure the id has not committed already (RequestLedger), and
// that a replay answers the same tx-data (a fingerprint stored with the
// transaction as :mentat.tx/request-digest). A dry run never reaches the
// transactor: a reader applies it to the latest value (storage::Db::With).

#include <memory>

#include "call.h"
#include "fingerprint.h"
#include "mentat/base/str_cat.h"
#include "mentat/query/tx_data_parser.h"
#include "mentat/storage/entity_resolution.h"
#include "mentat/storage/index_range.h"
#include "mentat/storage/tx_log.h"
#include "message_size.h"
#include "service.h"
#include "value_convert.h"
#include "value_limit.h"

namespace mentat::server {

namespace {

// tx-data up to this size is parsed on the gRPC thread (it costs less than
// the hand-off); larger tx-data is parsed on a reader thread.
constexpr size_t kInlineParseBytes = 16 << 10;
constexpr size_t kMaxRequestIdBytes = 256;

struct TransactState {
  UnaryCall call;
  std::shared_ptr<Database> database;
  v1::TransactRequest request;
  v1::TransactResponse response;
  bool user_named_tx = false;
  // TxDataDigest of the request (with a request id).
  uint64_t digest = 0;
};

// The fingerprint a request id is bound to: the tx-data text, byte for
// byte (a retry resends the same request).
uint64_t TxDataDigest(std::string_view tx_data) {
  Fingerprint f;
  f.Add(tx_data);
  return f.value();
}

// True if the tx-data itself refers to the transaction entity, so that
// "datomic.tx" belongs in the tempid map.
bool MentionsTx(const storage::TxRequest& request) {
  auto is_tx = [](const storage::EntityRef& r) {
    return r.kind == storage::EntityRef::Kind::kTxTempId ||
           (r.kind == storage::EntityRef::Kind::kTempId &&
            r.name == "datomic.tx");
  };
  for (const storage::TxOp& op : request.ops) {
    if (is_tx(op.e)) return true;
    if (op.v.kind == storage::TxValue::Kind::kEntity && is_tx(op.v.entity)) {
      return true;
    }
  }
  return false;
}

RecordedTx RecordOf(const storage::TxReport& report, bool user_named_tx,
                    uint64_t digest) {
  RecordedTx r;
  r.tx_data_digest = digest;
  r.digest_known = true;
  r.tx = report.tx;
  r.basis_before = report.basis_before;
  r.tx_instant = report.tx_instant;
  r.datom_count = static_cast<int64_t>(report.datoms.size());
  for (const auto& [name, id] : report.tempids) {
    if (name == "datomic.tx" && !user_named_tx) continue;
    if (query::IsGeneratedTempId(name)) continue;
    r.tempids.emplace_back(name, id);
  }
  return r;
}

void FillResponse(const RecordedTx& r, v1::TransactResponse* out) {
  out->set_tx(r.tx);
  out->set_tx_instant_micros(r.tx_instant);
  out->set_basis_before(r.basis_before);
  out->set_basis_after(r.tx);
  out->set_datom_count(r.datom_count);
  for (const auto& [name, id] : r.tempids) (*out->mutable_tempids())[name] = id;
  out->set_tempids_missing(!r.tempids_known);
}

// The datoms for a response that asked for them, unless they would make
// it bigger than a message: a committed transaction must not be answered
// with gRPC's "Sent message larger than max".
void AddDatoms(const ServerConfig& config,
               const std::vector<storage::Datom>& datoms,
               v1::TransactResponse* out) {
  size_t bytes = 0;
  for (const storage::Datom& d : datoms) bytes += ApproxProtoBytes(d);
  if (bytes > MaxItemBytes(config)) {
    out->set_datoms_omitted(true);
    return;
  }
  out->mutable_datoms()->Reserve(static_cast<int>(datoms.size()));
  for (const storage::Datom& d : datoms) DatomToProto(d, out->add_datoms());
}

// Answers OK with st->response for committed transaction `tx`: at once
// (asynchronous durability), or once a replica has acknowledged it
// (--durability semi-sync; SemiSync answers DEADLINE_EXCEEDED when none
// does in time). The transactor never waits for it.
void AnswerCommitted(const std::shared_ptr<TransactState>& st, int64_t tx) {
  SemiSync* semi_sync = st->call.sc().semi_sync;
  if (semi_sync == nullptr) {
    st->call.Finish(absl::OkStatus(), &st->response);
    return;
  }
  semi_sync->WaitFor(st->database->name(), tx, [st](absl::Status s) {
    if (s.ok()) {
      st->call.Finish(absl::OkStatus(), &st->response);
    } else {
      st->call.Finish(s);
    }
  });
}

// Answers with a recorded result; reads the datoms back from the log when
// asked for. Runs on a reader thread.
void AnswerReplay(const std::shared_ptr<TransactState>& st,
                  const absl::StatusOr<RecordedTx>& recorded) {
  if (!recorded.ok()) {
    st->call.Finish(recorded.status());
    return;
  }
  if (recorded->digest_known && recorded->tx_data_digest != st->digest) {
    st->call.Finish(absl::FailedPreconditionError(
        StrCat("request_id \"", st->request.request_id(),
               "\" was already used by transaction ", recorded->tx,
               " with other tx_data; a retry must send the same tx_data, a new "
               "transaction needs a new request_id")));
    return;
  }
  FillResponse(*recorded, &st->response);
  st->response.set_replayed(true);
  if (st->request.return_datoms()) {
    auto datoms =
        storage::ReadTxLogEntry(*st->database->Latest(), recorded->tx);
    if (!datoms.ok()) {
      st->call.Finish(datoms.status());
      return;
    }
    AddDatoms(st->call.sc().config, *datoms, &st->response);
  }
  // A replay is answered as the first answer would have been: in
  // semi-synchronous mode, once a replica has the transaction.
  AnswerCommitted(st, recorded->tx);
}

// Looks the request id up in the database: the latest transaction that
// carried it, if within the window.
[[nodiscard]] absl::StatusOr<std::optional<RecordedTx>> LookUpRequestId(
    Database& database, const std::string& id) {
  std::shared_ptr<const storage::Db> db = database.Latest();
  storage::DbView view(db, storage::Basis::Current());
  auto attr = storage::AttributeOfId(view.schema(), database.request_id_attr(),
                                     "the request id attribute");
  if (!attr.ok()) return attr.status();
  storage::IndexComponents range;
  range.count = 2;
  range.attribute = *attr;
  range.value = storage::Value::String(id);
  auto prefix = storage::IndexRangePrefix(storage::IndexOrder::kAvet, range);
  if (!prefix.ok()) return prefix.status();
  auto cursor = view.NewCursor(storage::IndexOrder::kAvet);
  storage::EntityId tx = 0;
  for (cursor->Seek(*prefix); cursor->Valid(); cursor->Next()) {
    tx = std::max(tx, cursor->datom().e);
  }
  if (!cursor->status().ok()) return cursor->status();
  if (tx == 0) return std::optional<RecordedTx>();
  auto datoms = storage::ReadTxLogEntry(*db, tx);
  if (!datoms.ok()) return datoms.status();
  RecordedTx r;
  r.tx = tx;
  for (const storage::Datom& d : *datoms) {
    if (d.e == tx && d.a == database.request_digest_attr() && d.added &&
        d.v.type() == storage::ValueType::kLong) {
      r.tx_data_digest = static_cast<uint64_t>(d.v.as_long());
      r.digest_known = true;
    }
  }
  r.tx_instant = storage::TxInstantOf(tx, *datoms);
  if (r.tx_instant + database.options().idempotency_window_micros <
      NowMicros()) {
    return std::optional<RecordedTx>();
  }
  auto before = storage::PreviousTx(*db, tx);
  if (!before.ok()) return before.status();
  r.basis_before = *before;
  r.datom_count = static_cast<int64_t>(datoms->size());
  // The tempids were never noted (a crash between the commit and the
  // ledger's write, or the ledger forgot them).
  r.tempids_known = false;
  return std::optional<RecordedTx>(std::move(r));
}

void Submit(const std::shared_ptr<TransactState>& st,
            storage::TxRequest tx_request) {
  const std::string id = st->request.request_id();
  if (!id.empty()) {
    // The ledger's attributes are system attributes: tx-data cannot write
    // them, so only this op can bind an id to a transaction.
    storage::TxOp op;
    op.kind = storage::TxOp::Kind::kAdd;
    op.system = true;
    op.e = storage::EntityRef::TxTempId();
    op.a = storage::EntityRef::Id(st->database->request_id_attr());
    op.v = storage::TxValue::Scalar(storage::Value::String(id));
    tx_request.ops.push_back(op);
    op.a = storage::EntityRef::Id(st->database->request_digest_attr());
    op.v = storage::TxValue::Scalar(
        storage::Value::Long(static_cast<int64_t>(st->digest)));
    tx_request.ops.push_back(std::move(op));
  }
  st->database->Transact(
      std::move(tx_request),
      [st, id](absl::StatusOr<storage::TxReport> report) {
        if (!report.ok()) {
          absl::Status s = report.status();
          if (st->database->deleted() &&
              s.code() == absl::StatusCode::kUnavailable) {
            s = absl::NotFoundError(
                StrCat("database ", st->database->name(), " was deleted"));
          }
          if (!id.empty()) st->database->ledger().Fail(id, s);
          st->call.Finish(s);
          return;
        }
        RecordedTx r = RecordOf(*report, st->user_named_tx, st->digest);
        if (!id.empty()) st->database->ledger().Complete(id, r, true);
        FillResponse(r, &st->response);
        if (st->request.return_datoms()) {
          AddDatoms(st->call.sc().config, report->datoms, &st->response);
        }
        AnswerCommitted(st, r.tx);
      });
}

// A dry run: the transaction applied to the latest value without a commit
// (storage::Db::With), answered as the commit would be. Runs on a reader
// thread; the transactor never sees it.
void DryRun(const std::shared_ptr<TransactState>& st,
            const storage::TxRequest& tx_request) {
  auto with = st->database->Latest()->With(tx_request);
  if (!with.ok()) {
    st->call.Finish(with.status());
    return;
  }
  FillResponse(RecordOf(with->report, st->user_named_tx, 0), &st->response);
  st->response.set_dry_run(true);
  if (st->request.return_datoms()) {
    AddDatoms(st->call.sc().config, with->report.datoms, &st->response);
  }
  st->call.Finish(absl::OkStatus(), &st->response);
}

// Parses the tx-data and, with a request id, settles the id first. Runs on
// the gRPC thread for small plain requests, else on a reader thread.
void Run(const std::shared_ptr<TransactState>& st) {
  auto parsed = query::ParseTxData(st->request.tx_data());
  if (!parsed.ok()) {
    st->call.Finish(parsed.status());
    return;
  }
  absl::Status size =
      CheckValueSizes(*parsed, MaxValueBytes(st->call.sc().config));
  if (!size.ok()) {
    st->call.Finish(size);
    return;
  }
  st->user_named_tx = MentionsTx(*parsed);
  if (st->request.dry_run()) {
    DryRun(st, *parsed);
    return;
  }
  const std::string& id = st->request.request_id();
  if (id.empty()) {
    Submit(st, *std::move(parsed));
    return;
  }
  st->digest = TxDataDigest(st->request.tx_data());
  RecordedTx recorded;
  const RequestLedger::Begin begin = st->database->ledger().Start(
      id, NowMicros(), &recorded, [st](absl::StatusOr<RecordedTx> outcome) {
        // The waiter runs on the thread that settled the first request
        // (the transactor): hand the log read to a reader.
        st->call.sc().readers.Post(
            [st, outcome = std::move(outcome)] { AnswerReplay(st, outcome); });
      });
  switch (begin) {
    case RequestLedger::Begin::kRecorded:
      AnswerReplay(st, recorded);
      return;
    case RequestLedger::Begin::kWaiting:
      return;
    case RequestLedger::Begin::kOwner:
      break;
  }
  auto found = LookUpRequestId(*st->database, id);
  if (!found.ok()) {
    st->database->ledger().Fail(id, found.status());
    st->call.Finish(found.status());
    return;
  }
  if (found->has_value()) {
    st->database->ledger().Complete(id, **found, /*persist=*/false);
    AnswerReplay(st, **found);
    return;
  }
  Submit(st, *std::move(parsed));
}

}  // namespace

void ServeTransact(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  auto st = std::make_shared<TransactState>(
      TransactState{call, nullptr, {}, {}, false, 0});
  absl::Status s = st->call.Begin(req, &st->request);
  // A dry run writes nothing: a replica answers it from its own value.
  if (s.ok() && !st->request.dry_run()) s = RefuseAtReplica(sc, "Transact");
  if (!s.ok()) return st->call.Finish(s);
  if (st->request.request_id().size() > kMaxRequestIdBytes) {
    return st->call.Finish(absl::InvalidArgumentError(
        StrCat("request_id may have at most ", kMaxRequestIdBytes,
               " bytes, got ", st->request.request_id().size())));
  }
  auto database = sc.registry.Get(st->request.database());
  if (!database.ok()) return st->call.Finish(database.status());
  st->database = *std::move(database);
  if (st->request.request_id().empty() && !st->request.dry_run() &&
      st->request.tx_data().size() <= kInlineParseBytes) {
    Run(st);
  } else {
    sc.readers.Post([st] { Run(st); });
  }
}

}  // namespace mentat::server
