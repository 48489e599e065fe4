#include "request_ledger.h"

#include <filesystem>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace {

// Side file records: u32 length (LE) of the body, then the body:
//   varint id length, id, tx(8) basis_before(8) tx_instant(8)
//   datom_count(8), varint tempid count, per tempid: varint length, name,
//   id(8), then the tx-data digest(8) (absent in records written before it
//   existed). Integers little-endian.
void PutU64(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
bool GetU64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) {
    *v |= static_cast<uint64_t>(static_cast<uint8_t>((*in)[i])) << (8 * i);
  }
  in->remove_prefix(8);
  return true;
}
bool GetVarint(std::string_view* in, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>((*in)[0]);
    in->remove_prefix(1);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}
bool GetString(std::string_view* in, std::string* s) {
  uint64_t n = 0;
  if (!GetVarint(in, &n) || in->size() < n) return false;
  s->assign(in->data(), n);
  in->remove_prefix(n);
  return true;
}

std::string EncodeRecord(const std::string& id, const RecordedTx& r) {
  std::string body;
  PutVarint(id.size(), &body);
  body += id;
  PutU64(static_cast<uint64_t>(r.tx), &body);
  PutU64(static_cast<uint64_t>(r.basis_before), &body);
  PutU64(static_cast<uint64_t>(r.tx_instant), &body);
  PutU64(static_cast<uint64_t>(r.datom_count), &body);
  PutVarint(r.tempids.size(), &body);
  for (const auto& [name, e] : r.tempids) {
    PutVarint(name.size(), &body);
    body += name;
    PutU64(static_cast<uint64_t>(e), &body);
  }
  if (r.digest_known) PutU64(r.tx_data_digest, &body);
  std::string out;
  const uint32_t n = static_cast<uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(n >> (8 * i)));
  out += body;
  return out;
}

bool DecodeRecord(std::string_view body, std::string* id, RecordedTx* r) {
  uint64_t tx, basis, instant, count, n;
  if (!GetString(&body, id) || !GetU64(&body, &tx) || !GetU64(&body, &basis) ||
      !GetU64(&body, &instant) || !GetU64(&body, &count) ||
      !GetVarint(&body, &n)) {
    return false;
  }
  r->tx = static_cast<int64_t>(tx);
  r->basis_before = static_cast<int64_t>(basis);
  r->tx_instant = static_cast<int64_t>(instant);
  r->datom_count = static_cast<int64_t>(count);
  r->tempids.clear();
  for (uint64_t i = 0; i < n; ++i) {
    std::string name;
    uint64_t e;
    if (!GetString(&body, &name) || !GetU64(&body, &e)) return false;
    r->tempids.emplace_back(std::move(name), static_cast<int64_t>(e));
  }
  r->digest_known = !body.empty();
  if (r->digest_known && !GetU64(&body, &r->tx_data_digest)) return false;
  return body.empty();
}

}  // namespace

RequestLedger::RequestLedger(std::string path, int64_t window_micros,
                             size_t max_entries)
    : path_(std::move(path)),
      window_micros_(window_micros),
      max_entries_(std::max<size_t>(1, max_entries)) {}

RequestLedger::~RequestLedger() {
  absl::MutexLock lock(&file_mu_);
  if (file_ != nullptr) fclose(file_);
}

absl::Status RequestLedger::Load(int64_t now_micros) {
  std::string data;
  if (FILE* f = fopen(path_.c_str(), "rb"); f != nullptr) {
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
    fclose(f);
  }
  std::string kept;
  {
    absl::MutexLock lock(&mu_);
    std::string_view in = data;
    while (in.size() >= 4) {
      uint32_t len = 0;
      for (int i = 0; i < 4; ++i) {
        len |= static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << (8 * i);
      }
      if (in.size() - 4 < len) break;  // torn tail
      std::string id;
      RecordedTx r;
      if (!DecodeRecord(in.substr(4, len), &id, &r)) break;
      in.remove_prefix(4 + len);
      if (r.tx_instant + window_micros_ < now_micros) continue;
      Remember(id, r);
    }
    ExpireLocked(now_micros);
    for (const auto& [at, id] : order_) {
      auto it = done_.find(id);
      if (it != done_.end()) kept += EncodeRecord(id, it->second);
    }
  }
  // Rewrite compacted, atomically.
  const std::string tmp = path_ + ".tmp";
  FILE* out = fopen(tmp.c_str(), "wb");
  if (out == nullptr) {
    return absl::UnavailableError(StrCat("cannot write ", tmp));
  }
  const bool ok = fwrite(kept.data(), 1, kept.size(), out) == kept.size() &&
                  fflush(out) == 0;
  fclose(out);
  std::error_code ec;
  if (ok) std::filesystem::rename(tmp, path_, ec);
  if (!ok || ec) {
    return absl::UnavailableError(StrCat("cannot write ", path_));
  }
  absl::MutexLock lock(&file_mu_);
  file_ = fopen(path_.c_str(), "ab");
  if (file_ == nullptr) {
    return absl::UnavailableError(StrCat("cannot append to ", path_));
  }
  return absl::OkStatus();
}

void RequestLedger::Remember(const std::string& id, const RecordedTx& result) {
  auto [it, inserted] = done_.insert_or_assign(id, result);
  (void)it;
  order_.emplace_back(result.tx_instant, id);
  while (done_.size() > max_entries_ && !order_.empty()) {
    auto& [at, old] = order_.front();
    auto found = done_.find(old);
    if (found != done_.end() && found->second.tx_instant == at) {
      done_.erase(found);
    }
    order_.pop_front();
  }
}

void RequestLedger::ExpireLocked(int64_t now_micros) {
  while (!order_.empty() &&
         order_.front().first + window_micros_ < now_micros) {
    auto& [at, old] = order_.front();
    auto found = done_.find(old);
    if (found != done_.end() && found->second.tx_instant == at) {
      done_.erase(found);
    }
    order_.pop_front();
  }
}

RequestLedger::Begin RequestLedger::Start(const std::string& id,
                                          int64_t now_micros,
                                          RecordedTx* recorded, Waiter waiter) {
  absl::MutexLock lock(&mu_);
  ExpireLocked(now_micros);
  if (auto it = done_.find(id); it != done_.end()) {
    *recorded = it->second;
    return Begin::kRecorded;
  }
  if (auto it = in_flight_.find(id); it != in_flight_.end()) {
    it->second.push_back(std::move(waiter));
    return Begin::kWaiting;
  }
  in_flight_.emplace(id, std::vector<Waiter>());
  return Begin::kOwner;
}

void RequestLedger::Complete(const std::string& id, const RecordedTx& result,
                             bool persist) {
  if (persist) {
    const std::string record = EncodeRecord(id, result);
    absl::MutexLock lock(&file_mu_);
    if (file_ != nullptr) {
      // Into the page cache before the client hears of the commit, so a
      // process crash keeps it; fsync would double the commit's cost.
      if (fwrite(record.data(), 1, record.size(), file_) != record.size() ||
          fflush(file_) != 0) {
        // The id is in the database anyway; only the tempids would be lost.
        clearerr(file_);
      }
    }
  }
  std::vector<Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    Remember(id, result);
    auto it = in_flight_.find(id);
    if (it != in_flight_.end()) {
      waiters = std::move(it->second);
      in_flight_.erase(it);
    }
  }
  for (Waiter& w : waiters) w(result);
}

void RequestLedger::Fail(const std::string& id, const absl::Status& status) {
  std::vector<Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    auto it = in_flight_.find(id);
    if (it != in_flight_.end()) {
      waiters = std::move(it->second);
      in_flight_.erase(it);
    }
  }
  for (Waiter& w : waiters) w(status);
}

size_t RequestLedger::size() const {
  absl::MutexLock lock(&mu_);
  return done_.size();
}

}  // namespace mentat::server
