#ifndef MENTAT_STORAGE_INTERNAL_COLUMN_WORKER_H_
#define MENTAT_STORAGE_INTERNAL_COLUMN_WORKER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "internal/column_cache.h"
#include "mentat/storage/schema.h"

namespace mentat::storage::internal {

struct StoreCore;

// The store's column thread: builds the columns the ColumnCache queues
// (each from a RocksDB snapshot of its own, so that no query waits for
// one) and folds deltas into new bases, one job at a time, off the
// transactor's thread and off every query's path.
//
// With StoreOptions::column_images, it also keeps the columns' images
// (internal/column_image.h): written after each build and, for columns
// changed since, when the store closes (SaveImages); mapped when the store
// opens (LoadImages) and checked against their checksums before readers
// use them, so that a reopened store has its columns within moments and
// a damaged image is never read.
//
// Owned by StoreCore; the thread runs from construction until Stop.
class ColumnWorker {
 public:
  // `core` must outlive the worker, with core->column_cache set.
  explicit ColumnWorker(StoreCore* core);
  ~ColumnWorker();
  ColumnWorker(const ColumnWorker&) = delete;
  ColumnWorker& operator=(const ColumnWorker&) = delete;

  // Drops queued jobs, ends the running one early, joins the thread.
  // Idempotent; any thread but the worker's.
  void Stop();

  // The store opening, before the transactor starts: installs the
  // column of each image in the store's directory, brought up to `basis`
  // from the log. An image that cannot serve (malformed, of an unknown
  // attribute, or too far behind the log) is removed, and its column
  // queued for a build instead.
  static void LoadImages(StoreCore* core, EntityId basis, const Schema& schema);
  // The store closing, after Stop and the last commit (of basis `basis`):
  // writes the image of every column changed since its image was written,
  // and moves the others' images up to `basis`. Errors are ignored (an
  // image is a hint).
  static void SaveImages(StoreCore* core, EntityId basis);

 private:
  void Run();
  void Build(ColumnCache::Job job);
  void Fold(ColumnCache::Job job);
  // Tells the operator (StoreOptions::on_notice, and RocksDB's LOG) of
  // the columns the cache refused for their size.
  void ReportRefusals();
  // ":ns/name" of an attribute, read from the store; "attribute N" if it
  // has none.
  std::string AttributeName(EntityId attribute) const;
  // Checks a column installed from an image against the image's checksum
  // before readers are given it (internal/column_image.h).
  void Verify(ColumnCache::Job job);

  StoreCore* core_;
  ColumnCache* cache_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace mentat::storage::internal

#endif  // MENTAT_STORAGE_INTERNAL_COLUMN_WORKER_H_
