// Batch keeps its values for the thread's next batch, within bounds.

#include "execution/batch.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>

namespace mentat::query::execution {
namespace {

using storage::Value;
using storage::ValueType;

std::string Text(size_t n, char c) { return std::string(n, c); }

TEST_CASE("batch: a destroyed batch's values serve the thread's next one") {
  Batch::ReleaseThreadSpares();
  {
    Batch first(2, 16);
    first.Append()[1].AssignText(ValueType::kString, Text(100, 'a'));
  }
  // One row of two values, kept.
  CHECK(Batch::ThreadSpareCells() == 2);
  Batch second(2, 16);
  Value* row = second.Append();
  CHECK(Batch::ThreadSpareCells() == 0);
  // The row is the first batch's: its text buffer is there to write into
  // (a new value's holds 15 bytes inline).
  CHECK(row[1].text_capacity() >= 100);
  row[1].AssignText(ValueType::kString, Text(60, 'b'));
  CHECK(row[1].text() == Text(60, 'b'));

  SUBCASE("rows grow past the spare's") {
    for (int i = 0; i < 100; ++i) {
      Value* r = second.Append();
      r[0].AssignInt(ValueType::kLong, i);
      r[1].AssignInt(ValueType::kRef, i + 1);
    }
    REQUIRE(second.size() == 101);
    CHECK(second.row(100)[0].as_long() == 99);
    CHECK(second.row(100)[1].as_ref() == 100);
    CHECK(second.row(0)[1].text() == Text(60, 'b'));
  }
  SUBCASE("a batch of another width takes the values as its own rows") {
    second.Clear();
    { Batch done = std::move(second); }
    Batch narrow(1, 16);
    narrow.Append();
    narrow.Append()->AssignText(ValueType::kKeyword, "state/open");
    CHECK(narrow.row(1)[0].text() == "state/open");
    CHECK(narrow.row(1)[0].type() == ValueType::kKeyword);
  }
}

TEST_CASE("batch: spares keep no large text and no more than the limit") {
  Batch::ReleaseThreadSpares();
  {
    Batch big_text(1, 4);
    big_text.Append()->AssignText(ValueType::kString,
                                  Text(Batch::kMaxSpareText + 1, 'x'));
  }
  CHECK(Batch::ThreadSpareCells() == 1);
  {
    Batch next(1, 4);
    // The buffer was freed before the value was kept.
    CHECK(next.Append()->text_capacity() <= Batch::kMaxSpareText);
  }
  SUBCASE("rows cleared, truncated or popped before count") {
    Batch::ReleaseThreadSpares();
    {
      Batch b(1, 16);
      for (int i = 0; i < 6; ++i) b.Append();
      b.row(5)->AssignText(ValueType::kString,
                           Text(Batch::kMaxSpareText + 1, 'c'));
      b.row(2)->AssignText(ValueType::kString,
                           Text(Batch::kMaxSpareText + 1, 'p'));
      b.Truncate(3);
      b.PopBack();
      b.Clear();
      b.Append();
    }
    Batch next(1, 16);
    for (int i = 0; i < 6; ++i) {
      CHECK(next.Append()->text_capacity() <= Batch::kMaxSpareText);
    }
  }
  Batch::ReleaseThreadSpares();
  {
    // More values than a thread keeps: freed with the batch.
    Batch huge(1, Batch::kMaxSpareCells + 1);
    for (size_t i = 0; i <= Batch::kMaxSpareCells; ++i) huge.Append();
  }
  CHECK(Batch::ThreadSpareCells() == 0);
}

TEST_CASE("batch: moves carry the rows; a thread's spares are its own") {
  Batch::ReleaseThreadSpares();
  Batch a(3, 8);
  a.Append()[0].AssignText(ValueType::kKeyword, "state/open");
  Batch b = std::move(a);
  REQUIRE(b.size() == 1);
  CHECK(b.row(0)[0].text() == "state/open");
  CHECK(a.empty());
  a = std::move(b);
  REQUIRE(a.size() == 1);
  CHECK(a.row(0)[0].text() == "state/open");
  CHECK(Batch::ThreadSpareCells() == 0);
  // Assigned over, a batch keeps the values it held.
  a = Batch(3, 8);
  CHECK(Batch::ThreadSpareCells() == 3);

  size_t elsewhere_before = 1;
  size_t elsewhere_after = 0;
  std::thread([&] {
    elsewhere_before = Batch::ThreadSpareCells();
    {
      Batch there(1, 4);
      there.Append();
    }
    elsewhere_after = Batch::ThreadSpareCells();
  }).join();
  CHECK(elsewhere_before == 0);
  CHECK(elsewhere_after == 1);
  CHECK(Batch::ThreadSpareCells() == 3);
}

}  // namespace
}  // namespace mentat::query::execution
