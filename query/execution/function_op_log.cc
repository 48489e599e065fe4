// FunctionOp's log functions, tx-ids and tx-data (Datomic's log API as
// query functions). Both read the transaction log of the view's Db through
// storage's tx_log.h: the whole log up to the Db's basis tx, whatever the
// view's basis (as_of, since, history), as Datomic's log is not filtered
// by as-of either (query/README.md, "The log").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "execution/exec_context.h"
#include "execution/function_op.h"
#include "execution/row_set.h"
#include "mentat/base/str_cat.h"
#include "mentat/storage/tx_log.h"

namespace mentat::query::execution {

using storage::EntityId;
using storage::Value;

namespace {

// One end of a tx-ids range, or tx-data's argument, as given.
struct LogArg {
  bool open = true;      // nil: no bound
  bool instant = false;  // an instant (micros); else a tx id
  int64_t value = 0;     // the tx id (resolved from a t) or the instant
};

// `what` names the argument in errors ("tx-ids's argument 2").
[[nodiscard]] absl::Status ReadLogArg(const std::string& clause,
                                      std::string_view what, const Value& v,
                                      bool allow_instant, LogArg* out) {
  out->open = false;
  if (allow_instant && v.type() == storage::ValueType::kInstant) {
    out->instant = true;
    out->value = v.as_long();
    return absl::OkStatus();
  }
  std::string why;  // why a number is no tx, as ResolveT says
  EntityId id;
  if (AsEntity(v, &id)) {
    absl::StatusOr<EntityId> tx = storage::Db::ResolveT(id);
    if (tx.ok()) {
      out->value = *tx;
      return absl::OkStatus();
    }
    const absl::Status& s = tx.status();
    why = StrCat(" (", std::string_view(s.message().data(), s.message().size()),
                 ")");
  }
  return absl::InvalidArgumentError(StrCat(
      clause, ": ", what, " must be ",
      allow_instant ? "a t, a tx id, an instant or nil" : "a t or a tx id",
      "; got ", v.DebugString(), why));
}

}  // namespace

absl::Status FunctionOp::TxIds(const Value* row) {
  LogArg ends[2];
  for (size_t i = 0; i < 2; ++i) {
    if (i >= args_.size() || args_[i].kind == TermRef::Kind::kNone) continue;
    const Value& v = args_[i].Get(row);
    absl::Status s = ReadLogArg(
        step_.text,
        i == 0 ? "tx-ids's argument 2 (start)" : "tx-ids's argument 3 (end)", v,
        /*allow_instant=*/true, &ends[i]);
    if (!s.ok()) return s;
  }
  const LogArg& from = ends[0];
  const LogArg& to = ends[1];
  // Datomic answers nothing for a reversed range; a reversed range is
  // almost always swapped arguments, so say so. Mixed kinds (a tx and an
  // instant) cannot be compared without the log and are not checked.
  if (!from.open && !to.open && from.instant == to.instant &&
      from.value > to.value) {
    return absl::InvalidArgumentError(StrCat(
        step_.text, ": tx-ids's start (argument 2) ",
        args_[0].Get(row).DebugString(), " is after its end (argument 3) ",
        args_[1].Get(row).DebugString(), "; the range is [start, end)"));
  }
  const storage::Db& db = ctx_->view().db();
  // Instants become tx ids: a tx is in [i1, i2) when its :db/txInstant is
  // (tx instants grow with tx ids, the transactor makes sure of it).
  EntityId from_tx = 0;  // 0: from the first
  if (!from.open) {
    from_tx = from.value;
    if (from.instant) {
      std::optional<EntityId> before = db.TxAtOrBeforeInstant(from.value - 1);
      from_tx = before ? *before + 1 : 0;
    }
  }
  EntityId to_tx = 0;  // 0: up to the basis
  if (!to.open) {
    to_tx = to.value;
    if (to.instant) {
      std::optional<EntityId> last = db.TxAtOrBeforeInstant(to.value - 1);
      if (!last) return absl::OkStatus();  // every tx is at or after `to`
      to_tx = *last + 1;
    }
    if (to_tx <= from_tx || to_tx <= 0) return absl::OkStatus();
  }
  // Rows go out as the log is read: nothing is held but the out batch, and
  // every transaction counts against the scan limit and the deadline.
  absl::Status status;
  absl::Status read = storage::ReadTxLogRaw(
      db, 0, from_tx, to_tx,
      [&](EntityId, EntityId tx, std::string_view) -> bool {
        status = ctx_->Tick();
        if (status.ok()) {
          const Value v = Value::Ref(tx);
          status = EmitResult(row, &v, 1);
        }
        return status.ok() && !ctx_->stopped();
      });
  if (!status.ok()) return status;
  return read;
}

absl::Status FunctionOp::TxData(const Value* row) {
  LogArg arg;
  absl::Status s = ReadLogArg(step_.text, "tx-data's argument 2 (the tx)",
                              args_[0].Get(row), /*allow_instant=*/false, &arg);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<storage::Datom>> datoms =
      storage::ReadTxLogEntry(ctx_->view().db(), arg.value);
  if (absl::IsNotFound(datoms.status())) return absl::OkStatus();
  if (!datoms.ok()) return datoms.status();
  // The entry is decoded whole; charge it while it is emitted (a bulk
  // import's transaction may be large).
  MemoryHold hold(ctx_, "tx-data");
  s = hold.Update(datoms->size() * sizeof(storage::Datom));
  if (!s.ok()) return s;
  // A binding of fewer columns, or with `_`, projects the datoms: the
  // relation is a set, so each projected row goes out once.
  const size_t width = outputs_.size();
  bool project = width < 5;
  for (const TermRef& t : outputs_) {
    project = project || t.kind != TermRef::Kind::kSlot;
  }
  std::optional<RowSet> seen;
  if (project) seen.emplace(static_cast<int>(width));
  Value cols[5];
  for (const storage::Datom& d : *datoms) {
    s = ctx_->Tick();
    if (!s.ok()) return s;
    cols[0] = Value::Ref(d.e);
    cols[1] = Value::Ref(d.a);
    cols[2] = d.v;
    cols[3] = Value::Ref(d.tx);
    cols[4] = Value::Boolean(d.added);
    if (project) {
      for (size_t i = 0; i < width; ++i) {
        if (outputs_[i].kind != TermRef::Kind::kSlot) cols[i] = Value();
      }
      if (!seen->Insert(cols).second) continue;
    }
    s = EmitResult(row, cols, width);
    if (!s.ok()) return s;
    if (ctx_->stopped()) break;
  }
  return absl::OkStatus();
}

}  // namespace mentat::query::execution
