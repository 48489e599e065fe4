#ifndef MENTAT_STORAGE_STORE_OPTIONS_H_
#define MENTAT_STORAGE_STORE_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace rocksdb {
class Env;
}

namespace mentat::storage {

// Options of a Store. Plain struct; every field has a sensible default.
struct StoreOptions {
  // Create the store if the directory holds none. Default: true.
  bool create_if_missing = true;
  // fsync the WAL once per group commit before acknowledging. Turning it
  // off trades durability of the last commits on power loss for speed.
  // Default: true.
  bool sync_commits = true;
  // With sync_commits and the default `env`: each write-ahead log file is
  // made this many bytes longer at a time, ahead of its writes (read back
  // as zeros, cut back when the file closes), so that a commit's fsync
  // writes its data and not also the file's new size
  // (internal/presized_log.h). 0 turns it off. At least 64 KiB.
  // Default: 4 MiB.
  uint64_t log_presize_bytes = uint64_t{4} << 20;
  // RocksDB block cache shared by every column family. Default: 512 MiB.
  size_t block_cache_bytes = size_t{512} << 20;
  // Most bytes the memtables of all column families hold together; past
  // it RocksDB flushes the largest. Without a budget each family's
  // memtable grows to 64 MiB before it flushes, and under a steady writer
  // the nine of them reached 270 MiB in a 20-minute soak, with read
  // throughput falling as they grew (every seek searches them).
  // Default: 128 MiB.
  size_t memtable_budget_bytes = size_t{128} << 20;
  // Table files RocksDB keeps open, each with its index and filter blocks
  // in memory (outside the block cache). Opening the store opens at most
  // 16 of them; every other file is opened by the first read that needs
  // it and then stays open, until this many are (the least recently used
  // are then closed, and opened again when read). -1 opens every file
  // when the store opens (RocksDB's default; at scale l, 98M datoms in
  // 354 files, opens took 95-368 ms that way against 38-132 on a busy
  // 2-core machine). Default: 10,000.
  int max_open_table_files = 10000;
  // Cache of entities' EAVT datoms (current and retracted) shared by every
  // reader, in front of RocksDB for reads of one entity (fetching an
  // entity's attributes, pull): a hash probe instead of a seek. An issue of
  // the workload (7.5 datoms) takes about 530 bytes (query-bench, scale m).
  // 0 turns it off. Default: 512 MiB.
  size_t entity_cache_bytes = size_t{512} << 20;
  // Fill the entity cache in the background once the store opens: a
  // thread at the lowest priority (SCHED_IDLE) reads the entities in EAVT
  // order until the cache holds three quarters of entity_cache_bytes or
  // every entity (internal/cache_warmer.h), so that the first read of each
  // entity after a restart is a hit rather than a RocksDB seek. Off for
  // embedders and tests that count the cache's misses; mentatd turns it
  // on (--warm-entity-cache). Default: false.
  bool warm_entity_cache = false;
  // The same for AVET reads of one attribute and value (unique lookups,
  // input bindings, the entities a ref points from), for values held by at
  // most 1,024 entities; as the entity cache, with the value's history
  // once a reader of an earlier basis asked for it. 0 turns it off.
  // Default: 128 MiB.
  size_t value_cache_bytes = size_t{128} << 20;
  // Columns of attributes read in bulk: every current key of the
  // attribute in AEVT or AVET order in memory, so that aggregates and
  // scans over it step through memory instead of RocksDB's iterators. An
  // attribute gets one (built in the background) after readers stepped
  // over column_build_after_rows of its keys, and keeps it under writes:
  // commits go to the column's delta, folded into its base now and then.
  // A column of the workload's :issue/state at scale m (1.3M keys) takes
  // about 55 MB; one column never takes more than half of this. 0 turns
  // it off. Default: 512 MiB.
  size_t column_cache_bytes = size_t{512} << 20;
  // Keys of an attribute readers step over in RocksDB (AEVT or AVET)
  // before it gets a column. Default: 100,000.
  uint64_t column_build_after_rows = 100000;
  // A column's delta (the changes committed since its base was read) is
  // folded into a new base once it holds more than
  // max(column_fold_min_keys, 1/32 of the base's keys). Default: 4,096.
  size_t column_fold_min_keys = 4096;
  // Keep each column's keys in a file under the store's directory
  // (columns/), written when the column is built and, if it changed since,
  // when the store closes; a reopened store maps them and replays the log
  // after them, so that its first bulk queries find their columns instead
  // of reading RocksDB while the columns are built again. Default: true.
  bool column_images = true;
  // Called on the column thread with a sentence an operator should read:
  // a column refused because it would take more than half the column
  // cache (its attribute's bulk reads then go to the indexes, at many
  // times a column's cost). Once per column while the store is open. Must
  // not call back into the store. Default: empty (RocksDB's LOG only).
  std::function<void(std::string_view message)> on_notice;
  // Most transactions the transactor applies in one group commit.
  // Default: 1024.
  int max_group_transactions = 1024;
  // Most datoms a group takes before it commits (a single bigger
  // transaction still commits whole, alone). Default: 200,000.
  size_t max_group_datoms = 200000;
  // Transactions waiting for the transactor before Transact answers
  // ResourceExhausted. Default: 10,000.
  size_t queue_capacity = 10000;
  // Attributes with at most this many distinct values keep per-value
  // counts in the statistics. Default: 256.
  int low_cardinality_limit = 256;
  // How far a :db/txInstant given in tx-data may lie ahead of the
  // transactor's clock, for clients whose clocks run a little fast. A
  // later instant is refused (InvalidArgument): instants never go back,
  // so one far in the future would pin every later transaction's instant
  // to it. Default: 10,000 ms.
  int64_t tx_instant_max_skew_ms = 10000;
  // Collect RocksDB statistics (for metrics). Default: true.
  bool rocksdb_statistics = true;
  // A since() view built from the log holds at most this many datoms,
  // and reads at most 8 times as many from the log to build or extend
  // its index; beyond that it filters the current indexes by tx instead.
  // Default: 1,000,000.
  size_t since_log_limit = 1000000;
  // History retention: retracted datoms whose retraction is older than
  // this many days are dropped (by compaction, after ApplyRetention).
  // 0 keeps history forever. Default: 0.
  int history_retention_days = 0;
  // Per-attribute retention in days (ident "ns/name" -> days), overriding
  // history_retention_days for that attribute (0 = forever).
  std::map<std::string, int> attribute_retention_days;
  // The RocksDB environment the store does its file I/O through; not
  // owned, and it must outlive the store. Tests pass one that injects I/O
  // faults. Default: nullptr, RocksDB's default environment.
  rocksdb::Env* env = nullptr;
  // Asked on the transactor thread as it applies each group of
  // transactions, before the write (replicated entries are not asked): a
  // transaction is refused with its status when it is not OK. A cluster's
  // primary (docs/replication.md, phase 2) passes its lease deadline here, so
  // that a transaction admitted before the deadline but queued past it
  // (or held by a stopped process) does not commit in a term that may
  // have ended. Called often: keep it cheap. Default: empty, never asked.
  std::function<absl::Status()> write_gate;
  // With sync_commits: the transactor writes each group to the log without
  // its fsync and goes on to the next group, while a second thread fsyncs
  // the log (once for every group written since its last fsync), then
  // publishes and answers the groups in order; the next group's apply,
  // write and memtable inserts overlap this one's fsync. Nothing is shown
  // or acknowledged before its fsync, as without this. The difference is
  // on a failed fsync: the groups it covered are already in RocksDB's
  // memtable, so writes stay off until the store reopens (without this,
  // RocksDB may resume by itself). Default: true.
  bool pipeline_commits = true;
  // With sync_commits: a group is written to the log without waiting for
  // its fsync, shown by Store::LatestWritten() (and on_written is called
  // on the transactor thread), and then fsynced; readers (Latest()) and
  // the group's callers see it only after the fsync, as without this. A
  // replication stream that reads LatestWritten() lets a replica's fsync
  // overlap the primary's: a semi-synchronous primary answers after about
  // one fsync instead of two in series (docs/replication.md). What a
  // replica may then hold beyond the primary's durable log is a tail that
  // the primary's machine (not process: the OS has the bytes) could lose
  // in a crash; the tail rules of replication cover it. Default: false.
  bool stream_before_sync = false;
  // Called on the transactor thread once LatestWritten() shows a new
  // basis (stream_before_sync only). Must not block. Default: empty.
  std::function<void()> on_written;
};

}  // namespace mentat::storage

#endif  // MENTAT_STORAGE_STORE_OPTIONS_H_
