#include "database_registry.h"

#include <filesystem>

#include "mentat/storage/str_cat.h"

namespace mentat::server {

namespace fs = std::filesystem;

DatabaseRegistry::DatabaseRegistry(std::string data_dir,
                                   const DatabaseOptions& options)
    : data_dir_(std::move(data_dir)),
      options_(options),
      map_(std::make_shared<const Map>()) {}

DatabaseRegistry::~DatabaseRegistry() { CloseAll(); }

absl::Status DatabaseRegistry::CheckName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return absl::InvalidArgumentError(StrCat(
        "database name must have 1 to 64 characters, got ", name.size()));
  }
  if (name[0] == '-') {
    return absl::InvalidArgumentError("database name must not start with '-'");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(
          "database name may only hold letters, digits, '_' and '-'");
    }
  }
  return absl::OkStatus();
}

absl::Status DatabaseRegistry::OpenAll(bool create_default) {
  std::error_code ec;
  fs::create_directories(data_dir_, ec);
  if (ec) {
    return absl::UnavailableError(StrCat("cannot create the data directory ",
                                         data_dir_, ": ", ec.message()));
  }
  absl::MutexLock lock(&mu_);
  for (const fs::directory_entry& entry :
       fs::directory_iterator(data_dir_, ec)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    if (!CheckName(name).ok()) continue;
    // A RocksDB directory has a CURRENT file; anything else is not ours.
    if (!fs::exists(entry.path() / "CURRENT")) continue;
    auto db = OpenLocked(name, /*create=*/false);
    if (!db.ok()) {
      return absl::Status(
          db.status().code(),
          StrCat("opening database ", name, ": ", db.status().message()));
    }
  }
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot list ", data_dir_, ": ", ec.message()));
  }
  if (create_default && map_.load()->count("default") == 0) {
    auto db = OpenLocked("default", /*create=*/true);
    if (!db.ok()) return db.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Database>> DatabaseRegistry::OpenLocked(
    const std::string& name, bool create) {
  auto db = Database::Open(name, (fs::path(data_dir_) / name).string(),
                           options_, create);
  if (!db.ok()) return db.status();
  std::weak_ptr<Pending> pending = pending_;
  (*db)->set_on_destroyed([pending, name] {
    if (auto p = pending.lock()) {
      absl::MutexLock lock(&p->mu);
      p->names.erase(name);
    }
  });
  auto next = std::make_shared<Map>(*map_.load());
  (*next)[name] = *db;
  map_.store(std::move(next));
  return db;
}

absl::StatusOr<std::shared_ptr<Database>> DatabaseRegistry::Get(
    std::string_view name) const {
  if (name.empty()) name = "default";
  std::shared_ptr<const Map> map = map_.load();
  auto it = map->find(name);
  if (it != map->end()) return it->second;
  absl::Status s = CheckName(name);
  if (!s.ok()) return s;
  return absl::NotFoundError(StrCat("no database named \"", name, "\""));
}

absl::StatusOr<std::shared_ptr<Database>> DatabaseRegistry::Create(
    std::string_view name) {
  absl::Status s = CheckName(name);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (map_.load()->count(name) > 0) {
    return absl::AlreadyExistsError(
        StrCat("database \"", name, "\" already exists"));
  }
  {
    absl::MutexLock plock(&pending_->mu);
    if (pending_->names.count(std::string(name)) > 0) {
      return absl::FailedPreconditionError(StrCat(
          "database \"", name, "\" is still being deleted; retry in a moment"));
    }
  }
  const fs::path path = fs::path(data_dir_) / std::string(name);
  std::error_code ec;
  if (fs::exists(path, ec)) {
    return absl::AlreadyExistsError(
        StrCat("the data directory already holds \"", name,
               "\" but it is not an open database; remove it or restart"));
  }
  return OpenLocked(std::string(name), /*create=*/true);
}

absl::Status DatabaseRegistry::Delete(std::string_view name) {
  absl::Status s = CheckName(name);
  if (!s.ok()) return s;
  std::shared_ptr<Database> db;
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<const Map> map = map_.load();
    auto it = map->find(name);
    if (it == map->end()) {
      return absl::NotFoundError(StrCat("no database named \"", name, "\""));
    }
    db = it->second;
    {
      absl::MutexLock plock(&pending_->mu);
      pending_->names.insert(std::string(name));
    }
    auto next = std::make_shared<Map>(*map);
    next->erase(std::string(name));
    map_.store(std::move(next));
  }
  db->MarkDeleted();
  return absl::OkStatus();
}

std::vector<std::shared_ptr<Database>> DatabaseRegistry::List() const {
  std::shared_ptr<const Map> map = map_.load();
  std::vector<std::shared_ptr<Database>> out;
  out.reserve(map->size());
  for (const auto& [name, db] : *map) out.push_back(db);
  return out;
}

void DatabaseRegistry::CloseAll() {
  std::shared_ptr<const Map> map;
  {
    absl::MutexLock lock(&mu_);
    map = map_.exchange(std::make_shared<const Map>());
  }
  for (const auto& [name, db] : *map) db->Close();
}

}  // namespace mentat::server
