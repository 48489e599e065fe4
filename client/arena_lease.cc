#include "arena_lease.h"

#include <memory>
#include <vector>

namespace mentat::client {

struct ArenaLease::Slot {
  Slot() : first_block(new char[kFirstBlockBytes]) {
    google::protobuf::ArenaOptions options;
    options.initial_block = first_block.get();
    options.initial_block_size = kFirstBlockBytes;
    // A big answer (a stream's batch of a thousand rows) grows the arena
    // in few steps.
    options.start_block_size = kFirstBlockBytes;
    options.max_block_size = kKeepBytes;
    arena = std::make_unique<google::protobuf::Arena>(options);
  }
  // Declared first: the arena must be destroyed before the block it uses.
  std::unique_ptr<char[]> first_block;
  std::unique_ptr<google::protobuf::Arena> arena;
  v1::QueryResponse* query_response = nullptr;  // on `arena`
};

namespace {

// The arenas of this thread not lent now; they live as long as the thread.
std::vector<std::unique_ptr<ArenaLease::Slot>>& IdleSlots() {
  thread_local std::vector<std::unique_ptr<ArenaLease::Slot>> idle;
  return idle;
}

}  // namespace

ArenaLease::ArenaLease() {
  std::vector<std::unique_ptr<Slot>>& idle = IdleSlots();
  if (idle.empty()) {
    slot_ = new Slot();
  } else {
    slot_ = idle.back().release();
    idle.pop_back();
  }
}

ArenaLease::~ArenaLease() {
  Recycle();
  IdleSlots().emplace_back(slot_);
}

google::protobuf::Arena* ArenaLease::arena() const {
  return slot_->arena.get();
}

v1::QueryResponse* ArenaLease::query_response() {
  if (slot_->query_response == nullptr) {
    slot_->query_response =
        google::protobuf::Arena::CreateMessage<v1::QueryResponse>(arena());
  }
  return slot_->query_response;
}

void ArenaLease::Recycle() {
  if (slot_->arena->SpaceAllocated() <= kKeepBytes) return;
  slot_->arena->Reset();
  slot_->query_response = nullptr;
}

}  // namespace mentat::client
