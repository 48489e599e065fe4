#ifndef MENTAT_STORAGE_INTERNAL_TX_APPLIER_H_
#define MENTAT_STORAGE_INTERNAL_TX_APPLIER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "internal/log_codec.h"
#include "internal/store_core.h"
#include "internal/tx_batch.h"
#include "internal/tx_state.h"
#include "mentat/storage/tx_op.h"
#include "mentat/storage/tx_report.h"

namespace mentat::storage::internal {

// The message refusing a write of system attribute `attr` by tx-data.
std::string SystemAttributeMessage(const Attribute& attr);

// A transaction of a primary's log, decoded, on its way to the transactor
// (Store::ApplyReplicated).
struct ReplicatedEntry {
  EntityId prev_tx = 0;
  int64_t prev_instant = 0;  // ReplicatedTx::prev_instant
  EntityId tx = 0;
  // The entry's term and, for a v2 entry, the primary's counters.
  LogEntryHeader header;
  std::vector<Datom> datoms;
};

// One excision request of a transaction: an entity asserting :db/excise.
struct Excision {
  EntityId record = 0;  // the request entity
  // An entity, whose datoms go (only those of `attrs` when it is not
  // empty); or an attribute (`attribute`), whose datoms on every entity go.
  EntityId target = 0;
  bool attribute = false;
  std::vector<EntityId> attrs;
  // Only datoms asserted by a transaction before this one (0: all).
  EntityId before = 0;
  bool before_given = false;
  const TxOp* source = nullptr;
};

// True if `request` names an excision attribute (:db/excise and
// :db.excise/*): the transactor commits it in a group of its own.
bool IsExcision(const TxRequest& request);
bool IsExcision(const ReplicatedEntry& entry);

// Applies one transaction on top of the group's batch with Datomic's
// semantics: resolves idents, lookup refs and tempids (unifying them and
// upserting through :db.unique/identity), checks types, uniqueness,
// cardinality and cas, elides redundant datoms, adds the implicit
// retractions of cardinality-one replacements, and writes the datoms to
// the current and history families and the log. Transactor thread only.
class TxApplier {
 public:
  // `options` (tx_instant_max_skew_ms) must outlive the applier.
  TxApplier(TxBatch* group, const Statistics* group_stats, TxState* state,
            const StoreOptions& options);

  // On success the batch holds the transaction's writes, *state is
  // advanced and *delta holds its statistics changes. On failure the
  // caller rolls the batch back to its save point and drops *state.
  [[nodiscard]] absl::StatusOr<TxReport> Apply(const TxRequest& request,
                                               StatsDelta* delta);

  // Applies a transaction of a primary's log (tx_replicated.cc): its
  // datoms are already resolved, so this only checks that it follows the
  // state (prev_tx is the basis), finds the asserting tx of each
  // retraction, and runs the same statistics, write and schema steps as
  // Apply. Takes the partition counters of a v2 entry's header (raising
  // them, never lowering), or, for a v1 entry, raises them past every id
  // the entry names; takes the entry's term. Errors: FailedPrecondition
  // (out of order, or a term older than the state's), DataLoss (the entry
  // does not fit the state). The caller rolls back as for Apply.
  [[nodiscard]] absl::StatusOr<TxReport> ApplyReplicated(
      const ReplicatedEntry& entry, StatsDelta* delta);

  // For a bulk import, before Apply. The attributes in `attributes`
  // (untracked ones) get no change of distinct values in the delta: the
  // import counts them per chunk (ImportDistinct) instead of one AVET scan
  // per new (attribute, value) here. Not owned; null: count as usual.
  void DeferDistinct(const absl::flat_hash_set<EntityId>* attributes) {
    distinct_deferred_ = attributes;
  }
  // Resolved lookup refs shared by the transactions of a bulk import
  // (AVET prefix -> entity) instead of this transaction's own. The caller
  // bounds it and clears it whenever a transaction retracts a datom of a
  // unique attribute or changes the schema (the only ways a resolution
  // can change). Not owned; null: this transaction's own cache.
  void ShareLookups(absl::flat_hash_map<std::string, EntityId>* cache) {
    lookups_ = cache;
  }

 private:
  // An entity position once resolved: an id, or a tempid (index into
  // tempids_) until tempids are resolved.
  struct EntitySlot {
    EntityId id = 0;
    int tempid = -1;
  };
  struct TempId {
    std::string name;
    bool nested = false;
    bool is_tx = false;
    bool schema = false;  // gets a db-partition id
    EntityId id = 0;      // 0 until resolved
    bool fresh = false;   // newly allocated: has no datoms yet
    SourcePos pos;        // of the first op that used it, for messages
  };
  // A value once typed for its attribute. For refs, `entity` holds it.
  struct ValueSlot {
    Value value;
    EntitySlot entity;
    bool is_entity = false;
  };
  struct Op {
    TxOp::Kind kind;
    EntitySlot e;
    const Attribute* attr = nullptr;
    ValueSlot v;
    ValueSlot old;
    bool old_is_nil = false;
    const TxOp* source = nullptr;
  };

  // tx_resolve.cc
  [[nodiscard]] absl::Status ResolveOps(const TxRequest& request);
  [[nodiscard]] absl::StatusOr<EntitySlot> ResolveEntity(const EntityRef& ref,
                                                         const TxOp& op);
  [[nodiscard]] absl::StatusOr<ValueSlot> ResolveValue(const TxValue& v,
                                                       const Attribute& attr,
                                                       const TxOp& op);
  bool MapPairIsLookupRef(const Attribute& attr, const EntityRef& pair) const;
  [[nodiscard]] absl::Status ResolveTempIds();
  [[nodiscard]] absl::Status CheckNested();
  EntityId Id(const EntitySlot& slot) const;
  Value ValueOf(const ValueSlot& slot) const;
  bool IsFresh(EntityId e) const;

  // tx_applier.cc
  [[nodiscard]] absl::Status BuildDatoms();
  [[nodiscard]] absl::Status AddAssertion(EntityId e, const Attribute& attr,
                                          Value v, const TxOp* source);
  // `asserted_tx`: the tx that asserted [e a v], when the caller has just
  // read the datom (a scan of the group); 0 to look it up.
  [[nodiscard]] absl::Status AddRetraction(EntityId e, const Attribute& attr,
                                           const Value& v, const TxOp* source,
                                           EntityId asserted_tx = 0);
  [[nodiscard]] absl::Status RetractEntity(EntityId e, const TxOp* source,
                                           int depth);
  // tx_composite.cc: after BuildDatoms, the assertions and retractions
  // that bring every composite tuple (:db/tupleAttrs) of an entity whose
  // members the transaction touched up to date; refuses a composite value
  // tx-data gives that is not the one its members make.
  [[nodiscard]] absl::Status MaintainComposites();
  // The value of cardinality-one attribute `a` of `e` before this
  // transaction (nullopt: none, or `e` is new).
  [[nodiscard]] absl::StatusOr<std::optional<Value>> ValueBefore(EntityId e,
                                                                 EntityId a);
  // The current value of cardinality-one `member` of `e` once this
  // transaction's datoms apply (nullopt: none).
  [[nodiscard]] absl::StatusOr<std::optional<Value>> ValueAfter(
      EntityId e, const Attribute& member);
  // tx_excise.cc: the excision requests among the transaction's datoms
  // (entities with :db/excise), checked (unless replicated: the primary
  // checked them), and the datoms they remove, found in the log, which
  // holds every datom ever asserted or retracted (a :db/noHistory value
  // and a datom retention dropped from history included).
  [[nodiscard]] absl::Status PlanExcisions(bool replicated);
  // Removes what PlanExcisions found: current and history keys in every
  // order, fulltext postings, and the datoms in each log entry.
  [[nodiscard]] absl::Status WriteExcisions();
  [[nodiscard]] absl::Status CheckExcision(const Excision& x,
                                           const std::vector<Excision>& all);
  [[nodiscard]] absl::Status FindExcised(const StoreCore& core);
  [[nodiscard]] absl::Status RepostFulltext(const StoreCore& core);
  // tx_ensure.cc: once the transaction's datoms are written and the
  // schema rebuilt (so reads see the state it leaves), checks every
  // asserted value against its attribute's :db.attr/preds, every
  // :db.entity/attrs written against the schema, and every entity named
  // by :db/ensure against its spec's required attributes.
  [[nodiscard]] absl::Status CheckEnsured();
  [[nodiscard]] absl::Status CheckUniqueness();
  [[nodiscard]] absl::Status CheckSystemWrites();
  [[nodiscard]] absl::Status CheckSchemaChanges();
  [[nodiscard]] absl::Status ComputeStats(StatsDelta* delta);
  [[nodiscard]] absl::Status WriteDatoms();
  [[nodiscard]] absl::Status RebuildSchema();

  [[nodiscard]] absl::Status OpError(absl::StatusCode code, const TxOp* op,
                                     const std::string& message) const;

  TxBatch* group_;
  const Statistics* group_stats_;
  TxState* state_;
  const StoreOptions& options_;

  EntityId tx_ = 0;
  std::array<int64_t, 5> start_counter_{};
  int64_t tx_instant_ = 0;
  std::vector<Op> ops_;
  std::vector<TempId> tempids_;
  absl::flat_hash_map<std::string, int> tempid_index_;
  // Resolved lookup refs of this transaction: AVET prefix -> entity.
  absl::flat_hash_map<std::string, EntityId> lookup_cache_;
  absl::flat_hash_map<std::string, EntityId>* lookups_ = nullptr;
  // The AVET prefix of the lookup ref being resolved (reused).
  std::string lookup_prefix_;
  const absl::flat_hash_set<EntityId>* distinct_deferred_ = nullptr;

  // The transaction's datoms: assertions carry the tx; retractions carry
  // the tx that asserted the retracted datom in `asserted_tx`.
  struct PendingDatom {
    Datom datom;
    const Attribute* attr;
    EntityId asserted_tx = 0;  // retractions only
    const TxOp* source = nullptr;
  };
  std::vector<PendingDatom> datoms_;
  // Markers in datom_index_ and card_one_index_ for datoms the
  // transaction touched but did not write: a redundant assertion, or a
  // retraction of a datom that is absent.
  static constexpr size_t kRedundantAssert = static_cast<size_t>(-1);
  static constexpr size_t kAbsentRetract = static_cast<size_t>(-2);
  // The EAVT key of a datom, for reads of the batch.
  static std::string DatomKey(EntityId e, EntityId a, const Value& v);
  // A datom's identity as datom_index_ keys it. Values compare and hash
  // as their encodings would (Value::operator==, ValueHash), so the index
  // finds what an EAVT key would without encoding and allocating a key
  // per datom (13% fewer instructions in AddAssertion, callgrind of
  // storage-bench import --scale xs). DatomProbe looks one up without
  // copying the value.
  struct DatomIdentity {
    EntityId e;
    EntityId a;
    Value v;
  };
  struct DatomProbe {
    EntityId e;
    EntityId a;
    const Value* v;
  };
  static const Value& ValueOfKey(const DatomIdentity& d) { return d.v; }
  static const Value& ValueOfKey(const DatomProbe& d) { return *d.v; }
  struct DatomIdentityHash {
    using is_transparent = void;
    template <typename K>
    size_t operator()(const K& d) const {
      return absl::HashOf(d.e, d.a, ValueHash{}(ValueOfKey(d)));
    }
  };
  struct DatomIdentityEq {
    using is_transparent = void;
    template <typename K1, typename K2>
    bool operator()(const K1& x, const K2& y) const {
      return x.e == y.e && x.a == y.a && ValueOfKey(x) == ValueOfKey(y);
    }
  };
  using DatomIndex = absl::flat_hash_map<DatomIdentity, size_t,
                                         DatomIdentityHash, DatomIdentityEq>;
  DatomIndex::const_iterator FindDatom(EntityId e, EntityId a,
                                       const Value& v) const {
    return datom_index_.find(DatomProbe{e, a, &v});
  }
  void IndexDatom(EntityId e, EntityId a, const Value& v, size_t slot) {
    datom_index_.emplace(DatomIdentity{e, a, v}, slot);
  }
  // (e, a, v) -> index into datoms_, to find duplicates and conflicts;
  // (e, a) -> asserted value index for cardinality one.
  DatomIndex datom_index_;
  absl::flat_hash_map<std::pair<EntityId, EntityId>, size_t> card_one_index_;
  // [:db/add e :db/ensure spec] ops: checked by CheckEnsured, never
  // written.
  struct Ensure {
    EntityId e;
    EntityId spec;
    const TxOp* source;
  };
  std::vector<Ensure> ensures_;
  bool schema_touched_ = false;
  bool tx_instant_given_ = false;

  // The excisions of the transaction (tx_excise.cc).
  std::vector<Excision> excisions_;
  struct ExcisedDatom {
    Datom datom;             // tx: the transaction that asserted it
    EntityId retracted = 0;  // 0: current
    const Attribute* attr = nullptr;
  };
  std::vector<ExcisedDatom> excised_;
  // Log entries that lose datoms: tx -> the entry without them.
  std::vector<std::pair<EntityId, std::string>> excised_log_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_TX_APPLIER_H_
