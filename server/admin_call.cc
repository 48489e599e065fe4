// Schema, Stats and database management.

#include <rocksdb/statistics.h>

#include <algorithm>
#include <memory>

#include "call.h"
#include "mentat/base/str_cat.h"
#include "service.h"
#include "value_convert.h"

namespace mentat::server {

namespace {

void FillAttribute(const storage::Attribute& a, v1::Attribute* out) {
  out->set_id(a.id);
  out->set_ident(a.ident);
  out->set_value_type(std::string(storage::ValueTypeIdent(a.type)));
  out->set_many(a.many());
  switch (a.unique) {
    case storage::Unique::kNone:
      out->set_unique(v1::Attribute::UNIQUE_NONE);
      break;
    case storage::Unique::kValue:
      out->set_unique(v1::Attribute::UNIQUE_VALUE);
      break;
    case storage::Unique::kIdentity:
      out->set_unique(v1::Attribute::UNIQUE_IDENTITY);
      break;
  }
  out->set_index(a.index);
  out->set_is_component(a.is_component);
  out->set_no_history(a.no_history);
  out->set_fulltext(a.fulltext);
  out->set_doc(a.doc);
}

// Posts `work(call, request, database)` to a reader thread after the usual
// checks; `work` finishes the call.
template <typename Request, typename Work>
void OnDatabase(const UnaryCall& call, const Buf* req, Work work) {
  auto request = std::make_shared<Request>();
  absl::Status s = call.Begin(req, request.get());
  if (!s.ok()) return call.Finish(s);
  ServiceContext& sc = call.sc();
  auto database = sc.registry.Get(request->database());
  if (!database.ok()) return call.Finish(database.status());
  // Read-your-writes: the read runs once the database has the basis.
  std::shared_ptr<Database> db = *std::move(database);
  AfterMinBasis(sc, db, request->min_basis_tx(), SteadyDeadline(call.context()),
                [call, request, db, work](absl::Status ready) {
                  if (!ready.ok()) return call.Finish(ready);
                  call.sc().readers.Post(
                      [call, request, db, work] { work(call, *request, *db); });
                });
}

}  // namespace

void ServeSchema(const UnaryCall& call, const Buf* req) {
  OnDatabase<v1::SchemaRequest>(
      call, req,
      [](const UnaryCall& call, const v1::SchemaRequest&, Database& database) {
        std::shared_ptr<const storage::Db> db = database.Latest();
        const storage::Schema& schema = db->schema();
        v1::SchemaResponse response;
        std::vector<const storage::Attribute*> attrs;
        for (const auto& [id, a] : schema.attributes()) attrs.push_back(&a);
        std::sort(attrs.begin(), attrs.end(), [](const auto* x, const auto* y) {
          return x->ident < y->ident;
        });
        for (const storage::Attribute* a : attrs) {
          FillAttribute(*a, response.add_attributes());
        }
        std::vector<std::pair<std::string, storage::EntityId>> idents(
            schema.idents().begin(), schema.idents().end());
        std::sort(idents.begin(), idents.end());
        for (const auto& [ident, e] : idents) {
          v1::Ident* out = response.add_idents();
          out->set_ident(ident);
          out->set_entity(e);
        }
        response.set_basis_tx(db->basis_tx());
        call.Finish(absl::OkStatus(), &response);
      });
}

void ServeStats(const UnaryCall& call, const Buf* req) {
  OnDatabase<v1::StatsRequest>(
      call, req,
      [](const UnaryCall& call, const v1::StatsRequest& request,
         Database& database) {
        std::shared_ptr<const storage::Db> db = database.Latest();
        const storage::Schema& schema = db->schema();
        v1::StatsResponse response;
        response.set_basis_tx(db->basis_tx());
        response.set_basis_tx_instant_micros(db->basis_tx_instant());
        std::vector<std::pair<std::string, storage::EntityId>> by_ident;
        for (const auto& entry : db->stats().all()) {
          const storage::EntityId a = entry.first;
          const storage::Attribute* attr = schema.FindAttribute(a);
          by_ident.emplace_back(attr != nullptr ? attr->ident : "", a);
        }
        std::sort(by_ident.begin(), by_ident.end());
        for (const auto& [ident, a] : by_ident) {
          const storage::AttributeStats* stats = db->stats().Find(a);
          v1::AttributeStats* out = response.add_attributes();
          out->set_attribute(a);
          out->set_ident(ident);
          out->set_datoms(stats->datoms);
          out->set_distinct_values(stats->distinct_values);
          if (request.value_counts() && stats->values_tracked) {
            // In value order, as ValueCounts keeps them.
            for (const auto& [v, n] : stats->value_counts) {
              v1::ValueCount* vc = out->add_value_counts();
              StorageToProto(v, vc->mutable_value());
              vc->set_count(n);
            }
          }
        }
        storage::Store& store = database.store();
        const auto counters = store.transactor_counters();
        v1::TransactorStats* t = response.mutable_transactor();
        t->set_groups(counters.groups);
        t->set_transactions(counters.transactions);
        t->set_failed_transactions(counters.failed_transactions);
        t->set_datoms(counters.datoms);
        t->set_largest_group(counters.largest_group);
        t->set_queue_depth(counters.queue_depth);
        v1::StorageStats* st = response.mutable_storage();
        st->set_disk_size_bytes(store.DiskSizeBytes());
        if (call.sc().replication_stats) {
          call.sc().replication_stats(database.name(),
                                      response.mutable_replication());
        }
        st->set_block_cache_usage_bytes(
            store.RocksDbProperty("rocksdb.block-cache-usage"));
        st->set_block_cache_hits(store.RocksDbTicker(rocksdb::BLOCK_CACHE_HIT));
        st->set_block_cache_misses(
            store.RocksDbTicker(rocksdb::BLOCK_CACHE_MISS));
        st->set_estimated_keys(
            store.RocksDbProperty("rocksdb.estimate-num-keys"));
        st->set_memtable_bytes(
            store.RocksDbProperty("rocksdb.cur-size-all-mem-tables"));
        st->set_compactions_pending_bytes(
            store.RocksDbProperty("rocksdb.estimate-pending-compaction-bytes"));
        st->set_entity_cache_bytes(store.entity_cache_counters().bytes);
        st->set_value_cache_bytes(store.value_cache_counters().bytes);
        st->set_column_cache_bytes(store.column_cache_counters().bytes);
        st->set_table_readers_bytes(
            store.RocksDbProperty("rocksdb.estimate-table-readers-mem"));
        call.Finish(absl::OkStatus(), &response);
      });
}

void ServeCreateDatabase(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  auto request = std::make_shared<v1::CreateDatabaseRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (s.ok()) s = RefuseAtReplica(sc, "CreateDatabase");
  if (!s.ok()) return call.Finish(s);
  s = DatabaseRegistry::CheckName(request->name());
  if (!s.ok()) return call.Finish(s);
  sc.readers.Post([call, request] {
    auto db = call.sc().registry.Create(request->name());
    if (!db.ok()) return call.Finish(db.status());
    v1::CreateDatabaseResponse response;
    response.set_name((*db)->name());
    response.set_basis_tx((*db)->Latest()->basis_tx());
    call.Finish(absl::OkStatus(), &response);
  });
}

void ServeListDatabases(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  v1::ListDatabasesRequest request;
  absl::Status s = call.Begin(req, &request);
  if (!s.ok()) return call.Finish(s);
  sc.readers.Post([call] {
    v1::ListDatabasesResponse response;
    for (const auto& db : call.sc().registry.List()) {
      v1::DatabaseInfo* info = response.add_databases();
      std::shared_ptr<const storage::Db> latest = db->Latest();
      info->set_name(db->name());
      info->set_basis_tx(latest->basis_tx());
      info->set_basis_tx_instant_micros(latest->basis_tx_instant());
      info->set_disk_size_bytes(db->store().DiskSizeBytes());
    }
    call.Finish(absl::OkStatus(), &response);
  });
}

void ServeDeleteDatabase(const UnaryCall& call, const Buf* req) {
  ServiceContext& sc = call.sc();
  auto request = std::make_shared<v1::DeleteDatabaseRequest>();
  absl::Status s = call.Begin(req, request.get());
  if (s.ok()) s = RefuseAtReplica(sc, "DeleteDatabase");
  if (!s.ok()) return call.Finish(s);
  sc.readers.Post([call, request] {
    absl::Status s = call.sc().registry.Delete(request->name());
    if (!s.ok()) return call.Finish(s);
    v1::DeleteDatabaseResponse response;
    call.Finish(absl::OkStatus(), &response);
  });
}

}  // namespace mentat::server
