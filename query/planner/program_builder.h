#ifndef MENTAT_QUERY_PLANNER_PROGRAM_BUILDER_H_
#define MENTAT_QUERY_PLANNER_PROGRAM_BUILDER_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mentat/query/ast.h"
#include "mentat/storage/schema.h"
#include "planner/estimator.h"
#include "planner/plan.h"

namespace mentat::query::planner {

// A rule as the planner sees it: a named rule (all its definitions), or an
// anonymous one made of an or/or-join/not/not-join clause, whose head is
// the clause's join variables.
struct RuleDef {
  std::string name;
  int arity = 0;
  std::vector<bool> required;  // per head position: the caller must bind it
  struct Body {
    const std::vector<Clause>* clauses = nullptr;  // points into the AST
    std::vector<std::string> head;                 // var per head position
    std::string text;
  };
  std::vector<Body> bodies;
};

struct ScopeRequest {
  const std::vector<Clause>* clauses = nullptr;
  // Variables bound on entry, and which of them hold the same value in
  // every row.
  std::vector<std::string> entry_vars;
  std::vector<bool> entry_const;
  // Variables that need a slot even if no clause uses them.
  std::vector<std::string> extra_vars;
  double entry_rows = 1;
  std::string owner;  // "the query", "rule ancestor", for messages
};

// Builds the rule tables of one query while its scopes are planned.
// Not thread-safe; one per planning. The AST must outlive it.
class ProgramBuilder {
 public:
  ProgramBuilder(const storage::Schema& schema,
                 const storage::Statistics& stats,
                 const std::vector<Rule>& rules,
                 const PlannerOptions& options = {});

  const storage::Schema& schema() const { return schema_; }
  Estimator& estimator() { return estimator_; }
  const PlannerOptions& options() const { return options_; }

  // The id of the named rule, or -1.
  int FindRule(std::string_view name) const;
  // Adds an anonymous rule; returns its id.
  int AddRule(RuleDef rule);
  const RuleDef& rule(int id) const { return rules_[static_cast<size_t>(id)]; }

  // The table of rule `rule` for the binding pattern `bound`, planned on
  // first use. Errors come from planning its bodies.
  [[nodiscard]] absl::StatusOr<int> Table(int rule,
                                          const std::vector<bool>& bound);
  // Drops every table made since `mark` (tables().size() then). The
  // planner calls it when planning a candidate call failed (Table returned
  // an error), so the failed tables leave no trace. A candidate call whose
  // tables were planned but that the planner did not pick keeps them: they
  // stay in the plan (Explain lists them) but never run, since the
  // executor builds a table only when a step calls it.
  void Rollback(size_t mark);

  std::vector<TablePlan>& tables() { return tables_; }
  // Type information for head position `pos` of `rule`, from the patterns
  // of its bodies.
  void HeadInfo(int rule, int pos, SlotInfo* info, int depth) const;

  // Marks recursive and right-linear tables and rejects recursion through
  // `not`.
  [[nodiscard]] absl::Status Finish();

 private:
  void MarkLinear();

  const storage::Schema& schema_;
  Estimator estimator_;
  PlannerOptions options_;
  std::vector<RuleDef> rules_;
  std::map<std::string, int, std::less<>> named_;
  std::vector<TablePlan> tables_;
  std::map<std::pair<int, std::vector<bool>>, int> table_ids_;
  std::vector<int> table_rule_;    // rule id per table
  std::vector<bool> in_progress_;  // per table
};

// Plans one clause list. Errors are InvalidArgument naming the clause.
[[nodiscard]] absl::StatusOr<ScopePlan> PlanScope(ProgramBuilder& program,
                                                  const ScopeRequest& request);

// Adds what the patterns of `clauses` (nested ones and called rules
// included) tell about variable `var` to `info`.
void CollectVarInfo(const ProgramBuilder& program,
                    const std::vector<Clause>& clauses, const std::string& var,
                    SlotInfo* info, int depth);

}  // namespace mentat::query::planner

#endif  // MENTAT_QUERY_PLANNER_PROGRAM_BUILDER_H_
