// ScopeBuilder: plans one scope of a query (PlanScope). Its work is in
// three files: scope_planner.cc orders the clauses and places them,
// scope_prepare.cc turns the clauses into specs first, entity_order.cc
// tracks which slot the rows hold in ascending entity order and when a
// pattern is best read as an in-order walk.
//
// Not thread-safe: one builder per scope being planned, used once.

#ifndef MENTAT_QUERY_PLANNER_SCOPE_BUILDER_H_
#define MENTAT_QUERY_PLANNER_SCOPE_BUILDER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "planner/access_path.h"
#include "planner/clause_specs.h"
#include "planner/program_builder.h"

namespace mentat::query::planner {

class ScopeBuilder {
 public:
  ScopeBuilder(ProgramBuilder& program, const ScopeRequest& request)
      : program_(program), request_(request) {}

  [[nodiscard]] absl::StatusOr<ScopePlan> Build();

 private:
  enum class Kind { kPattern, kPredicate, kFunction, kCall, kNot };
  struct Pending {
    const Clause* clause = nullptr;
    Kind kind = Kind::kPattern;
    bool placed = false;
    std::vector<Slot> needs;  // must be bound before placing
    PatternSpec pattern;      // kPattern
    bool never = false;
    PredicateSpec predicate;  // kPredicate
    FunctionSpec function;    // kFunction
    int rule = -1;            // kCall, kNot
    std::vector<PlanTerm> args;
    bool range_used = false;  // kPredicate: narrowed a scan already
  };
  struct Choice {
    int index = -1;
    bool connected = false;
    double est = 0;
    double cost = 0;
    Access access;
    bool hash_join = false;
    bool entity_order = false;  // AEVT a+e, walked forward (InEntityOrder)
    int table = -1;
  };

  Slot SlotOf(const std::string& name);
  [[nodiscard]] absl::Status Prepare();
  [[nodiscard]] absl::Status PrepareClause(const Clause& c);
  [[nodiscard]] absl::Status CallConstant(const Clause& c,
                                          const edn::EdnValue& constant,
                                          int rule, int pos, PlanTerm* out);
  bool Known(const PlanTerm& t, bool const_only) const;
  bool Ready(const Pending& p) const;
  RangeCandidate FindRange(const Pending& p, bool const_only);
  std::optional<Choice> Evaluate(int index, absl::Status* why);
  void PlaceReady();
  void PlacePattern(const Choice& c);
  void PlaceCall(const Choice& c);
  void MarkBound(const std::vector<Slot>& slots, Step* step);
  PlanTerm Bind(PlanTerm t, std::vector<Slot>* seen);
  [[nodiscard]] absl::Status Unplaced();
  double FilterSelectivity(const Pending& p) const;
  // Makes `c` an in-order walk of the attribute's AEVT datoms when the
  // rows hold the pattern's entity in ascending order and that costs
  // less than its nested-loop or hash join.
  void InEntityOrder(const Pending& p, Choice* c, const Access* indep);
  // Keeps ordered_ true to the rows after `step` (placed as `c`).
  void TrackOrder(const Step& step, const Choice* c);

  ProgramBuilder& program_;
  const ScopeRequest& request_;
  ScopePlan plan_;
  absl::flat_hash_map<std::string, Slot> slots_;
  std::vector<bool> bound_;
  std::vector<Pending> pending_;
  double rows_ = 1;
  // A slot whose entity ids the rows hold in ascending order: the
  // entities of a first step's scan of AVET a+v (one value) or AEVT a,
  // while the steps after it keep their rows' order.
  Slot ordered_ = kNoSlot;
  bool placed_scan_ = false;  // a step other than a filter was placed
  absl::Status error_;
};

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_SCOPE_BUILDER_H_
