#include "cluster/cluster_node.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "absl/strings/str_join.h"
#include "mentat/base/str_cat.h"

namespace mentat::server::cluster {

namespace {

// Ids and cluster names are [A-Za-z0-9._-] (config.cc checks); an address
// is escaped anyway.
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  out += '"';
  return out;
}

struct LeaderValue {
  std::string id;
  std::string address;
};

// The leader key's value: {"id": ..., "address": ...}. False if it is
// not that (written by something else).
bool ParseLeader(const std::string& value, LeaderValue* out) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(value).get(root) != simdjson::SUCCESS) return false;
  std::string_view id, address;
  if (root["id"].get_string().get(id) != simdjson::SUCCESS) return false;
  if (root["address"].get_string().get(address) != simdjson::SUCCESS) {
    return false;
  }
  out->id = std::string(id);
  out->address = std::string(address);
  return true;
}

}  // namespace

ClusterNode::ClusterNode(Options options, NodeRole* role, RoleActions* actions)
    : options_(std::move(options)),
      role_(role),
      actions_(actions),
      etcd_(options_.etcd, std::chrono::milliseconds(std::clamp<int64_t>(
                               options_.lease_ttl_s * 1000 / 3, 500, 2000))) {}

ClusterNode::~ClusterNode() { Stop(); }

std::string ClusterNode::NodeKey() const {
  return StrCat("/mentat/", options_.cluster, "/nodes/", options_.node_id);
}

std::string ClusterNode::LeaderKey() const {
  return StrCat("/mentat/", options_.cluster, "/leader");
}

std::chrono::milliseconds ClusterNode::Ttl() const {
  absl::MutexLock lock(&mu_);
  return std::chrono::milliseconds(lease_ttl_s_ * 1000);
}

absl::StatusOr<std::unique_ptr<ClusterNode>> ClusterNode::Start(
    Options options, NodeRole* role, RoleActions* actions) {
  std::unique_ptr<ClusterNode> node(
      new ClusterNode(std::move(options), role, actions));
  // etcd may be starting too (its port open before it serves): a few
  // seconds of retries, then a clear error.
  auto sent = std::chrono::steady_clock::now();
  const auto give_up = sent + std::chrono::seconds(5);
  auto lease = node->etcd_.GrantLease(node->options_.lease_ttl_s);
  while (!lease.ok() &&
         lease.status().code() == absl::StatusCode::kUnavailable &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    sent = std::chrono::steady_clock::now();
    lease = node->etcd_.GrantLease(node->options_.lease_ttl_s);
  }
  if (!lease.ok()) {
    return absl::Status(lease.status().code(),
                        StrCat("cluster ", node->options_.cluster,
                               ": cannot get a lease from etcd (--etcd ",
                               absl::StrJoin(node->options_.etcd, ","),
                               "): ", lease.status().message()));
  }
  {
    absl::MutexLock lock(&node->mu_);
    node->lease_ = lease->id;
    node->lease_ttl_s_ = lease->ttl_seconds;
    node->renewed_ = sent;
  }
  role->SetCandidate("the election has not run yet");
  node->PublishSelf(lease->id);
  spdlog::info("cluster {}: node {} at {} joined through etcd {} (lease {} s)",
               node->options_.cluster, node->options_.node_id,
               node->options_.advertise,
               absl::StrJoin(node->options_.etcd, ","), lease->ttl_seconds);
  ClusterNode* raw = node.get();
  node->lease_thread_ = std::thread([raw] { raw->LeaseLoop(); });
  node->election_thread_ = std::thread([raw] { raw->ElectionLoop(); });
  return node;
}

void ClusterNode::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (lease_thread_.joinable()) lease_thread_.join();
  if (election_thread_.joinable()) election_thread_.join();
  int64_t lease;
  {
    absl::MutexLock lock(&mu_);
    lease = lease_;
  }
  if (primary_) {
    actions_->StopWriting("the node is shutting down");
    role_->SetCandidate("this node is shutting down");
    // Resigning lets the next election start at once instead of after
    // the lease.
    auto deleted = etcd_.DeleteIfCreatedAt(LeaderKey(), term_);
    if (!deleted.ok()) {
      spdlog::warn("cluster {}: resigning term {}: {}", options_.cluster, term_,
                   deleted.status().ToString());
    }
    primary_ = false;
  }
  absl::Status s = etcd_.RevokeLease(lease);
  if (!s.ok()) {
    spdlog::warn("cluster {}: revoking the lease: {}", options_.cluster,
                 s.ToString());
  }
}

bool ClusterNode::Pause(std::chrono::milliseconds d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::FromChrono(d));
  return !stopping_;
}

void ClusterNode::PublishSelf(int64_t lease) {
  const NodeRole::View view = role_->Get();
  const std::string value =
      StrCat("{\"id\":", JsonString(options_.node_id),
             ",\"address\":", JsonString(options_.advertise), ",\"role\":\"",
             KindName(view.kind), "\",\"term\":", view.term,
             ",\"applied\":", actions_->AppliedScore(), "}");
  absl::Status s = etcd_.Put(NodeKey(), value, lease);
  if (!s.ok()) etcd_errors_.fetch_add(1, std::memory_order_relaxed);
}

void ClusterNode::LeaseLoop() {
  std::string last_warning;
  while (Pause(Ttl() / 4)) {
    int64_t lease;
    {
      absl::MutexLock lock(&mu_);
      lease = lease_;
    }
    const auto sent = std::chrono::steady_clock::now();
    auto ttl = etcd_.KeepAlive(lease);
    if (ttl.ok()) {
      {
        absl::MutexLock lock(&mu_);
        renewed_ = sent;
      }
      // Only a primary's writes read it: until TTL/2 after this renewal
      // was sent, the lease (TTL after etcd received it) cannot lapse.
      role_->ExtendDeadline(sent + Ttl() / 2);
      PublishSelf(lease);
      last_warning.clear();
      continue;
    }
    etcd_errors_.fetch_add(1, std::memory_order_relaxed);
    if (ttl.status().code() != absl::StatusCode::kNotFound) {
      // etcd unreachable: a primary's deadline passes by itself.
      if (ttl.status().ToString() != last_warning) {
        last_warning = ttl.status().ToString();
        spdlog::warn("cluster {}: renewing the lease: {}", options_.cluster,
                     last_warning);
      }
      continue;
    }
    // The lease lapsed (a stopped process, a partition longer than the
    // TTL): whatever this node held under it is gone.
    lease_losses_.fetch_add(1, std::memory_order_relaxed);
    actions_->StopWriting("its etcd lease expired");
    if (role_->Get().kind == NodeRole::Kind::kPrimary) {
      role_->SetCandidate("this node's lease expired");
    }
    spdlog::error(
        "cluster {}: node {}'s lease expired ({}); writes stopped, taking "
        "a new lease",
        options_.cluster, options_.node_id,
        std::string(ttl.status().message()));
    auto fresh = etcd_.GrantLease(options_.lease_ttl_s);
    if (!fresh.ok()) {
      spdlog::warn("cluster {}: a new lease: {}", options_.cluster,
                   fresh.status().ToString());
      continue;  // the next round retries (KeepAlive fails as NotFound)
    }
    {
      absl::MutexLock lock(&mu_);
      lease_ = fresh->id;
      lease_ttl_s_ = fresh->ttl_seconds;
      renewed_ = sent;
    }
    PublishSelf(fresh->id);
  }
}

void ClusterNode::ElectionLoop() {
  do {
    ElectionStep();
  } while (Pause(options_.poll));
}

void ClusterNode::ElectionStep() {
  int64_t lease;
  {
    absl::MutexLock lock(&mu_);
    lease = lease_;
  }
  auto leader = etcd_.Get(LeaderKey());
  if (!leader.ok()) {
    etcd_errors_.fetch_add(1, std::memory_order_relaxed);
    if (leader.status().ToString() != last_error_) {
      last_error_ = leader.status().ToString();
      spdlog::warn("cluster {}: reading the leader key: {}", options_.cluster,
                   last_error_);
    }
    return;
  }
  last_error_.clear();
  if (leader->has_value()) {
    absent_polls_ = 0;
    const EtcdKeyValue& kv = **leader;
    LeaderValue value;
    if (!ParseLeader(kv.value, &value)) {
      spdlog::error("cluster {}: the leader key {} holds '{}', not a node",
                    options_.cluster, LeaderKey(), kv.value);
      return;
    }
    if (value.id == options_.node_id) {
      if (kv.lease == lease) return;  // ours: the lease thread keeps it
      // Written by this node's previous process, whose lease has not
      // lapsed yet: it is dead, so resign for it.
      spdlog::info(
          "cluster {}: the leader key is this node's from before a restart "
          "(term {}); resigning it",
          options_.cluster, kv.create_revision);
      auto deleted = etcd_.DeleteIfCreatedAt(LeaderKey(), kv.create_revision);
      if (!deleted.ok()) etcd_errors_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (primary_) {
      primary_ = false;
      actions_->StopWriting(StrCat("node ", value.id, " is primary in term ",
                                   kv.create_revision));
    }
    if (following_ != value.address || following_term_ != kv.create_revision) {
      leader_changes_.fetch_add(1, std::memory_order_relaxed);
      spdlog::info("cluster {}: node {} at {} is primary in term {}; following",
                   options_.cluster, value.id, value.address,
                   kv.create_revision);
      role_->SetReplica(kv.create_revision, value.address);
      actions_->Follow(value.address, kv.create_revision);
      following_ = value.address;
      following_term_ = kv.create_revision;
      PublishSelf(lease);
    }
    return;
  }
  // No leader.
  if (primary_) {
    primary_ = false;
    actions_->StopWriting("the leader key is gone (this node's lease lapsed)");
  }
  if (absent_polls_ == 0) {
    role_->SetCandidate("the leader key is free; an election is under way");
    spdlog::info("cluster {}: no primary; electing", options_.cluster);
  }
  absent_polls_++;
  const int64_t score = actions_->AppliedScore();
  PublishSelf(lease);
  // One poll's grace lets every node publish its applied score first.
  if (absent_polls_ < 2) return;
  if (!IsBestCandidate(score)) return;
  Campaign();
}

bool ClusterNode::IsBestCandidate(int64_t my_score) {
  const std::string prefix = StrCat("/mentat/", options_.cluster, "/nodes/");
  auto nodes = etcd_.GetPrefix(prefix);
  if (!nodes.ok()) {
    etcd_errors_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  for (const EtcdKeyValue& kv : *nodes) {
    const std::string id = kv.key.substr(prefix.size());
    if (id == options_.node_id) continue;
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(kv.value).get(root) != simdjson::SUCCESS) continue;
    int64_t applied = 0;
    if (root["applied"].get_int64().get(applied) != simdjson::SUCCESS) {
      continue;
    }
    // A node that has not yet seen the leader key go still publishes its
    // role as a replica, and an `applied` that may be older than what it
    // holds (it acknowledged more since, in semi-synchronous mode): wait
    // for it to republish as a candidate, for up to two lease TTLs (then
    // it is stuck, or stopped, and does not count).
    std::string_view role;
    if (root["role"].get_string().get(role) == simdjson::SUCCESS &&
        role != "candidate" &&
        absent_polls_ * options_.poll.count() <
            2 * options_.lease_ttl_s * 1000) {
      return false;
    }
    if (applied > my_score || (applied == my_score && id < options_.node_id)) {
      return false;
    }
  }
  return true;
}

void ClusterNode::Campaign() {
  int64_t lease;
  {
    absl::MutexLock lock(&mu_);
    lease = lease_;
  }
  // Renewed first: the new primary's write deadline counts from it.
  const auto sent = std::chrono::steady_clock::now();
  auto ttl = etcd_.KeepAlive(lease);
  if (!ttl.ok()) {
    etcd_errors_.fetch_add(1, std::memory_order_relaxed);
    return;  // the lease thread takes a new one if it lapsed
  }
  {
    absl::MutexLock lock(&mu_);
    renewed_ = sent;
  }
  const std::string value =
      StrCat("{\"id\":", JsonString(options_.node_id),
             ",\"address\":", JsonString(options_.advertise), "}");
  auto won = etcd_.CreateIfAbsent(LeaderKey(), value, lease);
  if (!won.ok()) {
    etcd_errors_.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("cluster {}: campaigning: {}", options_.cluster,
                 won.status().ToString());
    return;
  }
  if (!won->created) return;  // another node was faster: the next poll
  const int64_t term = won->kv.create_revision;
  // The role first: the stores' write gate reads it, and promotion may
  // write (a new cluster's first primary creates "default"). Calls that
  // arrive before a store is promoted are refused by the store itself.
  role_->SetPrimary(term, options_.advertise, sent + Ttl() / 2);
  absl::Status s = actions_->BecomePrimary(term);
  if (!s.ok()) {
    spdlog::error(
        "cluster {}: won term {} but cannot become primary: {}; "
        "resigning",
        options_.cluster, term, s.ToString());
    auto deleted = etcd_.DeleteIfCreatedAt(LeaderKey(), term);
    (void)deleted;
    role_->SetCandidate(
        StrCat("the elected node could not become primary: ", s.message()));
    return;
  }
  primary_ = true;
  term_ = term;
  following_.clear();
  following_term_ = 0;
  elections_won_.fetch_add(1, std::memory_order_relaxed);
  PublishSelf(lease);
  spdlog::info("cluster {}: node {} at {} is primary in term {}",
               options_.cluster, options_.node_id, options_.advertise, term);
}

std::string ClusterNode::RenderPrometheus() const {
  const NodeRole::View view = role_->Get();
  std::string out;
  StrAppend(&out,
            "# HELP mentat_cluster_role This node's role in its cluster: 0 "
            "primary, 1 replica, 2 candidate (no primary known).\n"
            "# TYPE mentat_cluster_role gauge\nmentat_cluster_role ",
            view.kind == NodeRole::Kind::kPrimary   ? 0
            : view.kind == NodeRole::Kind::kReplica ? 1
                                                    : 2,
            "\n");
  StrAppend(&out,
            "# HELP mentat_cluster_term The term of the primary this node "
            "is or follows (etcd's revision of the leader key).\n"
            "# TYPE mentat_cluster_term gauge\nmentat_cluster_term ",
            view.term, "\n");
  StrAppend(&out,
            "# HELP mentat_cluster_elections_won_total Terms this node "
            "won.\n# TYPE mentat_cluster_elections_won_total counter\n"
            "mentat_cluster_elections_won_total ",
            elections_won_.load(), "\n");
  StrAppend(&out,
            "# HELP mentat_cluster_leader_changes_total Primaries this node "
            "started following.\n"
            "# TYPE mentat_cluster_leader_changes_total counter\n"
            "mentat_cluster_leader_changes_total ",
            leader_changes_.load(), "\n");
  StrAppend(&out,
            "# HELP mentat_cluster_lease_losses_total Times this node's etcd "
            "lease expired under it.\n"
            "# TYPE mentat_cluster_lease_losses_total counter\n"
            "mentat_cluster_lease_losses_total ",
            lease_losses_.load(), "\n");
  StrAppend(&out,
            "# HELP mentat_cluster_etcd_errors_total etcd calls that "
            "failed.\n# TYPE mentat_cluster_etcd_errors_total counter\n"
            "mentat_cluster_etcd_errors_total ",
            etcd_errors_.load(), "\n");
  return out;
}

}  // namespace mentat::server::cluster
