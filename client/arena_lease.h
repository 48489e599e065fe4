#ifndef MENTAT_CLIENT_ARENA_LEASE_H_
#define MENTAT_CLIENT_ARENA_LEASE_H_

#include <google/protobuf/arena.h>

#include <cstddef>

#include "mentat/v1/mentat.pb.h"

namespace mentat::client {

// A protobuf arena lent to one call, for the messages it parses, from a
// pool kept by the calling thread. Parsing an answer onto an arena costs
// a bump of a pointer per Row and Value instead of a heap object each,
// and the whole answer is freed at once.
//
// Each arena keeps its first block (kFirstBlockBytes) and one
// QueryResponse across calls: a query's answer is parsed into the Rows and
// Values earlier answers left there (protobuf's Clear keeps them for
// reuse), so an answer no bigger than those before it allocates nothing.
// Recycle() drops all that once the arena holds more than kKeepBytes, so
// one huge answer does not stay pinned to the thread. A call made inside
// another call's callback on the same thread gets an arena of its own.
//
// Not thread-safe: a lease is used and ended on the thread that took it.
class ArenaLease {
 public:
  static constexpr size_t kFirstBlockBytes = 64 * 1024;
  static constexpr size_t kKeepBytes = 1024 * 1024;

  // Takes an arena from this thread's pool (a new one when all are lent).
  ArenaLease();
  // Recycle(), and the arena goes back to the thread's pool.
  ~ArenaLease();
  ArenaLease(const ArenaLease&) = delete;
  ArenaLease& operator=(const ArenaLease&) = delete;

  google::protobuf::Arena* arena() const;

  // The arena's QueryResponse, holding the last answer parsed into it
  // (parsing clears it first).
  v1::QueryResponse* query_response();

  // Called when nothing parsed onto the arena is in use any more: frees
  // what the arena holds (the QueryResponse too) if that is over
  // kKeepBytes, keeping its first block.
  void Recycle();

  struct Slot;

 private:
  Slot* slot_;
};

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_ARENA_LEASE_H_
