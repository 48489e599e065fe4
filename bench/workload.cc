#include "workload.h"

#include <algorithm>

namespace mentat::bench {
namespace {

using storage::EntityRef;
using storage::TxOp;
using storage::TxValue;
using storage::Value;

// splitmix64: a good 64-bit mix, so per-record streams are independent.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A small deterministic stream for one record.
class RecordRng {
 public:
  RecordRng(uint64_t salt, int64_t idx)
      : state_(Mix(salt * 0x100000001b3ULL ^ static_cast<uint64_t>(idx))) {}
  uint64_t Next() { return state_ = Mix(state_); }
  int64_t Uniform(int64_t n) { return static_cast<int64_t>(Next() % n); }

 private:
  uint64_t state_;
};

constexpr uint64_t kIssueSalt = 0x6d656e746174ULL;  // fixed seed
constexpr uint64_t kHistorySalt = 0x686973746f7279ULL;
// 2025-01-01T00:00:00Z in seconds; 2025 has 525,600 minutes.
constexpr int64_t k2025 = 1735689600;
constexpr int64_t kMinutesIn2025 = 525600;

TxOp Add(EntityRef e, const char* attr, TxValue v) {
  TxOp op;
  op.kind = TxOp::Kind::kAdd;
  op.e = std::move(e);
  op.a = EntityRef::Ident(attr);
  op.v = std::move(v);
  return op;
}

TxOp AddScalar(const EntityRef& e, const char* attr, Value v) {
  return Add(e, attr, TxValue::Scalar(std::move(v)));
}

}  // namespace

bool ScaleByName(std::string_view name, WorkloadScale* out) {
  static const WorkloadScale kScales[] = {
      {"xs", 200, 13000, 50},         {"s", 1600, 130000, 200},
      {"m", 16000, 1300000, 500},     {"l", 160000, 13000000, 1000},
      {"xl", 500000, 40000000, 2000},
  };
  for (const auto& s : kScales) {
    if (s.name == name) {
      *out = s;
      return true;
    }
  }
  return false;
}

std::string UserEmail(int64_t k) {
  return "user" + std::to_string(k) + "@example.com";
}
std::string UserName(int64_t k) { return "User " + std::to_string(k); }
std::string LabelName(int64_t k) { return "label-" + std::to_string(k); }

Issue GenerateIssue(const WorkloadScale& scale, int64_t idx) {
  RecordRng rng(kIssueSalt, idx);
  Issue issue;
  issue.idx = idx;
  issue.title =
      "Issue " + std::to_string(idx) + ": " + kTitleWords[rng.Uniform(5)];
  issue.state = static_cast<int>(rng.Uniform(5));
  issue.priority = 1 + rng.Uniform(5);
  issue.assignee = rng.Uniform(scale.users);
  issue.reporter = rng.Uniform(scale.users);
  issue.created_at_micros =
      (k2025 + 60 * rng.Uniform(kMinutesIn2025)) * 1000000;
  const int64_t nlabels = rng.Uniform(4);
  while (static_cast<int64_t>(issue.labels.size()) < nlabels) {
    const int64_t l = rng.Uniform(scale.labels);
    if (std::find(issue.labels.begin(), issue.labels.end(), l) ==
        issue.labels.end()) {
      issue.labels.push_back(l);
    }
  }
  return issue;
}

bool HistoryChange(const WorkloadScale& scale, int64_t idx, int* new_state) {
  RecordRng rng(kHistorySalt, idx);
  if (rng.Uniform(20) != 0) return false;  // 5%
  const int initial = GenerateIssue(scale, idx).state;
  *new_state = static_cast<int>((initial + 1 + rng.Uniform(4)) % 5);
  return true;
}

int64_t CountHistoryChanges(const WorkloadScale& scale) {
  int64_t n = 0;
  for (int64_t idx = 0; idx < scale.issues; ++idx) {
    // The draw HistoryChange makes first, without generating the issue.
    RecordRng rng(kHistorySalt, idx);
    if (rng.Uniform(20) == 0) n++;
  }
  return n;
}

std::vector<TxOp> SchemaOps() {
  struct A {
    const char* ident;
    const char* type;
    bool many;
    const char* unique;
  };
  const A attrs[] = {
      {"user/email", "db.type/string", false, "db.unique/identity"},
      {"user/name", "db.type/string", false, nullptr},
      {"issue/title", "db.type/string", false, nullptr},
      {"issue/state", "db.type/keyword", false, nullptr},
      {"issue/priority", "db.type/long", false, nullptr},
      {"issue/assignee", "db.type/ref", false, nullptr},
      {"issue/reporter", "db.type/ref", false, nullptr},
      {"issue/created-at", "db.type/instant", false, nullptr},
      {"issue/label", "db.type/ref", true, nullptr},
      {"label/name", "db.type/string", false, "db.unique/identity"},
  };
  std::vector<TxOp> ops;
  for (const A& a : attrs) {
    EntityRef e = EntityRef::TempId(std::string("a:") + a.ident);
    ops.push_back(AddScalar(e, "db/ident", Value::Keyword(a.ident)));
    ops.push_back(
        Add(e, "db/valueType", TxValue::Entity(EntityRef::Ident(a.type))));
    ops.push_back(
        Add(e, "db/cardinality",
            TxValue::Entity(EntityRef::Ident(a.many ? "db.cardinality/many"
                                                    : "db.cardinality/one"))));
    if (a.unique != nullptr) {
      ops.push_back(
          Add(e, "db/unique", TxValue::Entity(EntityRef::Ident(a.unique))));
    }
    ops.push_back(AddScalar(e, "db/index", Value::Boolean(true)));
    // Titles are searched by the fulltext scenarios.
    if (std::string_view(a.ident) == "issue/title") {
      ops.push_back(AddScalar(e, "db/fulltext", Value::Boolean(true)));
    }
  }
  return ops;
}

std::vector<TxOp> UserOps(int64_t begin, int64_t end) {
  std::vector<TxOp> ops;
  for (int64_t k = begin; k < end; ++k) {
    EntityRef e = EntityRef::TempId("u" + std::to_string(k));
    ops.push_back(AddScalar(e, "user/email", Value::String(UserEmail(k))));
    ops.push_back(AddScalar(e, "user/name", Value::String(UserName(k))));
  }
  return ops;
}

std::vector<TxOp> LabelOps(int64_t begin, int64_t end) {
  std::vector<TxOp> ops;
  for (int64_t k = begin; k < end; ++k) {
    ops.push_back(AddScalar(EntityRef::TempId("l" + std::to_string(k)),
                            "label/name", Value::String(LabelName(k))));
  }
  return ops;
}

std::vector<TxOp> IssueOps(const WorkloadScale& scale, int64_t begin,
                           int64_t end) {
  std::vector<TxOp> ops;
  ops.reserve(static_cast<size_t>((end - begin) * 8));
  for (int64_t idx = begin; idx < end; ++idx) {
    const Issue issue = GenerateIssue(scale, idx);
    EntityRef e = EntityRef::TempId("i" + std::to_string(idx));
    ops.push_back(AddScalar(e, "issue/title", Value::String(issue.title)));
    ops.push_back(
        AddScalar(e, "issue/state", Value::Keyword(kStates[issue.state])));
    ops.push_back(AddScalar(e, "issue/priority", Value::Long(issue.priority)));
    ops.push_back(
        Add(e, "issue/assignee",
            TxValue::Entity(EntityRef::LookupRef(
                "user/email", Value::String(UserEmail(issue.assignee))))));
    ops.push_back(
        Add(e, "issue/reporter",
            TxValue::Entity(EntityRef::LookupRef(
                "user/email", Value::String(UserEmail(issue.reporter))))));
    ops.push_back(AddScalar(e, "issue/created-at",
                            Value::Instant(issue.created_at_micros)));
    for (int64_t l : issue.labels) {
      ops.push_back(Add(e, "issue/label",
                        TxValue::Entity(EntityRef::LookupRef(
                            "label/name", Value::String(LabelName(l))))));
    }
  }
  return ops;
}

TxOp StateChangeOp(storage::EntityId issue, int new_state) {
  return AddScalar(EntityRef::Id(issue), "issue/state",
                   Value::Keyword(kStates[new_state]));
}

}  // namespace mentat::bench
