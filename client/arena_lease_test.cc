// The arenas a thread lends its calls: nested leases do not share, an
// ended lease's arena and QueryResponse are reused, and a big answer is not
// kept.

#include "arena_lease.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>

namespace mentat::client {
namespace {

void AddRows(v1::QueryResponse* response, int rows) {
  for (int i = 0; i < rows; ++i) {
    v1::Row* row = response->add_rows();
    row->add_values()->set_long_value(i);
    row->add_values()->set_string_value("a value longer than fifteen bytes");
  }
}

TEST_CASE("arena lease: nested leases get arenas of their own") {
  ArenaLease outer;
  v1::QueryResponse* outer_response = outer.query_response();
  AddRows(outer_response, 3);
  {
    ArenaLease inner;
    CHECK(inner.arena() != outer.arena());
    CHECK(inner.query_response() != outer_response);
    AddRows(inner.query_response(), 5);
  }
  // The inner lease's end left the outer answer alone.
  REQUIRE(outer_response->rows_size() == 3);
  CHECK(outer_response->rows(2).values(0).long_value() == 2);
  CHECK(outer_response->rows(2).values(1).string_value() ==
        "a value longer than fifteen bytes");
}

TEST_CASE("arena lease: the next call on the thread reuses the message") {
  google::protobuf::Arena* arena = nullptr;
  v1::QueryResponse* response = nullptr;
  const v1::Row* first_row = nullptr;
  {
    ArenaLease lease;
    arena = lease.arena();
    response = lease.query_response();
    CHECK(response->GetArena() == arena);
    AddRows(response, 100);
    first_row = &response->rows(0);
  }
  ArenaLease again;
  CHECK(again.arena() == arena);
  // The same message; cleared (as parsing does first), it hands out the
  // Rows the last answer left instead of new ones.
  REQUIRE(again.query_response() == response);
  response->Clear();
  CHECK(response->rows_size() == 0);
  CHECK(response->add_rows() == first_row);
  // Another thread has arenas of its own.
  google::protobuf::Arena* other = nullptr;
  std::thread([&] {
    ArenaLease lease;
    other = lease.arena();
  }).join();
  CHECK(other != arena);
}

TEST_CASE("arena lease: an answer over kKeepBytes is not kept") {
  ArenaLease lease;
  v1::QueryResponse* big = lease.query_response();
  AddRows(big, 30000);
  CHECK(lease.arena()->SpaceAllocated() > ArenaLease::kKeepBytes);
  lease.Recycle();
  CHECK(lease.arena()->SpaceAllocated() <= ArenaLease::kFirstBlockBytes);
  v1::QueryResponse* fresh = lease.query_response();
  CHECK(fresh->rows_size() == 0);
  // A small one is kept.
  AddRows(fresh, 10);
  lease.Recycle();
  CHECK(lease.query_response() == fresh);
}

}  // namespace
}  // namespace mentat::client
