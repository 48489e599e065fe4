#include "cluster/node_role.h"

#include "mentat/base/str_cat.h"

namespace mentat::server::cluster {

const char* KindName(NodeRole::Kind kind) {
  switch (kind) {
    case NodeRole::Kind::kPrimary:
      return "primary";
    case NodeRole::Kind::kReplica:
      return "replica";
    case NodeRole::Kind::kCandidate:
      return "candidate";
  }
  return "?";
}

absl::Status NodeRole::CheckWritable(std::string_view what) const {
  absl::ReaderMutexLock lock(&mu_);
  switch (view_.kind) {
    case Kind::kPrimary: {
      const int64_t now =
          std::chrono::steady_clock::now().time_since_epoch().count();
      const int64_t deadline = deadline_.load(std::memory_order_acquire);
      if (now < deadline) return absl::OkStatus();
      const auto late = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::duration(now - deadline));
      return absl::UnavailableError(StrCat(
          what, " refused: this node was the primary of cluster ", cluster_,
          " in term ", view_.term,
          " but has not renewed its etcd lease in time (", late.count(),
          " ms past its write deadline): it stopped taking writes before "
          "the lease can expire, so that no two primaries write at once; "
          "retry at the primary etcd elects"));
    }
    case Kind::kReplica:
      return absl::FailedPreconditionError(
          StrCat("this node is a read replica in cluster ", cluster_, " (term ",
                 view_.term, "): ", what,
                 " is refused here; send writes to the "
                 "primary at ",
                 view_.primary));
    case Kind::kCandidate:
      break;
  }
  return absl::UnavailableError(StrCat(what, " refused: cluster ", cluster_,
                                       " has no primary yet (", view_.why,
                                       "); retry shortly"));
}

void NodeRole::SetPrimary(int64_t term, std::string self,
                          std::chrono::steady_clock::time_point deadline) {
  absl::MutexLock lock(&mu_);
  view_.kind = Kind::kPrimary;
  view_.term = term;
  view_.primary = std::move(self);
  view_.why.clear();
  deadline_.store(deadline.time_since_epoch().count(),
                  std::memory_order_release);
}

void NodeRole::ExtendDeadline(std::chrono::steady_clock::time_point deadline) {
  deadline_.store(deadline.time_since_epoch().count(),
                  std::memory_order_release);
}

void NodeRole::SetReplica(int64_t term, std::string primary) {
  absl::MutexLock lock(&mu_);
  view_.kind = Kind::kReplica;
  view_.term = term;
  view_.primary = std::move(primary);
  view_.why.clear();
  deadline_.store(0, std::memory_order_release);
}

void NodeRole::SetCandidate(std::string why) {
  absl::MutexLock lock(&mu_);
  view_.kind = Kind::kCandidate;
  view_.primary.clear();
  view_.why = std::move(why);
  deadline_.store(0, std::memory_order_release);
}

NodeRole::View NodeRole::Get() const {
  absl::ReaderMutexLock lock(&mu_);
  return view_;
}

}  // namespace mentat::server::cluster
