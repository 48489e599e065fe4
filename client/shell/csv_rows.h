#ifndef MENTAT_CLIENT_SHELL_CSV_ROWS_H_
#define MENTAT_CLIENT_SHELL_CSV_ROWS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mentat::cli {

// CSV as RFC 4180 writes it: fields separated by commas, a field in double
// quotes may hold commas, line breaks and doubled quotes (""), and a record
// ends at a line break outside quotes. Feed it the file's lines (with
// their line breaks) in order.
class CsvRecordReader {
 public:
  // Adds one line. True when a record is complete (then take it with
  // TakeRecord); false while a quoted field goes on to the next line.
  // Errors: a quote inside an unquoted field, text after a closing quote.
  [[nodiscard]] absl::StatusOr<bool> Feed(std::string_view line,
                                          uint32_t line_no);
  // The complete record's fields, and the line it began on.
  std::vector<std::string> TakeRecord();
  uint32_t record_line() const { return record_line_; }
  // True while a quoted field is open (at the end of the file: an error).
  bool in_quotes() const { return in_quotes_; }

 private:
  std::vector<std::string> fields_;
  std::string field_;
  bool in_quotes_ = false;
  bool quoted_ = false;  // the current field began with a quote
  bool after_quote_ = false;
  bool started_ = false;  // the record has a character or a field
  uint32_t record_line_ = 0;
};

// How a CSV file's columns become attributes: from its header row (each
// name an attribute, with or without its leading colon) and `--map
// COLUMN=TARGET` options, where TARGET is
//   :ns/attr              the cell is the attribute's value, read by the
//                         attribute's value type;
//   :ns/ref->:ns/unique   the cell is the value of a unique attribute of
//                         the entity the ref points to (a lookup ref);
//   (nothing)             the column is skipped.
// A :db/id column gives each row a tempid (rows refer to one another by
// it within one transaction). Cells of a ref column without a lookup
// attribute are EDN: an entity id, an ident keyword or a lookup ref.
class CsvMapping {
 public:
  // `types`: the database's attributes, ident (no colon) to value type
  // (":db.type/long"...). `map`: COLUMN=TARGET options, in order.
  [[nodiscard]] static absl::StatusOr<CsvMapping> Make(
      const std::vector<std::string>& header,
      const std::vector<std::pair<std::string, std::string>>& map,
      const std::map<std::string, std::string>& types);

  // One row as an EDN entity map, appended to *out. Empty cells leave
  // their attribute out; a row of only empty cells appends nothing and
  // returns false. Errors name the column, its attribute and the cell.
  [[nodiscard]] absl::StatusOr<bool> AppendEntity(
      const std::vector<std::string>& row, std::string* out) const;

  size_t columns() const { return columns_.size(); }

 private:
  struct Column {
    std::string name;     // as the header spells it
    std::string attr;     // ident without the colon; empty: skipped
    std::string type;     // the value's type (of `lookup` for a lookup)
    std::string lookup;   // the lookup ref's unique attribute, or empty
    bool tempid = false;  // the :db/id column
  };
  std::vector<Column> columns_;
};

// "COLUMN=TARGET" split at its first '='; an error without one.
[[nodiscard]] absl::StatusOr<std::pair<std::string, std::string>>
ParseColumnMap(std::string_view option);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_CSV_ROWS_H_
