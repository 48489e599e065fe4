#include "execution/fixpoint.h"

#include "execution/pipeline.h"
#include "mentat/base/str_cat.h"

namespace mentat::query::execution {

using storage::Value;

TableState::TableState(ExecContext* ctx, const planner::TablePlan& p, int i)
    : plan(p),
      id(i),
      key_pos(p.key_positions()),
      demand(static_cast<int>(key_pos.size())),
      answers(p.arity),
      answer_index(static_cast<int>(key_pos.size())),
      memory(ctx, StrCat("the answers of rule ", p.name)),
      key(key_pos.size()) {}

absl::Status TableState::AddAnswer(const Value* tuple) {
  auto [idx, inserted] = answers.Insert(tuple);
  if (!inserted) return absl::OkStatus();
  for (size_t j = 0; j < key_pos.size(); ++j) key[j] = tuple[key_pos[j]];
  answer_index.Add(key.data(), idx);
  if ((idx & 1023) == 1023) return UpdateMemory();
  return absl::OkStatus();
}

absl::Status TableState::UpdateMemory() {
  return memory.Update(demand.bytes() + answers.bytes() + answer_index.bytes() +
                       link_set.size() * 16);
}

void TableState::Link(uint32_t from, uint32_t to) {
  if (from == to) return;
  if (!link_set.insert((static_cast<uint64_t>(from) << 32) | to).second) {
    return;
  }
  if (links.size() <= from) links.resize(static_cast<size_t>(from) + 1);
  links[from].push_back(to);
}

void TableState::Lookup(const Value* k, std::vector<uint32_t>* out) {
  out->clear();
  const int64_t start = plan.linear ? demand.Find(k) : -1;
  if (start < 0) {
    for (uint32_t a = answer_index.Head(k); a != ChainIndex::kEnd;
         a = answer_index.Next(a)) {
      out->push_back(a);
    }
    return;
  }
  std::vector<int> free_pos;
  for (int p = 0; p < plan.arity; ++p) {
    if (!plan.bound[static_cast<size_t>(p)]) free_pos.push_back(p);
  }
  RowSet seen(static_cast<int>(free_pos.size()));
  std::vector<Value> free(free_pos.size());
  std::vector<bool> visited(demand.size(), false);
  std::vector<uint32_t> stack = {static_cast<uint32_t>(start)};
  visited[static_cast<size_t>(start)] = true;
  while (!stack.empty()) {
    const uint32_t d = stack.back();
    stack.pop_back();
    for (uint32_t a = answer_index.Head(demand.row(d)); a != ChainIndex::kEnd;
         a = answer_index.Next(a)) {
      const Value* tuple = answers.row(a);
      for (size_t i = 0; i < free_pos.size(); ++i) {
        free[i] = tuple[free_pos[i]];
      }
      if (seen.Insert(free.data()).second) out->push_back(a);
    }
    if (d < links.size()) {
      for (uint32_t next : links[d]) {
        if (!visited[next]) {
          visited[next] = true;
          stack.push_back(next);
        }
      }
    }
  }
}

namespace {

// The end of a rule body's pipeline: head tuples into the table.
class AnswerCollector : public Operator {
 public:
  AnswerCollector(ExecContext* ctx, TableState* table,
                  const planner::RuleBody* body)
      : Operator(ctx),
        table_(table),
        body_(body),
        tuple_(body->head_slots.size()) {}

  [[nodiscard]] absl::Status Push(Batch& in) override {
    for (size_t r = 0; r < in.size(); ++r) {
      const Value* row = in.row(r);
      for (size_t i = 0; i < tuple_.size(); ++i) {
        tuple_[i] = row[body_->head_slots[i]];
      }
      absl::Status s = table_->AddAnswer(tuple_.data());
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  [[nodiscard]] absl::Status Finish() override { return absl::OkStatus(); }

 private:
  TableState* table_;
  const planner::RuleBody* body_;
  std::vector<Value> tuple_;
};

}  // namespace

// One body of a table, with its pipeline.
struct FixpointEngine::BodyRun {
  std::unique_ptr<Operator> collector;
  std::unique_ptr<Pipeline> pipeline;
  Batch input;
};

CallSiteOp::CallSiteOp(ExecContext* ctx, FixpointEngine* engine,
                       const planner::ScopePlan& scope,
                       const planner::Step& step,
                       std::vector<planner::Slot> live, const StepLabel& label)
    : Operator(ctx),
      engine_(engine),
      step_(step),
      live_(std::move(live)),
      live_row_(live_.size()),
      expanded_(scope.width(), 1),
      cache_(static_cast<int>(live_.size())),
      memory_(ctx, label.ToString()),
      out_(scope.width()) {}

absl::Status CallSiteOp::Init() {
  for (const planner::PlanTerm& t : step_.call.args) {
    absl::StatusOr<TermRef> r = MakeTermRef(ctx_, t, &owned_);
    if (!r.ok()) return r.status();
    args_.push_back(*r);
  }
  key_pos_ = engine_->state(step_.call.table).key_pos;
  key_.resize(key_pos_.size());
  from_key_.resize(key_pos_.size());
  cache_index_ =
      std::make_unique<ChainIndex>(static_cast<int>(key_pos_.size()));
  return absl::OkStatus();
}

absl::Status CallSiteOp::EmitJoined(const Value* row, const Value* answer) {
  Value* o = out_.AppendCopy(row);
  for (size_t i = 0; i < args_.size(); ++i) {
    const TermRef& t = args_[i];
    if (t.kind != TermRef::Kind::kSlot || t.bound) continue;
    if (t.check) {
      if (!JoinEq(o[t.slot], answer[i])) {
        out_.PopBack();
        return absl::OkStatus();
      }
    } else {
      o[t.slot] = answer[i];
    }
  }
  return EmitIfFull(out_);
}

absl::Status CallSiteOp::Push(Batch& in) {
  TableState& t = engine_->state(step_.call.table);
  if (step_.call.linear) return PushLinear(in, t);
  for (size_t r = 0; r < in.size(); ++r) {
    const Value* row = in.row(r);
    for (size_t i = 0; i < live_.size(); ++i) live_row_[i] = row[live_[i]];
    auto [idx, inserted] = cache_.Insert(live_row_.data());
    // A row seen before met the full table then, and meets each delta
    // since in RunDelta.
    if (!inserted) continue;
    for (size_t j = 0; j < key_pos_.size(); ++j) {
      key_[j] = args_[static_cast<size_t>(key_pos_[j])].Get(row);
    }
    cache_index_->Add(key_.data(), idx);
    absl::Status s = engine_->AddDemand(step_.call.table, key_.data());
    if (!s.ok()) return s;
    for (uint32_t a = t.answer_index.Head(key_.data()); a != ChainIndex::kEnd;
         a = t.answer_index.Next(a)) {
      if (a >= t.answers_end) continue;
      s = EmitJoined(row, t.answers.row(a));
      if (!s.ok()) return s;
    }
    s = ctx_->Tick();
    if (!s.ok()) return s;
  }
  return memory_.Update(cache_.bytes() + cache_index_->bytes());
}

absl::Status CallSiteOp::PushLinear(Batch& in, TableState& t) {
  for (size_t r = 0; r < in.size(); ++r) {
    const Value* row = in.row(r);
    for (size_t j = 0; j < key_pos_.size(); ++j) {
      key_[j] = args_[static_cast<size_t>(key_pos_[j])].Get(row);
      from_key_[j] = row[step_.call.link_from[j]];
    }
    uint32_t to = 0;
    absl::Status s = engine_->AddDemand(step_.call.table, key_.data(), &to);
    if (!s.ok()) return s;
    const int64_t from = t.demand.Find(from_key_.data());
    if (from >= 0) t.Link(static_cast<uint32_t>(from), to);
    s = ctx_->Tick();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CallSiteOp::RunDelta() {
  if (step_.call.linear) return absl::OkStatus();
  TableState& t = engine_->state(step_.call.table);
  expanded_.Clear();
  Value* full = expanded_.Append();
  for (uint32_t a = t.answers_delta; a < t.answers_end; ++a) {
    const Value* answer = t.answers.row(a);
    for (size_t j = 0; j < key_pos_.size(); ++j) {
      key_[j] = answer[key_pos_[j]];
    }
    for (uint32_t c = cache_index_->Head(key_.data()); c != ChainIndex::kEnd;
         c = cache_index_->Next(c)) {
      if (c >= cache_end_) continue;
      const Value* cached = cache_.row(c);
      for (size_t i = 0; i < live_.size(); ++i) full[live_[i]] = cached[i];
      absl::Status s = EmitJoined(full, answer);
      if (!s.ok()) return s;
    }
    absl::Status s = ctx_->Tick();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CallSiteOp::Finish() {
  absl::Status s = Emit(out_);
  if (!s.ok()) return s;
  return Operator::Finish();
}

FixpointEngine::FixpointEngine(ExecContext* ctx,
                               const std::vector<planner::TablePlan>& tables)
    : ctx_(ctx),
      tables_(tables),
      states_(tables.size()),
      bodies_(tables.size()) {}

FixpointEngine::~FixpointEngine() = default;

TableState& FixpointEngine::state(int table) {
  std::unique_ptr<TableState>& s = states_[static_cast<size_t>(table)];
  if (s == nullptr) {
    s = std::make_unique<TableState>(ctx_, tables_[static_cast<size_t>(table)],
                                     table);
  }
  return *s;
}

absl::Status FixpointEngine::AddDemand(int table, const Value* key,
                                       uint32_t* index) {
  TableState& t = state(table);
  auto [idx, inserted] = t.demand.Insert(key);
  if (index != nullptr) *index = idx;
  if (inserted && (t.demand.size() & 1023) == 0) return t.UpdateMemory();
  return absl::OkStatus();
}

absl::StatusOr<FixpointEngine::BodyRun*> FixpointEngine::Body(TableState& t,
                                                              size_t body) {
  auto& runs = bodies_[static_cast<size_t>(t.id)];
  if (runs.size() <= body) runs.resize(t.plan.bodies.size());
  if (runs[body] != nullptr) return runs[body].get();
  const planner::RuleBody& b = t.plan.bodies[body];
  auto run = std::make_unique<BodyRun>();
  run->collector = std::make_unique<AnswerCollector>(ctx_, &t, &b);
  absl::StatusOr<std::unique_ptr<Pipeline>> p =
      BuildPipeline(ctx_, tables_, b.scope, this, run->collector.get(), nullptr,
                    StrCat("rule ", t.plan.name));
  if (!p.ok()) return p.status();
  run->pipeline = *std::move(p);
  run->input = Batch(b.scope.width());
  runs[body] = std::move(run);
  return runs[body].get();
}

absl::Status FixpointEngine::RunTable(TableState& t) {
  for (size_t b = 0; b < t.plan.bodies.size(); ++b) {
    absl::StatusOr<BodyRun*> run = Body(t, b);
    if (!run.ok()) return run.status();
    const planner::RuleBody& body = t.plan.bodies[b];
    Operator* head = (*run)->pipeline->head;
    if (t.demand_delta < t.demand_end) {
      Batch& input = (*run)->input;
      input.Clear();
      for (uint32_t d = t.demand_delta; d < t.demand_end; ++d) {
        const Value* key = t.demand.row(d);
        Value* row = input.Append();
        // Head variables repeated at bound positions must agree.
        bool ok = true;
        for (size_t j = 0; j < t.key_pos.size() && ok; ++j) {
          const planner::Slot s =
              body.head_slots[static_cast<size_t>(t.key_pos[j])];
          for (size_t k = 0; k < j && ok; ++k) {
            if (body.head_slots[static_cast<size_t>(t.key_pos[k])] == s) {
              ok = JoinEq(row[s], key[j]);
            }
          }
          row[s] = key[j];
        }
        if (!ok) {
          input.PopBack();
          continue;
        }
        if (input.full()) {
          absl::Status s = head->Run(input);
          input.Clear();
          if (!s.ok()) return s;
        }
      }
      absl::Status s = input.empty() ? absl::OkStatus() : head->Run(input);
      input.Clear();
      if (!s.ok()) return s;
      s = head->RunFinish();
      if (!s.ok()) return s;
    }
    for (CallSiteOp* site : (*run)->pipeline->sites) {
      TableState& called = state(site->table());
      if (called.answers_delta >= called.answers_end) continue;
      absl::Status s = site->RunDelta();
      if (!s.ok()) return s;
      s = site->Finish();
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status FixpointEngine::Solve() {
  while (true) {
    absl::Status s = ctx_->Check();
    if (!s.ok()) return s;
    bool any = false;
    for (auto& t : states_) {
      if (t == nullptr) continue;
      t->demand_delta = t->demand_end;
      t->demand_end = t->demand.size();
      t->answers_delta = t->answers_end;
      t->answers_end = t->answers.size();
      any |=
          t->demand_delta < t->demand_end || t->answers_delta < t->answers_end;
    }
    if (!any) return absl::OkStatus();
    for (auto& runs : bodies_) {
      for (auto& run : runs) {
        if (run == nullptr) continue;
        for (CallSiteOp* site : run->pipeline->sites) site->BeginRound();
      }
    }
    for (size_t i = 0; i < states_.size(); ++i) {
      if (states_[i] == nullptr) continue;
      s = RunTable(*states_[i]);
      if (!s.ok()) return s;
      s = states_[i]->UpdateMemory();
      if (!s.ok()) return s;
    }
  }
}

}  // namespace mentat::query::execution
