#ifndef MENTAT_CLIENT_ARENA_LEASE_H_
#define MENTAT_CLIENT_ARENA_LEASE_H_

#include <google/protobuf/arena.h>

namespace mentat::client {

// A protobuf arena lent to one call, for the messages it parses, from a
// pool kept by the calling thread. Parsing an answer onto an arena costs
// one bump of a pointer per Row and Value instead of a heap object each,
// and the whole answer is freed at once.
//
// Each arena keeps its first block (kFirstBlockBytes) across calls, so an
// answer that fits in it allocates nothing; the blocks a bigger answer
// adds are freed by Reset and when the lease ends. A call made inside
// another call's callback on the same thread gets an arena of its own.
//
// Not thread-safe: a lease is used and ended on the thread that took it.
class ArenaLease {
 public:
  static constexpr size_t kFirstBlockBytes = 64 * 1024;

  // Takes an arena from this thread's pool (a new one when all are lent).
  ArenaLease();
  // Reset(), and the arena goes back to the thread's pool.
  ~ArenaLease();
  ArenaLease(const ArenaLease&) = delete;
  ArenaLease& operator=(const ArenaLease&) = delete;

  google::protobuf::Arena* arena() const;

  // Destroys everything allocated on the arena (messages parsed onto it
  // must not be used after), keeping its first block.
  void Reset();

  struct Slot;

 private:
  Slot* slot_;
};

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_ARENA_LEASE_H_
