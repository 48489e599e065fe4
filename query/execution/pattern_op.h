#ifndef MENTAT_QUERY_EXECUTION_PATTERN_OP_H_
#define MENTAT_QUERY_EXECUTION_PATTERN_OP_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "execution/filter_eval.h"
#include "execution/operator.h"
#include "execution/row_set.h"
#include "execution/term_ref.h"
#include "mentat/storage/datom_cursor.h"
#include "planner/plan.h"

namespace mentat::query::execution {

// A pattern step. As an index nested-loop join (the workhorse), it builds
// the seek prefix of its index from each row's bound positions and seeks
// one reused cursor; the first step of a plan is the same with a single
// empty row. As a hash join, it scans its pattern once with what does not
// depend on the row, hashes the datoms on the row-bound positions, and
// probes with every row.
class PatternOp : public Operator {
 public:
  // `live`: the slots bound in the rows the step receives.
  PatternOp(ExecContext* ctx, const planner::ScopePlan& scope,
            const planner::Step& step, std::vector<planner::Slot> live,
            StepLabel label);

  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::Status Push(Batch& in) override;
  [[nodiscard]] absl::Status Finish() override {
    if (stats_ != nullptr &&
        (index_ != p_.index || hash_join_ != p_.hash_join ||
         column_ != nullptr)) {
      stats_->ran_as = "AEVT column probes";
    }
    if (column_demand_) {
      ctx_->view().NoteColumnDemand(storage::IndexOrder::kAevt, p_.attr->id,
                                    probes_);
    }
    absl::Status s = Emit(out_);
    if (!s.ok()) return s;
    return Operator::Finish();
  }

 private:
  enum Pos { kE = 0, kA = 1, kV = 2, kTx = 3, kAdded = 4 };

  // Appends the seek prefix for `row` to prefix_; false if nothing can
  // match (a value of the wrong type in an entity position, say).
  bool BuildPrefix(const storage::Value* row, bool independent);
  bool AppendComponent(Pos pos, const storage::Value* row);
  // Known positions outside the prefix, and repeated variables.
  bool Matches(const storage::Datom& d, const storage::Value* row,
               bool independent) const;
  void Bind(const storage::Datom& d, storage::Value* out) const;
  bool RangeStart(const storage::Value* row);
  bool PastUpper(const storage::Datom& d, const storage::Value* row) const;
  // The datom's value is below the range's start (a range the planner
  // took from predicates, which stay as filters: a quick no, never a yes).
  bool BelowLower(const storage::Datom& d, const storage::Value* row) const;
  // Appends the row joined with `d` if `d` matches it and the filters pass.
  [[nodiscard]] absl::Status Output(const storage::Datom& d,
                                    const storage::Value* row);
  // With prefix_ready, prefix_ holds the row's prefix already.
  [[nodiscard]] absl::Status Probe(const storage::Value* row,
                                   bool prefix_ready);
  // In entity order: positions the cursor at the first datom of the
  // attribute at or past prefix_ (a+e), from where the last probe left it.
  void SeekInOrder();
  [[nodiscard]] absl::Status Build(const storage::Value* row);
  [[nodiscard]] absl::Status ProbeHash(const storage::Value* row);
  // The batch's probes as lookups of the rows' entities in column_
  // (pattern_op_column.cc).
  [[nodiscard]] absl::Status PushColumn(Batch& in);
  // Switches to AEVT probes when the attribute has a column (index_,
  // prefix_len_, hash_join_), or notes that the rows would want one.
  void ChooseColumnProbes();
  // The attribute the v position belongs to for `row`, or null.
  const storage::Attribute* AttrFor(const storage::Value* row) const;
  // `v` as the attribute's type, in *scratch if it needs converting.
  const storage::Value* Typed(const storage::Value& v,
                              const storage::Attribute* attr,
                              storage::Value* scratch) const;

  const planner::ScopePlan& scope_;
  const planner::Step& step_;
  const planner::PatternSpec& p_;
  StepLabel label_;
  // The slots of an input row an output row copies (the rest are junk).
  std::vector<planner::Slot> live_;
  TermRef t_[5];
  bool in_prefix_[5] = {false, false, false, false, false};
  // Positions, worked out once (Init): known outside the seek prefix
  // (Matches; for a hash join's build side, those not from the rows), bound
  // by the step (Bind), compared with an earlier position of the same
  // variable (Output).
  std::vector<Pos> match_pos_, build_match_pos_, bind_out_, check_pos_;
  // The slot of the entity when it is all the pattern binds (`[?e :a _]`,
  // the common scan): Output assigns it inline; -1 otherwise.
  int32_t entity_only_slot_ = -1;
  Pos order_[3];
  // The index read: the plan's, or AEVT for EAVT probes of an attribute
  // with a column (Init).
  storage::IndexOrder index_ = storage::IndexOrder::kEavt;
  int prefix_len_ = 0;
  bool hash_join_ = false;
  // PatternSpec::entity_order without a column: the cursor walks the
  // attribute (one Seek of attr_prefix_), each probe forward from the last
  // (last_target_); every key between the last target and the position
  // starts with that target.
  bool in_order_ = false;
  bool walking_ = false;
  std::string attr_prefix_;
  std::string last_target_;
  bool column_demand_ = false;  // count probes_ towards an AEVT column
  // The attribute's column, when probes by entity read it (ChooseColumnProbes);
  // with column_rows_, the entity comes from each row and batches are
  // probed through PushColumn.
  std::shared_ptr<const storage::EntityColumn> column_;
  bool column_rows_ = false;
  struct ColumnProbe {
    storage::EntityId e;
    uint32_t row;
    uint32_t pos;  // the entity's first datom in column_'s base, or its size
  };
  std::vector<ColumnProbe> column_probes_;
  // The datoms of an entity commits changed since the column's base.
  std::vector<storage::Datom> changed_datoms_;
  storage::Datom datom_;
  // The value is `_` or in the seek prefix, and nothing else reads it.
  bool skip_value_ = false;
  uint64_t probes_ = 0;
  OwnedValues owned_;
  FilterEval filters_;
  std::unique_ptr<storage::DatomCursor> cursor_;
  std::string prefix_;
  std::string target_;
  storage::Value scratch_;
  Batch out_;
  // At most one datom can match a prefix (a cardinality-one attribute by
  // entity, or a unique value), so stop after it.
  bool single_ = false;
  // False when a range bound is not worth a seek (single_ by entity).
  bool seek_range_ = true;
  // The seek prefix depends on the row: batches of at least
  // kSortedProbeRows rows are probed in prefix order.
  static constexpr size_t kSortedProbeRows = 16;
  // Probes after which a step's cursor reads in bulk
  // (DatomCursor::SetBulk): a query of thousands of entities does not fill
  // the entity cache with records it will not read again.
  static constexpr uint64_t kBulkProbes = 4096;
  bool row_prefix_ = false;
  struct SortedProbe {
    // Eight bytes of the prefix, big-endian, from where the batch's
    // prefixes first differ (zero past its end): most comparisons end on
    // them, without touching probe_keys_.
    uint64_t head;
    uint32_t offset, size;  // the prefix, in probe_keys_
    uint32_t row;
  };
  std::string_view ProbeKey(const SortedProbe& p) const {
    return std::string_view(probe_keys_).substr(p.offset, p.size);
  }
  void SortProbes();
  std::string probe_keys_;
  std::vector<SortedProbe> sorted_;

  // Hash join: the build side, one row per matching datom holding the
  // positions the rows join on, then the positions the step binds.
  bool built_ = false;
  std::vector<Pos> key_pos_;
  std::vector<Pos> bind_pos_;
  std::vector<storage::Value> build_;
  std::unique_ptr<ChainIndex> build_index_;
  // The common case, one entity-id key: an int64 map to the newest build
  // row, and per row the one before it with the same key.
  bool int_key_ = false;
  size_t key_width_ = 0;  // key values stored per build row
  absl::flat_hash_map<int64_t, uint32_t> int_heads_;
  std::vector<uint32_t> int_next_;
  std::unique_ptr<MemoryHold> build_memory_;
  std::vector<storage::Value> key_;
};

}  // namespace mentat::query::execution

#endif  // MENTAT_QUERY_EXECUTION_PATTERN_OP_H_
