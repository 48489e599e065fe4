#include "cluster/cluster_member.h"

#include <spdlog/spdlog.h>

#include "mentat/base/str_cat.h"
#include "mentat/storage/entity_ids.h"

namespace mentat::server::cluster {

ClusterMember::ClusterMember(const ServerConfig& config,
                             DatabaseRegistry& registry)
    : config_(config), registry_(registry) {}

ClusterMember::~ClusterMember() { Stop(); }

void ClusterMember::Stop() {
  std::unique_ptr<Replica> replica;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    replica = std::move(replica_);
  }
  if (replica != nullptr) replica->Stop();
}

absl::Status ClusterMember::BecomePrimary(int64_t term) {
  // Following stops first: nothing of the old primary is applied once
  // the stores write in the new term.
  std::unique_ptr<Replica> replica;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return absl::UnavailableError("the server is stopping");
    replica = std::move(replica_);
    if (replica != nullptr)
      tails_discarded_before_ += replica->tails_discarded();
  }
  if (replica != nullptr) replica->Stop();
  for (const auto& db : registry_.List()) {
    absl::Status s = db->store().Promote(term);
    if (!s.ok()) {
      registry_.SetReplica(true);
      return absl::Status(s.code(),
                          StrCat("database ", db->name(), ": ", s.message()));
    }
  }
  registry_.SetReplica(false);
  // A new cluster's first primary makes the default database, as a
  // single node does (its replicas bootstrap it from here).
  if (config_.create_default_database && !registry_.Get("default").ok()) {
    auto created = registry_.Create("default");
    if (!created.ok() &&
        created.status().code() != absl::StatusCode::kAlreadyExists) {
      spdlog::warn("cluster: creating database default: {}",
                   created.status().ToString());
    } else if (created.ok()) {
      absl::Status s = (*created)->store().Promote(term);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

void ClusterMember::Follow(const std::string& address, int64_t term) {
  registry_.SetReplica(true);
  std::unique_ptr<Replica> old;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    if (replica_ != nullptr && replica_->primary() == address) {
      // The same node, perhaps elected again: its streams must now be of
      // `term` at least.
      replica_->RaiseTerm(static_cast<uint64_t>(term));
      return;
    }
    old = std::move(replica_);
    if (old != nullptr) tails_discarded_before_ += old->tails_discarded();
  }
  if (old != nullptr) old->Stop();
  auto replica = std::make_unique<Replica>(config_, registry_, address,
                                           /*discard_tails=*/true,
                                           static_cast<uint64_t>(term));
  absl::Status s = replica->Start();
  if (!s.ok()) {
    spdlog::error("cluster: following the primary {} (term {}): {}", address,
                  term, s.ToString());
  }
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) {
      replica_ = std::move(replica);
      return;
    }
  }
  replica->Stop();
}

void ClusterMember::StopWriting(const std::string& why) {
  registry_.SetReplica(true);
  spdlog::warn("cluster: this node stopped taking writes: {}", why);
}

int64_t ClusterMember::AppliedScore() {
  int64_t score = 0;
  for (const auto& db : registry_.List()) {
    score += db->Latest()->basis_tx() & storage::kCounterMask;
  }
  return score;
}

bool ClusterMember::LagOf(const std::string& database, int64_t* primary_tx,
                          int64_t* lag_tx, int64_t* lag_ms) const {
  absl::MutexLock lock(&mu_);
  return replica_ != nullptr &&
         replica_->LagOf(database, primary_tx, lag_tx, lag_ms);
}

std::string ClusterMember::RenderPrometheus() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  const uint64_t discarded =
      tails_discarded_before_ +
      (replica_ != nullptr ? replica_->tails_discarded() : 0);
  StrAppend(&out,
            "# HELP mentat_cluster_tails_discarded_total Databases moved "
            "aside (kept as <name>.discarded-<micros>) because they held a "
            "former primary's transactions the new primary did not have.\n"
            "# TYPE mentat_cluster_tails_discarded_total counter\n"
            "mentat_cluster_tails_discarded_total ",
            discarded, "\n");
  if (replica_ != nullptr) out += replica_->RenderPrometheus();
  return out;
}

}  // namespace mentat::server::cluster
