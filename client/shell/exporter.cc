#include "shell/exporter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "shell/cell.h"
#include "shell/wire_cell.h"

namespace mentat::cli {
namespace {

// Entity ids are Datomic-shaped (partition << 42 | counter); the wire
// contract documents tx = 3 << 42 | t. Ids below 1000 in partition 0 are
// the bootstrap entities every database has.
constexpr int kPartitionShift = 42;
constexpr int64_t kCounterMask = (int64_t{1} << kPartitionShift) - 1;
constexpr int64_t kFirstUserDbCounter = 1000;

bool IsTxEntity(int64_t e) { return (e >> kPartitionShift) == 3; }
bool IsBootstrap(int64_t e) {
  return (e >> kPartitionShift) == 0 &&
         (e & kCounterMask) < kFirstUserDbCounter;
}

// Idents every database has: the bootstrap ones and the server's own.
bool IsBuiltInIdent(std::string_view ident) {
  const size_t slash = ident.find('/');
  const std::string_view ns = slash == std::string_view::npos
                                  ? std::string_view()
                                  : ident.substr(0, slash);
  return ns == "db" || ns.substr(0, 3) == "db." || ns == "mentat.tx";
}

bool IsSchemaAttribute(std::string_view ident) {
  for (std::string_view a :
       {"db/ident", "db/valueType", "db/cardinality", "db/unique", "db/index",
        "db/isComponent", "db/noHistory", "db/fulltext", "db/doc"}) {
    if (ident == a) return true;
  }
  return false;
}

std::string Tempid(int64_t e) { return "\"e" + std::to_string(e) + "\""; }

std::string Keyword(std::string_view ident) {
  std::string_view s = ident;
  if (!s.empty() && s.front() == ':') s.remove_prefix(1);
  return ":" + std::string(s);
}

struct AttrInfo {
  std::string ident;
  bool ref = false;
  bool many = false;
  bool identity = false;
  bool builtin = false;
};

// Union-find over the entities that must share a transaction.
class Components {
 public:
  int64_t Find(int64_t e) {
    auto it = parent_.find(e);
    if (it == parent_.end()) return e;
    if (it->second == e) return e;
    const int64_t root = Find(it->second);
    parent_[e] = root;
    return root;
  }
  void Union(int64_t a, int64_t b) {
    parent_.try_emplace(a, a);
    parent_.try_emplace(b, b);
    const int64_t ra = Find(a), rb = Find(b);
    if (ra != rb) parent_[ra] = rb;
  }
  bool contains(int64_t e) const { return parent_.contains(e); }
  absl::flat_hash_map<int64_t, int> Sizes() {
    absl::flat_hash_map<int64_t, int> sizes;
    std::vector<int64_t> keys;
    for (const auto& [e, p] : parent_) keys.push_back(e);
    for (int64_t e : keys) ++sizes[Find(e)];
    return sizes;
  }

 private:
  absl::flat_hash_map<int64_t, int64_t> parent_;
};

using EntityDatoms = std::pair<int64_t, std::vector<v1::Datom>>;

class Exporter {
 public:
  Exporter(client::Client* client, const ExportOptions& options,
           client::Canceller* canceller, std::FILE* out)
      : client_(client), options_(options), canceller_(canceller), out_(out) {}

  [[nodiscard]] absl::StatusOr<ExportSummary> Run() {
    const v1::Basis::Kind kind = options_.basis.kind();
    if (kind != v1::Basis::LATEST && kind != v1::Basis::AS_OF) {
      return absl::InvalidArgumentError(
          ".export writes a database value: use .latest or .as-of first");
    }
    absl::Status s = LoadSchema();
    if (s.ok()) s = WriteSchema();
    if (s.ok()) s = LoadIdentities();
    if (s.ok()) s = LoadComponents();
    if (s.ok()) s = WriteData();
    if (!s.ok()) return s;
    if (std::ferror(out_)) {
      return absl::DataLossError(std::string("write failed: ") +
                                 std::strerror(errno));
    }
    return summary_;
  }

 private:
  client::CallOptions Call() const {
    client::CallOptions call;
    call.canceller = canceller_;
    return call;
  }

  [[nodiscard]] absl::Status LoadSchema() {
    v1::SchemaRequest request;
    request.set_database(options_.database);
    absl::StatusOr<v1::SchemaResponse> schema =
        client_->Schema(request, Call());
    if (!schema.ok()) return schema.status();
    basis_ = options_.basis;
    // Every read below sees this one database value.
    basis_.set_db_tx(schema->basis_tx());
    summary_.basis_tx = schema->basis_tx();
    for (const v1::Ident& ident : schema->idents()) {
      idents_[ident.entity()] = ident.ident();
    }
    for (const v1::Attribute& a : schema->attributes()) {
      AttrInfo info;
      info.ident = a.ident();
      info.ref =
          a.value_type() == ":db.type/ref" || a.value_type() == "db.type/ref";
      info.many = a.many();
      info.identity = a.unique() == v1::Attribute::UNIQUE_IDENTITY;
      info.builtin = IsBuiltInIdent(a.ident()) || IsBootstrap(a.id());
      attrs_[a.id()] = info;
      if (!info.builtin) schema_.push_back(a);
    }
    std::sort(schema_.begin(), schema_.end(),
              [](const v1::Attribute& x, const v1::Attribute& y) {
                return x.id() < y.id();
              });
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status WriteSchema() {
    std::string head = ";; mentat-cli export of database \"" +
                       options_.database + "\" at t " +
                       std::to_string(summary_.basis_tx & kCounterMask);
    if (options_.basis.kind() == v1::Basis::AS_OF) head += " (as of)";
    head += "\n;; Load it into an empty database with .import.\n";
    std::fputs(head.c_str(), out_);
    if (!schema_.empty()) {
      std::string tx = "[";
      for (size_t i = 0; i < schema_.size(); ++i) {
        const v1::Attribute& a = schema_[i];
        if (i > 0) tx += "\n ";
        tx += "{:db/ident " + Keyword(a.ident()) + ", :db/valueType " +
              Keyword(a.value_type()) + ", :db/cardinality " +
              (a.many() ? ":db.cardinality/many" : ":db.cardinality/one");
        if (a.unique() == v1::Attribute::UNIQUE_IDENTITY) {
          tx += ", :db/unique :db.unique/identity";
        } else if (a.unique() == v1::Attribute::UNIQUE_VALUE) {
          tx += ", :db/unique :db.unique/value";
        }
        if (a.index()) tx += ", :db/index true";
        if (a.is_component()) tx += ", :db/isComponent true";
        if (a.no_history()) tx += ", :db/noHistory true";
        if (a.fulltext()) tx += ", :db/fulltext true";
        if (!a.doc().empty()) tx += ", :db/doc " + ToEdn(Cell::String(a.doc()));
        tx += "}";
      }
      tx += "]\n";
      std::fputs(tx.c_str(), out_);
      ++summary_.transactions;
    }
    // Idents that are not attributes (enum values), so later refs can name
    // them.
    std::vector<std::pair<int64_t, std::string>> enums;
    for (const auto& [e, ident] : idents_) {
      if (attrs_.contains(e) || IsBuiltInIdent(ident) || IsBootstrap(e) ||
          IsTxEntity(e)) {
        continue;
      }
      enums.emplace_back(e, ident);
    }
    std::sort(enums.begin(), enums.end());
    if (!enums.empty()) {
      std::string tx = "[";
      for (size_t i = 0; i < enums.size(); ++i) {
        if (i > 0) tx += "\n ";
        tx += "{:db/id " + Tempid(enums[i].first) + ", :db/ident " +
              Keyword(enums[i].second) + "}";
      }
      tx += "]\n";
      std::fputs(tx.c_str(), out_);
      ++summary_.transactions;
    }
    return absl::OkStatus();
  }

  // Streams the datoms of one index (all of it, or one attribute's).
  [[nodiscard]] absl::Status Scan(
      v1::Index index, int64_t attribute,
      const std::function<void(const v1::Datom&)>& each) {
    v1::DatomsRequest request;
    request.set_database(options_.database);
    request.set_index(index);
    if (attribute != 0) request.add_components()->set_long_value(attribute);
    *request.mutable_basis() = basis_;
    request.set_batch_size(5000);
    return client_->Datoms(
        request,
        [&](const v1::DatomsResponse& batch) {
          for (const v1::Datom& d : batch.datoms()) each(d);
          return true;
        },
        Call());
  }

  [[nodiscard]] absl::Status LoadIdentities() {
    for (const auto& [id, attr] : attrs_) {
      if (!attr.identity || attr.builtin) continue;
      const std::string ident = attr.ident;
      absl::Status s = Scan(v1::AEVT, id, [&](const v1::Datom& d) {
        identity_.try_emplace(d.e(), Keyword(ident), ToEdn(ToCell(d.v())));
      });
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  bool HasHandle(int64_t e) const {
    return idents_.contains(e) || identity_.contains(e) || IsTxEntity(e) ||
           IsBootstrap(e);
  }

  [[nodiscard]] absl::Status LoadComponents() {
    for (const auto& [id, attr] : attrs_) {
      if (!attr.ref || attr.builtin) continue;
      absl::Status s = Scan(v1::AEVT, id, [&](const v1::Datom& d) {
        const int64_t target = d.v().kind_case() == v1::Value::kRef
                                   ? d.v().ref()
                                   : d.v().long_value();
        if (target != d.e() && !HasHandle(target)) {
          components_.Union(d.e(), target);
        }
      });
      if (!s.ok()) return s;
    }
    component_sizes_ = components_.Sizes();
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status WriteData() {
    EntityDatoms current;
    current.first = -1;
    absl::Status s = Scan(v1::EAVT, 0, [&](const v1::Datom& d) {
      if (d.e() != current.first) {
        if (current.first >= 0) Entity(std::move(current));
        current = EntityDatoms(d.e(), {});
      }
      current.second.push_back(d);
    });
    if (!s.ok()) return s;
    if (current.first >= 0) Entity(std::move(current));
    // Components whose members were not all seen (a ref to an entity with
    // no datoms): written with what there is.
    for (auto& [root, members] : pending_) Unit(std::move(members));
    pending_.clear();
    Flush();
    return absl::OkStatus();
  }

  void Entity(EntityDatoms entity) {
    const int64_t e = entity.first;
    if (IsTxEntity(e) || IsBootstrap(e)) return;
    auto ident = idents_.find(e);
    if (ident != idents_.end() && IsBuiltInIdent(ident->second)) return;
    const bool is_attribute = attrs_.contains(e);
    std::vector<v1::Datom> kept;
    for (v1::Datom& d : entity.second) {
      auto attr = attrs_.find(d.a());
      const std::string_view a =
          attr == attrs_.end() ? std::string_view() : attr->second.ident;
      if (a == "db/ident") continue;  // written with the schema or idents
      if (is_attribute && IsSchemaAttribute(a)) continue;
      kept.push_back(std::move(d));
    }
    if (kept.empty()) return;
    entity.second = std::move(kept);
    if (components_.contains(e)) {
      const int64_t root = components_.Find(e);
      std::vector<EntityDatoms>& members = pending_[root];
      members.push_back(std::move(entity));
      if (static_cast<int>(members.size()) >= component_sizes_[root]) {
        std::vector<EntityDatoms> unit = std::move(members);
        pending_.erase(root);
        Unit(std::move(unit));
      }
      return;
    }
    std::vector<EntityDatoms> unit;
    unit.push_back(std::move(entity));
    Unit(std::move(unit));
  }

  void Unit(std::vector<EntityDatoms> unit) {
    size_t datoms = 0;
    for (const auto& e : unit) datoms += e.second.size();
    if (!batch_.empty() &&
        batch_datoms_ + datoms > static_cast<size_t>(options_.datoms_per_tx)) {
      Flush();
    }
    for (auto& e : unit) batch_.push_back(std::move(e));
    batch_datoms_ += datoms;
  }

  // How a ref to `target` is written in the current batch; false to leave
  // the datom out.
  bool RefForm(int64_t target, std::string* out, std::vector<int64_t>* stubs) {
    auto ident = idents_.find(target);
    if (ident != idents_.end()) {
      *out = Keyword(ident->second);
      return true;
    }
    if (in_batch_.contains(target)) {
      *out = Tempid(target);
      return true;
    }
    auto identity = identity_.find(target);
    if (identity != identity_.end()) {
      if (written_.contains(target)) {
        *out =
            "[" + identity->second.first + " " + identity->second.second + "]";
      } else {
        // Not written yet: name it by tempid here and assert its identity,
        // so this transaction and the later one upsert into one entity.
        *out = Tempid(target);
        stubs->push_back(target);
      }
      return true;
    }
    if (IsTxEntity(target)) return false;
    *out = Tempid(target);
    return true;
  }

  void Flush() {
    if (batch_.empty()) return;
    in_batch_.clear();
    for (const auto& e : batch_) in_batch_.insert(e.first);
    std::vector<int64_t> stubs;
    std::string tx = "[";
    bool first_form = true;
    const auto form = [&](const std::string& text) {
      if (!first_form) tx += "\n ";
      first_form = false;
      tx += text;
    };
    for (const auto& [e, datoms] : batch_) {
      auto ident = idents_.find(e);
      const std::string id =
          ident != idents_.end() ? Keyword(ident->second) : Tempid(e);
      std::string map;
      std::vector<std::string> adds;
      for (const v1::Datom& d : datoms) {
        auto attr = attrs_.find(d.a());
        if (attr == attrs_.end()) {
          ++summary_.skipped;
          continue;
        }
        std::string value;
        if (attr->second.ref) {
          const int64_t target = d.v().kind_case() == v1::Value::kRef
                                     ? d.v().ref()
                                     : d.v().long_value();
          if (!RefForm(target, &value, &stubs)) {
            ++summary_.skipped;
            continue;
          }
        } else {
          value = ToEdn(ToCell(d.v()));
        }
        const std::string a = Keyword(attr->second.ident);
        if (attr->second.many) {
          adds.push_back("[:db/add " + id + " " + a + " " + value + "]");
        } else {
          map += ", " + a + " " + value;
        }
        ++summary_.datoms;
      }
      if (!map.empty()) form("{:db/id " + id + map + "}");
      for (const std::string& add : adds) form(add);
      ++summary_.entities;
    }
    std::sort(stubs.begin(), stubs.end());
    stubs.erase(std::unique(stubs.begin(), stubs.end()), stubs.end());
    for (int64_t target : stubs) {
      const auto& identity = identity_.at(target);
      form("{:db/id " + Tempid(target) + ", " + identity.first + " " +
           identity.second + "}");
    }
    tx += "]\n";
    std::fputs(tx.c_str(), out_);
    ++summary_.transactions;
    for (const auto& e : batch_) {
      if (identity_.contains(e.first)) written_.insert(e.first);
    }
    batch_.clear();
    batch_datoms_ = 0;
  }

  client::Client* client_;
  const ExportOptions& options_;
  client::Canceller* canceller_;
  std::FILE* out_;
  v1::Basis basis_;
  ExportSummary summary_;
  std::vector<v1::Attribute> schema_;
  absl::flat_hash_map<int64_t, AttrInfo> attrs_;
  absl::flat_hash_map<int64_t, std::string> idents_;
  // Entity -> (identity attribute keyword, value EDN).
  absl::flat_hash_map<int64_t, std::pair<std::string, std::string>> identity_;
  absl::flat_hash_set<int64_t> written_;  // identity entities already out
  Components components_;
  absl::flat_hash_map<int64_t, int> component_sizes_;
  absl::flat_hash_map<int64_t, std::vector<EntityDatoms>> pending_;
  std::vector<EntityDatoms> batch_;
  size_t batch_datoms_ = 0;
  absl::flat_hash_set<int64_t> in_batch_;
};

}  // namespace

absl::StatusOr<ExportSummary> ExportDatabase(client::Client* client,
                                             const std::string& path,
                                             const ExportOptions& options,
                                             client::Canceller* canceller) {
  const std::string tmp = path + ".partial";
  std::FILE* out = std::fopen(tmp.c_str(), "w");
  if (out == nullptr) {
    return absl::PermissionDeniedError("cannot write " + path + ": " +
                                       std::strerror(errno));
  }
  absl::StatusOr<ExportSummary> summary =
      Exporter(client, options, canceller, out).Run();
  if (std::fclose(out) != 0 && summary.ok()) {
    summary = absl::DataLossError("cannot write " + path + ": " +
                                  std::strerror(errno));
  }
  if (!summary.ok()) {
    std::remove(tmp.c_str());
    return summary;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::PermissionDeniedError("cannot write " + path + ": " +
                                       std::strerror(errno));
  }
  return summary;
}

}  // namespace mentat::cli
