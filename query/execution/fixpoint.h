#ifndef MENTAT_QUERY_EXECUTION_FIXPOINT_H_
#define MENTAT_QUERY_EXECUTION_FIXPOINT_H_

// Rule evaluation: semi-naive, demand-driven (magic sets done at run
// time).
//
// Each rule table (a rule for one binding pattern of its head) keeps two
// growing sets: its demand (the distinct values of the bound head
// positions that callers asked for) and its answers (full head tuples).
// Both are append-only; each round sees [0, full_end) and calls the part
// added by the previous round its delta. A round runs, for every table:
//  - each body on the demand delta, every call inside reading full tables;
//  - for each call site of each body, the rows that reached the site in
//    earlier rounds (the site keeps them, indexed by the call's bound
//    arguments) joined with the delta of the called table only.
// So every derivation is made in the round after its newest ingredient
// appeared, and never again. Rows reaching a call site add demand to the
// called table. The evaluation stops when a round adds nothing.

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "execution/exec_context.h"
#include "execution/operator.h"
#include "execution/row_set.h"
#include "execution/term_ref.h"
#include "planner/plan.h"

namespace mentat::query::execution {

class FixpointEngine;

// The evaluation state of one table.
struct TableState {
  TableState(ExecContext* ctx, const planner::TablePlan& plan, int id);

  const planner::TablePlan& plan;
  int id;
  std::vector<int> key_pos;  // the bound head positions
  RowSet demand;
  uint32_t demand_delta = 0, demand_end = 0;
  RowSet answers;
  uint32_t answers_delta = 0, answers_end = 0;
  ChainIndex answer_index;  // by the values at key_pos
  MemoryHold memory;
  std::vector<storage::Value> key;  // scratch

  // Right-linear tables (TablePlan::linear): by demand index, the demand
  // indexes whose answers are answers of this key too.
  std::vector<std::vector<uint32_t>> links;
  absl::flat_hash_set<uint64_t> link_set;

  // Adds an answer (head tuple) unless known.
  [[nodiscard]] absl::Status AddAnswer(const storage::Value* tuple);
  [[nodiscard]] absl::Status UpdateMemory();
  // Records that `from`'s answers include `to`'s (demand indexes).
  void Link(uint32_t from, uint32_t to);
  // The answers of `key` (indexes into `answers`): its own, and for a
  // linear table those of every key linked from it, without two answers
  // that agree on the free positions.
  void Lookup(const storage::Value* key, std::vector<uint32_t>* out);
};

// A call of a table from inside a rule body, part of its engine's
// fixpoint (see the file comment).
class CallSiteOp : public Operator {
 public:
  // `live` are the slots bound when rows reach the step (the rest of a
  // row is junk, so it is not remembered).
  CallSiteOp(ExecContext* ctx, FixpointEngine* engine,
             const planner::ScopePlan& scope, const planner::Step& step,
             std::vector<planner::Slot> live, const StepLabel& label);

  [[nodiscard]] absl::Status Init();
  // New rows: remembered, add demand, joined with the full table.
  [[nodiscard]] absl::Status Push(Batch& in) override;
  [[nodiscard]] absl::Status Finish() override;
  // Rows remembered before this round, joined with the table's delta.
  [[nodiscard]] absl::Status RunDelta();
  void BeginRound() { cache_end_ = cache_.size(); }
  int table() const { return step_.call.table; }

 private:
  [[nodiscard]] absl::Status EmitJoined(const storage::Value* row,
                                        const storage::Value* answer);
  [[nodiscard]] absl::Status PushLinear(Batch& in, TableState& t);

  FixpointEngine* engine_;
  const planner::Step& step_;
  std::vector<planner::Slot> live_;
  std::vector<TermRef> args_;
  OwnedValues owned_;
  std::vector<int> key_pos_;
  std::vector<storage::Value> key_;
  std::vector<storage::Value> from_key_;  // linear: the caller's key
  std::vector<storage::Value> live_row_;  // scratch, live_ values
  Batch expanded_;                        // scratch, one full row
  RowSet cache_;                          // rows over live_
  std::unique_ptr<ChainIndex> cache_index_;
  uint32_t cache_end_ = 0;
  MemoryHold memory_;
  Batch out_;
};

// Evaluates tables to a fixpoint for the demand given to it. Owned by the
// operator that calls into it (a top-level call, or a `not`); tables and
// the body pipelines persist between Solve calls, so answers found for
// one batch of rows serve the next.
class FixpointEngine {
 public:
  FixpointEngine(ExecContext* ctx,
                 const std::vector<planner::TablePlan>& tables);
  ~FixpointEngine();

  // Adds demand for `table`: the values of its bound head positions.
  // `index`, if not null, gets the key's demand index.
  [[nodiscard]] absl::Status AddDemand(int table, const storage::Value* key,
                                       uint32_t* index = nullptr);
  // Runs rounds until nothing new is derived.
  [[nodiscard]] absl::Status Solve();
  TableState& state(int table);

 private:
  struct BodyRun;
  [[nodiscard]] absl::Status RunTable(TableState& t);
  [[nodiscard]] absl::StatusOr<BodyRun*> Body(TableState& t, size_t body);

  ExecContext* ctx_;
  const std::vector<planner::TablePlan>& tables_;
  std::vector<std::unique_ptr<TableState>> states_;
  std::vector<std::vector<std::unique_ptr<BodyRun>>> bodies_;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_FIXPOINT_H_
