#ifndef MENTAT_SERVER_DATABASE_REGISTRY_H_
#define MENTAT_SERVER_DATABASE_REGISTRY_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "database.h"

namespace mentat::server {

// The databases under the data directory, one subdirectory each
// (<data_dir>/<name>). Lookups (Get) take no lock: they read an immutable
// map that Create and Delete replace. Thread-safe.
class DatabaseRegistry {
 public:
  DatabaseRegistry(std::string data_dir, const DatabaseOptions& options);
  // CloseAll()s.
  ~DatabaseRegistry();

  // Opens every database found in the data directory (creating the
  // directory if needed), and creates "default" if `create_default` and it
  // is missing. First finishes the deletions a previous run acknowledged
  // but did not complete (a deletion marker is still there): those
  // databases are removed, never opened.
  [[nodiscard]] absl::Status OpenAll(bool create_default);

  // The database `name` ("" is "default"). NotFound if there is none;
  // Unavailable while it is set aside and not yet adopted again (a
  // cluster node re-copying it from the primary: another node can
  // answer); InvalidArgument for a malformed name.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<Database>> Get(
      std::string_view name) const;

  // Opens the database whose files are already at <data_dir>/<name> (a
  // replica's bootstrap put them there) and adds it (a set-aside name is
  // then served again). AlreadyExists if a database of that name is open;
  // Unavailable if a set-aside copy of it is still open (AwaitSetAside);
  // the store's error if it does not open.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<Database>> Adopt(
      std::string_view name);

  // The directory of database `name` (open or not).
  std::string PathOf(std::string_view name) const;
  const std::string& data_dir() const { return data_dir_; }

  // AlreadyExists, FailedPrecondition (still being deleted),
  // InvalidArgument (bad name), or the store's error.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<Database>> Create(
      std::string_view name);

  // Deletes `name`: durably (a marker file <data_dir>/<name>.deleted,
  // fsynced with its directory) before it returns OK, so a crash after the
  // answer cannot bring the database back; the files go when the last call
  // lets go of it (or at the next start), then the marker. NotFound if
  // there is no such database; Unavailable (nothing deleted) if the marker
  // cannot be written.
  [[nodiscard]] absl::Status Delete(std::string_view name);

  // Cluster nodes (docs/replication.md, phase 2): sets every open
  // database's store to the replica role (true) or back to primary, and
  // opens later databases (a replica's bootstrap, a primary's Create) in
  // that role. Promotion itself (the term) is Store::Promote.
  void SetReplica(bool replica);

  // Takes `name` out of the registry and renames its directory to
  // <data_dir>/<name>.discarded-<micros> (a name OpenAll never opens),
  // kept for an operator. Its path in *aside. A cluster node does this to
  // a former primary's database whose log has a tail the new primary
  // lacks, before bootstrapping it again. Calls holding the database end
  // with Unavailable naming why (Database::MarkSetAside: reads waiting
  // for a min_basis_tx at once, streams at their next message); Get
  // answers Unavailable for the name until Adopt opens it again.
  // NotFound if it is not open; Unavailable if the rename fails (nothing
  // changed then).
  [[nodiscard]] absl::Status SetAside(std::string_view name,
                                      std::string* aside);

  // True while `name` is set aside and not adopted again.
  bool IsSetAside(std::string_view name) const;

  // Waits until no set-aside copy of `name` is open any more (the last
  // call holding it let go), at most `timeout`: a new copy cannot open at
  // the same path before (RocksDB's lock is per path and process). OK at
  // once if there is none; Unavailable (naming the database) at the
  // timeout.
  [[nodiscard]] absl::Status AwaitSetAside(std::string_view name,
                                           absl::Duration timeout);

  // Every open database, sorted by name.
  std::vector<std::shared_ptr<Database>> List() const;

  // Empty while every database takes writes; else one clause per database
  // that does not ("database NAME: " and Store::WriteHealth's message),
  // joined with "; ". For /healthz. Any thread.
  std::string WriteProblems() const;

  // Shutdown: closes every database (queued transactions commit first) and
  // forgets them.
  void CloseAll();

  // OK if `name` is a valid database name: 1-64 of [A-Za-z0-9_-], not
  // starting with '-'.
  [[nodiscard]] static absl::Status CheckName(std::string_view name);

 private:
  using Map = std::map<std::string, std::shared_ptr<Database>, std::less<>>;
  [[nodiscard]] absl::StatusOr<std::shared_ptr<Database>> OpenLocked(
      const std::string& name, bool create) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes what is left of a deleted database's files, then its marker
  // (the marker goes last: a crash midway leaves it for the next start).
  // OK if there was nothing to finish.
  [[nodiscard]] static absl::Status FinishDeletion(const std::string& data_dir,
                                                   const std::string& name);

  const std::string data_dir_;
  DatabaseOptions options_ ABSL_GUARDED_BY(mu_);
  // Writers (Create, Delete, CloseAll) hold mu_ and publish a new map.
  absl::Mutex mu_;
  std::atomic<std::shared_ptr<const Map>> map_;
  // Names whose files are still being removed, and names whose set-aside
  // copy is still open, shared with the databases' on-destroyed hooks
  // (which may run after the registry is gone); names set aside and not
  // adopted again.
  struct Pending {
    absl::Mutex mu;
    std::set<std::string> names ABSL_GUARDED_BY(mu);
    std::set<std::string> aside_open ABSL_GUARDED_BY(mu);
    // Signalled when a name leaves aside_open.
    absl::CondVar aside_closed;
    std::set<std::string, std::less<>> replacing ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<Pending> pending_ = std::make_shared<Pending>();
};

}  // namespace mentat::server

#endif  // MENTAT_SERVER_DATABASE_REGISTRY_H_
